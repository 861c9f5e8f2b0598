"""Every CUDA kernel of redux once, for compute-sanitizer (tests/sanitize.sh):
each family and dtype pair, aligned and misaligned inputs, one and several
chunks, forced grids, the row kernels (moments, sums of squares of each
tensor of a list, exponential sums) at warp and block widths, the
extremes (amax / amin: rows, columns, one pass and segments), the column
sums about a center, the ladder rungs, the read probe and the contest
custom_kernel. Results are checked,
so a run is also a correctness run. Sizes stay small (the sanitizers slow
kernels by 10-100x), but for the long wide grids that only a large input
launches."""
import sys

import torch

import redux
from leaderboard import core

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from conftest import assert_matches, random_tensor, wide_chunk_elements  # noqa: E402

PROBLEMS = [((1,), None), ((1000,), None), ((70_001,), None), ((300_007,), None),  # full, 1 and many chunks
            ((33, 7), [1]), ((17, 1000), [1]), ((5, 40_000), [1]),                   # short rows, long rows
            ((1000, 33), [0]), ((3000, 64), [0]), ((7, 600, 5), [1]), ((64, 2), [0]),  # columns
            # (1800, 256): the strips tree for fp32 input (8 chunks), the cluster finish in 7 chunks
            # (grid 0 on sm_90+) for the others; (3, 700, 128): 3 slices of 2 strips, 3 chunks, the last short
            ((1800, 256), [0]), ((3, 700, 128), [1])]
# Full sums of 8000 wide chunks (32 KB each): a long grid on any GPU of fewer
# than 500 SMs, so the polled kernel with its dedicated finishing block runs
# (csrc/cuda/sum_chunks.cu, kWideDedicatedWaves; test_contracts checks its bits).
LONG_WIDE_CHUNKS = 8000
LONG_WIDE_PAIRS = [(torch.float32, None), (torch.float16, torch.float32), (torch.float32, torch.float64)]
PAIRS = [(torch.float32, None), (torch.float64, None), (torch.float16, None), (torch.bfloat16, None),
         (torch.int64, None), (torch.float16, torch.float32), (torch.bfloat16, torch.float32),
         (torch.float32, torch.float64)]

# Row lengths around the warp-per-row limit (4096 bytes) for the row kernels,
# and those that fill the lanes' registers exactly (the straight-line
# exponential rows: 1024 and 8192 float32, 2048 and 16384 16-bit).
ROW_LENGTHS = (1, 33, 1024, 1025, 2048, 2049, 5000, 8192, 16384)


def check_row_kernels():
    """The moment, sum-of-squares and exponential-sum row kernels on
    aligned and misaligned rows of each dtype, against fp64; the list
    kernel against each tensor's own row. Returns the calls made."""
    count = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        rows = []
        for n in ROW_LENGTHS:
            for off in (0, 1):
                x = random_tensor((3 * n + off,), dtype, "cuda", seed=n + off)[off:].view(3, n)
                ref = x.double()
                var, mean = torch.ops.redux._moment_rows(x, max(n - 1, 1), False, torch.float64)
                assert torch.allclose(mean, ref.mean(-1), rtol=1e-12, atol=0)
                assert torch.allclose(var, ref.var(-1, correction=1 if n > 1 else 0), rtol=1e-9, atol=1e-12)
                tol = 1e-6 if dtype == torch.float32 else 1e-2
                assert torch.allclose(torch.ops.redux.softmax(x, -1).double(), ref.softmax(-1), rtol=tol, atol=tol)
                assert torch.allclose(torch.ops.redux.log_softmax(x, -1).double(), ref.log_softmax(-1), rtol=tol,
                                      atol=tol)
                parts = torch.ops.redux._exp_rows(x, 3)  # the pieces of long rows: fp64 maximum and sum
                assert torch.equal(parts[:, 0], ref.amax(-1))
                assert torch.allclose(parts[:, 1], (ref - ref.amax(-1, keepdim=True)).exp().sum(-1), rtol=1e-12)
                for op in (0, 1):
                    assert torch.equal(torch.ops.redux._exp_rows_apply(x, parts, op), torch.ops.redux._exp_rows(x, op))
                rows.append(x[1])
                count += 7
        # more rows than the grid: groups loop, loading ahead (6300 of 1024: the straight-line float32 rows)
        for shape in ((5000, 256), (600, 4096), (6300, 1024)):
            many = random_tensor(shape, dtype, "cuda", seed=shape[0])
            tol = 1e-6 if dtype == torch.float32 else 1e-2
            for op in ("softmax", "log_softmax"):
                want = getattr(many.double(), op)(-1)
                assert torch.allclose(getattr(torch.ops.redux, op)(many, -1).double(), want, rtol=tol, atol=tol)
            count += 2
        long = random_tensor((3, 70001), dtype, "cuda", seed=5)  # rows longer than a row kernel takes
        ref = long.double()
        tol = 1e-6 if dtype == torch.float32 else 1e-2
        assert torch.allclose(torch.ops.redux.softmax(long, 1).double(), ref.softmax(1), rtol=tol, atol=tol)
        assert torch.allclose(torch.ops.redux.logsumexp(long, [1]).double(), ref.logsumexp(1), rtol=tol, atol=tol)
        count += 2
        for x, got in zip(rows, torch.ops.redux._sum_squares_each(rows, 1.0, True)):
            assert torch.equal(got, torch.ops.redux._sum_squares_rows(x.reshape(1, -1), 1.0, True)[0])
            count += 1
    return count


