"""Sharded sums on several GPUs: exact mode against the usual ways.

    python bench/distributed.py [--ranks 2] [--iters 20] [--out FILE]
    python bench/distributed.py --device cpu [--ranks 2]   # gloo, small tensors: the host's share

Spawns one process per GPU (NCCL). For each global tensor, sharded on dim 0
(2 x 52,428,800 fp32, and (65536, 4096) fp32) and each reduction, it times
  exact      redux.distributed.sum of the plain shard (a first, small
             all-gather learns the shard lengths, read on the host; then
             unit partials, all-gather, finish)
  exact-dt   the same on a Shard(0) DTensor of the shard, made once: its
             metadata gives the lengths (one collective, no host read)
  dtensor    torch.sum on that DTensor, then full_tensor()
  allreduce  torch.sum of the local shard, then all_reduce (all_gather of
             the outputs where dim 0 is kept)
and prints the median time per call over --iters (CUDA events, after a
barrier) three ways: one call on an idle GPU (the host's work counts in
full), one of 10 calls issued back to back (as in a model's step), and the
replay of a CUDA graph of one call (the GPU's work alone; exact mode with
known lengths and the all-reduce), each also as a ratio to the all-reduce;
the bytes each rank sends, and whether the result has the bits of
torch.ops.redux.sum, and of torch.sum, of the whole tensor on one GPU.
"""
import argparse
import datetime
import os
import statistics
import tempfile
import time

import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's redux

# NVLink multicast stays off on shared hosts (device/KINDS.md).
for key, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ.setdefault(key, value)

CASES = [  # (name, global shape, dim)
    ("2 x 52,428,800", (2 * 52428800,), None),
    ("(65536, 4096) full", (65536, 4096), None),
    ("(65536, 4096) dim 0", (65536, 4096), [0]),
    ("(65536, 4096) dim 1", (65536, 4096), [1]),
]
# On the CPU (gloo): small tensors, whose time is mostly the host's work
# per call, which exact mode also pays on GPUs.
CPU_CASES = [
    ("65,536", (65536,), None),
    ("(256, 1024) full", (256, 1024), None),
    ("(256, 1024) dim 0", (256, 1024), [0]),
    ("(256, 1024) dim 1", (256, 1024), [1]),
]


def gpu_us(run, iters):
    """Median us of `run()` between two CUDA events, each on idle GPUs
    (barrier, sync first); also the last run's return value."""
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = run()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return statistics.median(times), out


def timed(fn, iters, device):
    """Median us of one call started on idle devices: the host's work
    before the first kernel counts in full."""
    if device != "cpu":
        return gpu_us(fn, iters)
    times = []
    for _ in range(iters):
        dist.barrier()
        start = time.perf_counter_ns()
        out = fn()
        times.append((time.perf_counter_ns() - start) / 1e3)
    return statistics.median(times), out


def timed_in_a_row(fn, iters, calls=10):
    """Median us per call of `calls` calls issued back to back, as a model's
    step issues them: the host runs ahead, its work hides behind the GPU's
    where the GPU's is longer."""
    def in_a_row():
        for _ in range(calls):
            fn()
    return gpu_us(in_a_row, iters)[0] / calls


