"""The determinism and concurrency contracts.

Determinism: the bits depend only on the input values, shape, layout and
dtype: forced grids (CUDA) or work-piece counts and thread counts (CPU),
repeated runs and pointer alignment must not change them.
Concurrency: several streams, several Python threads and CUDA graph capture
and replay, each result checked against the reference.
"""
import threading

import pytest
import torch

from conftest import DEVICES, HAS_CUDA, assert_matches, cuda, random_tensor, wide_chunk_elements

# (shape, dim): full, short rows, long rows (multi-chunk finish), columns with
# one and several chunks, a 3-D column problem.
PROBLEMS = [((3_000_017,), None), ((1000, 700), [1]), ((9, 300_001), [1]), ((700, 1000), [0]),
            ((20000, 64), [0]), ((33, 2000, 35), [1]), ((3000, 40), [0]), ((4099, 130), [0])]
GRIDS = [1, 2, 7, 64, 1000, 0]


def _raw(t):
    """The result's bytes, so -0.0 vs 0.0 and NaN payloads count."""
    return t.detach().contiguous().cpu().view(-1).view(torch.uint8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("shape,dim", PROBLEMS)
def test_bits_independent_of_grid(device, dtype, shape, dim):
    x = random_tensor(shape, dtype, device, seed=12)
    first = torch.ops.redux._sum_grid(x, dim, False, None, 0)
    assert_matches(first, x, dim)
    for grid in GRIDS:
        for _ in range(2):
            assert torch.equal(_raw(torch.ops.redux._sum_grid(x, dim, False, None, grid)), _raw(first)), f"grid={grid}"
    assert torch.equal(_raw(torch.ops.redux.sum(x, dim)), _raw(first))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_bits_independent_of_grid_both_finishes(device, dtype):
    # A CUDA full sum up to 256 MiB of input takes the wide tree, finished by
    # polled slots (a ticket for int64); above, chunks of 256 lanes on
    # resident blocks with a ticket (csrc/cuda/chunk_plan.cuh): a size on each
    # side of that line, each under forced grids, twice (a slot or counter
    # left set would spoil the next call). The CPU, which has no such line,
    # keeps its forced work-piece counts at 64 MiB (CI machines have 24 GiB).
    line = (256 << 20) if device == "cuda" else (64 << 20)
    per = torch.empty((), dtype=dtype).element_size()
    for n in (line // per - 1001, line // per + 1001):
        x = random_tensor((n,), dtype, device, seed=16)
        first = torch.ops.redux._sum_grid(x, None, False, None, 0)
        assert_matches(first, x)
        for grid in (1, 7, 1000, 0):
            for _ in range(2):
                got = torch.ops.redux._sum_grid(x, None, False, None, grid)
                assert torch.equal(_raw(got), _raw(first)), f"n={n} grid={grid}"


@cuda
@pytest.mark.parametrize("dtype,out", [(torch.float32, None), (torch.float64, None), (torch.float16, None),
                                       (torch.bfloat16, torch.float32), (torch.float32, torch.float64)])
def test_bits_of_long_wide_sums_independent_of_finisher(dtype, out):
    # A wide-tree grid of more than 8 waves of chunk blocks gets a dedicated
    # finishing block (csrc/cuda/sum_chunks.cu, kWideDedicatedWaves); shorter
    # ones finish in their last chunk block, forced grids in their last
    # block after a grid-stride loop. 8000 chunks is a long grid on any GPU
    # of fewer than 500 SMs, 300 a short one: the same bits either way,
    # aligned and not (a short last chunk), twice (each finish empties the
    # slots the next call polls).
    per_chunk = wide_chunk_elements(dtype)
    for chunks in (8000, 300):
        for skip in (0, 1):
            n = chunks * per_chunk - 5
            x = random_tensor((n + skip,), dtype, "cuda", seed=19)[skip:]
            first = torch.ops.redux._sum_grid(x, None, False, out, 0)
            assert_matches(first, x, dtype=out)
            for grid in (0, 1000, 0, 7):
                got = torch.ops.redux._sum_grid(x, None, False, out, grid)
                assert torch.equal(_raw(got), _raw(first)), f"chunks={chunks} skip={skip} grid={grid}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,out", [(torch.float32, None), (torch.float64, None), (torch.int64, None),
                                       (torch.float16, torch.float32), (torch.bfloat16, torch.float32)])
def test_bits_of_short_full_sums_independent_of_grid(device, dtype, out):
    # A CUDA full sum of at most 256 vectors runs the wide tree of one chunk
    # on 256 threads (sum_wide_short_kernel); a forced grid runs it on the
    # 1024-thread kernel: the same bits at the sizes around 256 vectors and
    # the chunk's end, aligned and not (a view one element in). fp16 and
    # bf16 sum into fp32 here, where the order of the adds shows in the bits.
    vec = 16 // torch.empty((), dtype=dtype).element_size()
    sizes = [1, vec - 1, vec + 1, 255 * vec + 1, 256 * vec - 1, 256 * vec, 256 * vec + 1, 1024 * vec,
             2048 * vec - 1, 2048 * vec]
    seen_order = False
    for n in sizes:
        for skip in (0, 1):
            x = random_tensor((n + skip,), dtype, device, seed=18)[skip:]
            first = torch.ops.redux._sum_grid(x, None, False, out, 0)
            assert_matches(first, x, dtype=out)
            for grid in (1, 3, 0):
                got = torch.ops.redux._sum_grid(x, None, False, out, grid)
                assert torch.equal(_raw(got), _raw(first)), f"n={n} skip={skip} grid={grid}"
            if out is not None and n > 64 and not seen_order:
                acc = torch.zeros((), dtype=out)
                for v in x.cpu().to(out):
                    acc += v
                seen_order = not torch.equal(acc, first.cpu())
    if out is not None:
        assert seen_order, "a sequential sum gave our bits at every size: these sizes do not show the tree"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,out", [(torch.float32, None), (torch.float64, None), (torch.float16, None),
                                       (torch.bfloat16, None), (torch.int64, None), (torch.float32, torch.float64),
                                       (torch.bfloat16, torch.float32)])
