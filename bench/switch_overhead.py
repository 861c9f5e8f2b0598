"""What does the model switch add to each reduction of a small model's
step, on the host, and to each part of the step?

    python bench/switch_overhead.py                 # CUDA when there is a GPU, else the CPU
    python bench/switch_overhead.py --device cpu

A launch-bound step (bench/llama_step.py's model: dim 128, 2 layers) waits
on the host, not the GPU, so what counts is host time per call. For each
op the model runs, at the model's shapes: microseconds per call, enqueue
only and with the GPU drained, switch off and on (medians of --reps rounds
of --calls calls, same run). Then the step in parts (forward, loss,
backward, clip_grad_norm_, optimizer step): medians of 20 steps, ms.
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's redux
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import redux  # noqa: E402
import llama_step  # noqa: E402


def op_cases(device):
    """The reductions of the model's step, at its shapes (batch 16, seq 64, dim 128, heads 4, vocab 512)."""
    g = torch.Generator(device).manual_seed(0)
    h = torch.randn(16, 64, 128, device=device, generator=g)
    s = torch.randn(16, 4, 64, 64, device=device, generator=g)
    lg = torch.randn(1024, 512, device=device, generator=g)
    t = torch.randint(0, 512, (1024,), device=device, generator=g)
    ps = [torch.randn(128, 384, device=device, generator=g) for _ in range(18)]
    y, ly = s.softmax(-1), lg.log_softmax(-1)
    return {
        "x.pow(2).mean(-1, keepdim)": lambda: h.pow(2).mean(-1, keepdim=True),
        "mean(-1, keepdim)": lambda: h.mean(-1, keepdim=True),
        "sum(-1, keepdim)": lambda: h.sum(-1, keepdim=True),
        "sum([0, 1])": lambda: h.sum([0, 1]),
        "softmax(-1)": lambda: s.softmax(-1),
        "_softmax_backward_data": lambda: torch.ops.aten._softmax_backward_data(s, y, -1, torch.float32),
        "log_softmax(-1)": lambda: lg.log_softmax(-1),
        "_log_softmax_backward_data": lambda: torch.ops.aten._log_softmax_backward_data(lg, ly, -1, torch.float32),
        "nll_loss": lambda: F.nll_loss(ly, t),
        "cross_entropy": lambda: F.cross_entropy(lg, t),
        "_foreach_norm (18 tensors)": lambda: torch._foreach_norm(ps),
    }


def per_call(fn, sync, calls, reps):
    """(enqueue us, drained us) per call: medians over reps rounds of calls calls."""
    for _ in range(calls):
        fn()
    enqueue, drained = [], []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        enqueue.append((t1 - t0) / calls * 1e6)
        drained.append((t2 - t0) / calls * 1e6)
    return statistics.median(enqueue), statistics.median(drained)


def step_parts(args, device, switch, sync, steps=25, warm=5):
    model, opt = llama_step.make(args, device)
    idx, targets = llama_step.batch_of(args, device)
    parts = {}
    with redux.enabled() if switch else llama_step._nothing():
        for i in range(steps):
            sync()
            ts = [time.perf_counter()]
            opt.zero_grad(set_to_none=True)
            logits = model(idx)
            ts.append(time.perf_counter())
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
            ts.append(time.perf_counter())
            loss.backward()
            ts.append(time.perf_counter())
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            ts.append(time.perf_counter())
            opt.step()
            sync()
            ts.append(time.perf_counter())
            if i >= warm:
                for k, name in enumerate(("forward", "loss", "backward", "clip", "optimizer (drained)")):
                    parts.setdefault(name, []).append((ts[k + 1] - ts[k]) * 1e3)
    return {k: statistics.median(v) for k, v in parts.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() and redux.has_cuda_kernels() else "cpu")
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    device = args.device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"switch overhead on {name}, torch {torch.__version__}: us per call, medians of {args.reps} x "
          f"{args.calls} calls (enqueue / drained)")
    print(f"{'op':30s} {'torch':>15s} {'switch':>15s} {'+ enqueue':>10s}")
    for label, fn in op_cases(device).items():
        off = per_call(fn, sync, args.calls, args.reps)
        with redux.enabled():
            on = per_call(fn, sync, args.calls, args.reps)
        print(f"{label:30s} {off[0]:7.1f}/{off[1]:7.1f} {on[0]:7.1f}/{on[1]:7.1f} {on[0] - off[0]:+10.1f}")

    class Model:
        vocab, dim, heads, layers, seq, batch = 512, 128, 4, 2, 64, 16
    off, on = step_parts(Model, device, False, sync), step_parts(Model, device, True, sync)
    print("\nthe step in parts, medians of 20 steps (ms):")
    for k in off:
        print(f"  {k:20s} torch {off[k]:7.2f}  switch {on[k]:7.2f}  {on[k] - off[k]:+6.2f}")
    print(f"  {'total':20s} torch {sum(off.values()):7.2f}  switch {sum(on.values()):7.2f}  "
          f"ratio {sum(on.values()) / sum(off.values()):.3f}")


if __name__ == "__main__":
    main()