def timed_graph(fn, iters):
    """Median us of one replay of a CUDA graph of one call: the GPU's work
    alone, no host; also shows the call has no host synchronisation (the
    capture fails on one)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return gpu_us(graph.replay, iters)[0]


# Captured in a CUDA graph: the methods with no host synchronisation (exact
# mode on plain shards learns the other ranks' lengths first).
IN_GRAPHS = ("exact-dt", "allreduce")


def methods(local, dim, mesh, world, shape, stride):
    import redux.distributed as rd
    from torch.distributed.tensor import DTensor, Shard

    def exact():
        return rd.sum(local, dim)

    # made once, as a model holds its DTensors: from_local is not the sum's cost
    dx = DTensor.from_local(local, mesh, [Shard(0)], run_check=False, shape=shape, stride=stride)

    def exact_dtensor():  # the DTensor's metadata gives the shard lengths: no shape check round
        return rd.sum(dx, dim)

    def dtensor():
        return (torch.sum(dx, dim) if dim else torch.sum(dx)).full_tensor()

    def allreduce():
        part = torch.sum(local, dim) if dim else torch.sum(local)
        if dim == [1]:  # dim 0 kept: the outputs are sharded, gather them
            parts = [torch.empty_like(part) for _ in range(world)]
            dist.all_gather(parts, part)
            return torch.cat(parts)
        dist.all_reduce(part)
        return part

    return {"exact": exact, "exact-dt": exact_dtensor, "dtensor": dtensor, "allreduce": allreduce}


def sent_bytes(name, local, dim, world, shape):
    """What one rank sends (analytic): partials or outputs, not the tensor."""
    import redux.distributed as rd
    out = torch.sum(local, dim) if dim else torch.sum(local)
    if name.startswith("exact"):
        view, layout = torch.ops.redux._sum_sharding(local, list(shape), dim, None)
        if layout[rd._ROLE] == 1:  # dim 0 kept: each rank's outputs are gathered
            return out.numel() * out.element_size()
        if layout[rd._FAMILY] < 0 or layout[rd._UNITS] < 2:  # one unit: the shards are gathered
            return local.numel() * local.element_size()
        return layout[rd._OUTER] * (layout[rd._UNITS] // world) * layout[rd._INNER] * layout[rd._ACC]
    return out.numel() * out.element_size()


def rank_main(rank, world, init_file, iters, out_path, device):
    if device == "cuda":
        torch.cuda.set_device(rank)
        dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=300), device_id=torch.device("cuda", rank))
    else:
        torch.set_num_threads(1)  # one core a rank
        dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=300))
    import redux  # noqa: F401
    from torch.distributed.tensor import init_device_mesh
    mesh = init_device_mesh(device, (world,))
    lines = []
    for name, shape, dim in CASES if device == "cuda" else CPU_CASES:
        g = torch.Generator(device=device).manual_seed(1)
        whole = torch.randn(shape, generator=g, device=device).add_(3)
        one_device = torch.ops.redux.sum(whole, dim)
        torch_one_device = torch.sum(whole, dim) if dim else torch.sum(whole)
        # DTensor's Shard(0) cut (torch.chunk's), for every method: with
        # tensor_split's cut and no global shape given, from_local infers
        # another global shape on each rank when the rows do not divide
        # evenly, and the ranks' collectives no longer match (3 ranks hung)
        step = -(-whole.shape[0] // world)
        local = whole[rank * step: (rank + 1) * step].contiguous()
        global_shape, global_stride = whole.shape, whole.stride()
        del whole
        rows, base = [], {}
        for label, fn in methods(local, dim, mesh, world, global_shape, global_stride).items():
            fn()  # warm-up (plans, NCCL communicators)
            us, out = timed(fn, iters, device)
            in_a_row = timed_in_a_row(fn, iters) if device == "cuda" else None
            graph = timed_graph(fn, iters) if device == "cuda" and label in IN_GRAPHS else None
            out = out.to_local() if hasattr(out, "to_local") else out
            same = [out.shape == ref.shape and torch.equal(out.to(ref.dtype), ref) for ref in (one_device, torch_one_device)]
            rows.append((label, (us, in_a_row, graph), sent_bytes(label, local, dim, world, global_shape), same))
            if label == "allreduce":
                base = {i: v for i, v in enumerate((us, in_a_row, graph))}
        for label, times, sent, same in rows:
            cells = "".join("           -" if t is None else f"{t:7.1f} {t / base[i]:4.2f}" for i, t in enumerate(times))
            lines.append(f"{name:<20} {label:<9} {cells} {sent:>10,} " + " ".join(f"{'yes' if s else 'no':>5}" for s in same))
    if rank == 0:
        where = f"{world} x {torch.cuda.get_device_name()}" if device == "cuda" else f"{world} CPU ranks (gloo)"
        timings = ("one call on an idle GPU, one of 10 back to back, a CUDA graph's replay" if device == "cuda"
                   else "one call (the other two need a GPU)")
        text = [f"{where}, torch {torch.__version__}, median of {iters}; us and x allreduce for: {timings}",
                f"{'tensor':<20} {'method':<9} {'one call':>12}{'in a row':>12}{'graph':>12} {'B sent':>10} "
                f"{'=redux':>5} {'=torch':>5}"] + lines
        print("\n".join(text), flush=True)
        if out_path:
            with open(out_path, "w") as f:
                f.write("\n".join(text) + "\n")
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=2, help="processes, one GPU each (default 2)")
    ap.add_argument("--iters", type=int, default=20, help="timed calls per method (default 20)")
    ap.add_argument("--out", default="", help="also write the table to this file")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cuda: NCCL, one GPU a rank (default); cpu: gloo, small tensors")
    args = ap.parse_args()
    if args.device == "cuda" and torch.cuda.device_count() < args.ranks:
        raise SystemExit(f"needs {args.ranks} GPUs, this machine has {torch.cuda.device_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(rank_main, args=(args.ranks, os.path.join(tmp, "init"), args.iters, args.out, args.device),
                 nprocs=args.ranks)


if __name__ == "__main__":
    main()