def test_bits_independent_of_grid_both_column_finishes(device, dtype, out):
    # Columns cut into 2..8 chunks are finished inside a thread block cluster
    # on sm_90+ (csrc/cuda/sum_cols.cu) when the grid is whole clusters, else
    # by the ticket. Grid 1 is never whole clusters, 840 always is (840 =
    # lcm(2..8)), 0 lets the device choose (clusters on an H100/H200). These
    # shapes cut into 2, 3, 5, 7 and 8 chunks (7: runs of unequal length in
    # the finish). Twice each: a finish that left state behind would show.
    problems = [((700, 1000), [0]), ((33, 2000, 35), [1]), ((3000, 40), [0]), ((1800, 1024), [0]),
                ((2048, 1024), [0]), ((4, 1800, 300), [1])]
    for shape, dim in problems:
        x = random_tensor(shape, dtype, device, seed=17)
        first = torch.ops.redux._sum_grid(x, dim, False, out, 0)
        assert_matches(first, x, dim, dtype=out)
        for grid in (1, 840, 7, 0):
            for _ in range(2):
                got = torch.ops.redux._sum_grid(x, dim, False, out, grid)
                assert torch.equal(_raw(got), _raw(first)), f"shape={shape} grid={grid}"


def test_cpu_bits_independent_of_thread_count():
    x = random_tensor((3_000_017,), torch.float32, "cpu", seed=13)
    y = random_tensor((300, 5000), torch.float32, "cpu", seed=14)
    old = torch.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3):
            torch.set_num_threads(threads)
            results.append((_raw(torch.ops.redux.sum(x)), _raw(torch.ops.redux.sum(y, [1])),
                            _raw(torch.ops.redux.sum(y, [0]))))
    finally:
        torch.set_num_threads(old)
    for r in results[1:]:
        assert all(torch.equal(a, b) for a, b in zip(r, results[0]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_bits_independent_of_alignment(device, dtype):
    # The same values at every element offset 0..8 of a buffer: 16-byte
    # vector loads are used only where aligned, and must not change the bits.
    # Columns: one chunk (300, 96); several, finished by several threads per
    # column (20000, 64), (3000, 40).
    for shape, dim in [((100_003,), None), ((37, 1003), [1]), ((37, 1024), [1]), ((300, 96), [0]), ((5, 70001), [1]),
                       ((20000, 64), [0]), ((3000, 40), [0])]:
        n = 1
        for s in shape:
            n *= s
        vals = random_tensor((n,), dtype, device, seed=15)
        ref = None
        for off in range(9):
            buf = torch.empty(n + 16, dtype=dtype, device=device)
            buf[off:off + n].copy_(vals)
            x = buf[off:off + n].view(shape)
            r = _raw(torch.ops.redux.sum(x, dim))
            ref = r if ref is None else ref
            assert torch.equal(r, ref), f"shape={shape} offset={off}"


# The CUDA strips tree (csrc/cuda/sum_cols.cu): fp32 columns in whole strips
# of 64 over more than one 256-row chunk, finished from polled slots by
# finishing blocks. Shapes across its edges: one chunk (the tile kernel), a
# short last chunk, 1-3 strips, slices; fp32 and fp64 output (compensated).
STRIP_CASES = [((256, 64), [0]), ((257, 64), [0]), ((300, 128), [0]), ((4097, 192), [0]), ((3, 1000, 64), [1]),
               ((2, 513, 128), [1])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("out", [None, torch.float64])
@pytest.mark.parametrize("shape,dim", STRIP_CASES)
def test_strip_columns_independent_of_grid_and_alignment(device, out, shape, dim):
    x = random_tensor(shape, torch.float32, device, seed=21)
    first = torch.ops.redux._sum_grid(x, dim, False, out, 0)
    assert_matches(first, x, dim, dtype=out)
    for grid in (1, 3, 1000, 0):  # twice at the plan's grid: each finish empties the slots the next polls
        got = torch.ops.redux._sum_grid(x, dim, False, out, grid)
        assert torch.equal(_raw(got), _raw(first)), f"grid={grid}"
    n = x.numel()
    for off in (1, 2, 3):  # the same values 4-12 bytes past a 16-byte boundary: scalar loads
        buf = torch.empty(n + 4, dtype=torch.float32, device=device)
        buf[off:off + n].copy_(x.reshape(-1))
        got = torch.ops.redux.sum(buf[off:off + n].view(shape), dim, False, dtype=out)
        assert torch.equal(_raw(got), _raw(first)), f"offset={off}"


# ---------------- CUDA concurrency ----------------

@cuda
@pytest.mark.cuda
def test_concurrent_streams():
    dev = "cuda"
    streams = [torch.cuda.Stream() for _ in range(8)]
    inputs = [random_tensor(shape, torch.float32, dev, seed=100 + i) for i, (shape, _) in
              enumerate(PROBLEMS * 2)][:8]
    dims = [d for _, d in (PROBLEMS * 2)][:8]
    expected = [torch.ops.redux.sum(x, d) for x, d in zip(inputs, dims)]
    torch.cuda.synchronize()
    for _ in range(20):
        outs = [None] * len(streams)
        for i, s in enumerate(streams):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                outs[i] = [torch.ops.redux.sum(inputs[i], dims[i]) for _ in range(3)]
        torch.cuda.synchronize()
        for i, o in enumerate(outs):
            for r in o:
                assert torch.equal(_raw(r), _raw(expected[i])), f"stream {i}"
    for x, d, e in zip(inputs, dims, expected):
        assert_matches(e, x, d)


@cuda
@pytest.mark.cuda
def test_concurrent_python_threads():
    inputs = [random_tensor(shape, torch.float32, "cuda", seed=200 + i) for i, (shape, _) in enumerate(PROBLEMS)]
    dims = [d for _, d in PROBLEMS]
    expected = [torch.ops.redux.sum(x, d) for x, d in zip(inputs, dims)]
    errors = []

    def worker(k):
        try:
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                for it in range(30):
                    i = (k + it) % len(inputs)
                    r = torch.ops.redux.sum(inputs[i], dims[i])
                    s.synchronize()
                    if not torch.equal(_raw(r), _raw(expected[i])):
                        errors.append((k, it, i))
        except Exception as e:  # surfaced below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@cuda
@pytest.mark.cuda
def test_cuda_graph_capture_and_replay():
    static = [random_tensor(shape, torch.float32, "cuda", seed=300 + i) for i, (shape, _) in enumerate(PROBLEMS)]
    dims = [d for _, d in PROBLEMS]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside capture
        for x, d in zip(static, dims):
            torch.ops.redux.sum(x, d)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [torch.ops.redux.sum(x, d) for x, d in zip(static, dims)]
    for rep in range(5):
        fresh = [random_tensor(x.shape, torch.float32, "cuda", seed=400 + 10 * rep + i) for i, x in enumerate(static)]
        for x, f in zip(static, fresh):
            x.copy_(f)
        g.replay()
        torch.cuda.synchronize()
        for o, f, d in zip(outs, fresh, dims):
            assert_matches(o, f, d)
            assert torch.equal(_raw(o), _raw(torch.ops.redux.sum(f, d)))


@cuda
@pytest.mark.cuda
def test_graph_replayed_beside_eager_calls_on_its_capture_stream():
    # Each stream keeps its own ticket counters; a graph captured on stream s
    # must not take s's (a replay on stream r can run beside eager calls on
    # s). Big multi-block problems, replays and eager calls overlapping.
    x_graph = random_tensor((3_000_017,), torch.float32, "cuda", seed=500)
    rows_graph = random_tensor((9, 300_001), torch.float32, "cuda", seed=501)
    x_eager = random_tensor((3_000_017,), torch.float32, "cuda", seed=502)
    rows_eager = random_tensor((9, 300_001), torch.float32, "cuda", seed=503)
    want = [torch.ops.redux.sum(t, d) for t, d in
            [(x_graph, None), (rows_graph, [1]), (x_eager, None), (rows_eager, [1])]]
    s, r = torch.cuda.Stream(), torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # s gets its own counters before the capture
        torch.ops.redux.sum(x_eager)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        g_full, g_rows = torch.ops.redux.sum(x_graph), torch.ops.redux.sum(rows_graph, [1])
    torch.cuda.synchronize()
    for _ in range(50):
        r.wait_stream(torch.cuda.current_stream())
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(r):
            g.replay()
        with torch.cuda.stream(s):
            e_full, e_rows = torch.ops.redux.sum(x_eager), torch.ops.redux.sum(rows_eager, [1])
        torch.cuda.synchronize()
        got = [g_full, g_rows, e_full, e_rows]
        for a, b in zip(got, want):
            assert torch.equal(_raw(a), _raw(b))


@cuda
@pytest.mark.cuda
def test_no_zeroing_operation_per_call():
    # The stream's ticket counters are left zeroed by every kernel, so after
    # a stream's first call a multi-block sum is one kernel and no memset.
    from torch.profiler import ProfilerActivity, profile
    problems = [(random_tensor((3_000_017,), torch.float32, "cuda", seed=510), None),
                (random_tensor((9, 300_001), torch.float16, "cuda", seed=511), [1]),
                (random_tensor((700, 1000), torch.float32, "cuda", seed=512), [0])]
    outs = [torch.ops.redux.sum(x, d) for x, d in problems]  # first calls on this stream
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            outs = [torch.ops.redux.sum(x, d) for x, d in problems]
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    kernels = [n for n in names if "sum_" in n]
    memsets = [n for n in names if "memset" in n.lower()]
    assert len(kernels) == 9, names
    assert memsets == [], names
    for o, (x, d) in zip(outs, problems):
        assert_matches(o, x, d)


@pytest.mark.skipif(not HAS_CUDA or torch.cuda.device_count() < 2,
                    reason="needs 2 CUDA devices: multi-device test skipped")
@pytest.mark.cuda
def test_two_devices():
    xs = [random_tensor((1_000_003,), torch.float32, f"cuda:{i}", seed=500) for i in range(2)]
    rs = [torch.ops.redux.sum(x) for x in xs]
    assert rs[0].device == xs[0].device and rs[1].device == xs[1].device
    assert torch.equal(_raw(rs[0]), _raw(rs[1]))