# amax / amin: short rows (warp), long rows (block), few long rows (segments,
# two launches), columns in one pass and in segments, a full reduction
EXTREME_PROBLEMS = [((33, 7), 1), ((17, 3000), 1), ((2, 40_000), 1), ((1000, 3), 0), ((3000, 64), 0),
                    ((70_001,), ())]


def check_extremes():
    count = 0
    for shape, dim in EXTREME_PROBLEMS:
        for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64):
            n = 1
            for s in shape:
                n *= s
            for off in (0, 1):  # aligned and misaligned starts
                x = random_tensor((n + off,), dtype, "cuda", seed=n + off)[off:].view(shape)
                for mine, torchs in ((redux.amax, torch.amax), (redux.amin, torch.amin)):
                    assert torch.equal(mine(x, dim), torchs(x, dim))
                    count += 1
                if dtype.is_floating_point:
                    dims = [dim] if isinstance(dim, int) else list(dim)
                    assert torch.equal(torch.ops.redux._extreme_abs(x, dims, False, True), torch.amax(x.abs(), dim))
                    count += 1
    return count


# the mapped reductions on the sum's trees: full (short, chunked, wide),
# short and long rows, columns (tile kernel, float32 strips)
SUM_OF_PROBLEMS = [((1000,), None), (((1 << 20) + 3,), None), ((33, 1025), [1]), ((5, 70_001), [1]),
                   ((300, 33, 5), [1]), ((4100, 128), [0])]


def check_sum_of():
    count = 0
    for shape, dim in SUM_OF_PROBLEMS:
        for dtype, wide in ((torch.float32, torch.float64), (torch.float64, torch.float64),
                            (torch.float16, torch.float32), (torch.bfloat16, torch.float32)):
            n = 1
            for s in shape:
                n *= s
            for off in (0, 1):  # aligned and misaligned starts
                x = random_tensor((n + off,), dtype, "cuda", seed=n + off)[off:].view(shape)
                for of in ("abs", "square"):
                    for grid in (0, 3):
                        got = torch.ops.redux._sum_of(x, dim, of=of, dtype=wide, grid=grid)
                        want = (x.double().abs() if of == "abs" else x.double() ** 2).sum(dim)
                        assert ((got.double() - want).abs() <= 1.2e-7 * want).all()
                        count += 1
    return count


# column sums about a center: one and many chunks, vectors and single columns
CENTERED_PROBLEMS = [(1, 7, 3), (2, 300, 64), (1, 4100, 1024), (3, 33, 5)]


def check_centered_cols(device="cuda"):
    """The column sums about a center (both kernels) and the column
    softmaxes (three) on aligned and misaligned inputs of each dtype,
    against fp64."""
    count = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for shape in CENTERED_PROBLEMS:
            n = shape[0] * shape[1] * shape[2]
            for off in (0, 1):
                x = random_tensor((n + off,), dtype, device, seed=n + off)[off:].view(shape)
                ref = x.double()
                tol = 1e-6 if dtype == torch.float32 else 1e-2
                var = torch.ops.redux._centered_cols(x, ref.mean(1), 0, float(shape[1]), False).double()
                assert torch.allclose(var, ref.var(1, correction=0), rtol=tol, atol=0)
                lse = torch.ops.redux._centered_cols(x, ref.amax(1), 1).double()
                assert torch.allclose(lse, ref.logsumexp(1), rtol=tol, atol=0)
                soft = torch.ops.redux._exp_cols(x, ref.amax(1), 0).double()
                assert torch.allclose(soft, ref.softmax(1), rtol=tol, atol=1e-6)  # float16 subnormals
                logs = torch.ops.redux._exp_cols(x, ref.amax(1), 1).double()
                assert torch.allclose(logs, ref.log_softmax(1), rtol=tol, atol=1e-6)
                count += 4
    return count


def main():
    count = check_row_kernels() + check_extremes() + check_sum_of() + check_centered_cols()
    for shape, dim in PROBLEMS:
        for dtype, out in PAIRS:
            n = 1
            for s in shape:
                n *= s
            for off in (0, 1):  # aligned and misaligned starts
                buf = random_tensor((n + off,), dtype, "cuda", seed=n + off)
                x = buf[off:].view(shape)
                for grid in (0, 3):
                    got = torch.ops.redux._sum_grid(x, dim, False, out, grid)
                    assert_matches(got, x, dim, dtype=out)
                    count += 1
    for dtype, out in LONG_WIDE_PAIRS:
        n = LONG_WIDE_CHUNKS * wide_chunk_elements(dtype) - 5
        for off in (0, 1):
            x = random_tensor((n + off,), dtype, "cuda", seed=off)[off:]
            assert_matches(torch.ops.redux._sum_grid(x, None, False, out, 0), x, dtype=out)
            count += 1
    for v in redux.VARIANTS:
        if not v.general:
            for n in (1000, 100_003):
                data = core.generate_input(n, 11)
                assert core.check(getattr(torch.ops.redux, v.name)(data[0]), core.reference(data[0])) == ""
                count += 1
    data = core.generate_input(65_536, 12)
    assert core.check(torch.ops.redux._competition_custom_kernel(*data), core.reference(data[0])) == ""
    probe_input = torch.rand((1 << 16) + 12, device="cuda")  # a last 16 KB piece of 3 vectors
    torch.ops.redux._read_probe(probe_input)
    torch.ops.redux._read_probe(probe_input, True, "pieces")
    torch.cuda.synchronize()
    print(f"sanitize_cases: {count + 3} kernel calls checked")


if __name__ == "__main__":
    main()
