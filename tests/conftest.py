"""Shared test helpers: devices, fresh random data, the fp64 reference and
the one tolerance table."""
import pytest
import torch

import redux  # noqa: F401  registers torch.ops.redux

HAS_CUDA = torch.cuda.is_available()
cuda = pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine: CUDA tests skipped")

DEVICES = ["cpu", pytest.param("cuda", marks=[cuda, pytest.mark.cuda])]
FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]

# Relative tolerances: |got - ref| <= ROUND[out] * |ref| + ACC[out] * sum|x|.
# ROUND covers the final rounding to the output dtype (one ulp); ACC the
# accumulation (fp64 for float32, compensated fp64 for float64, fp32 for
# float16/bfloat16 on CUDA).
ROUND = {torch.float32: 2.0**-23, torch.float64: 2.0**-52, torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}
ACC = {torch.float32: 1e-13, torch.float64: 1e-14, torch.float16: 1e-5, torch.bfloat16: 1e-5}
# (n, dtype) of rows the CUDA row kernels read into registers (16-byte
# aligned, up to 8 vectors a lane) and of rows they read from memory; the
# same rows one element off a 16-byte boundary are always the latter
ROW_CACHE_CASES = [(33, torch.float32), (1024, torch.float32), (1025, torch.float32), (8191, torch.float32),
                   (8192, torch.float32), (8196, torch.float32), (2048, torch.float16), (16384, torch.bfloat16)]


def pytest_terminal_summary(terminalreporter):
    """Skips summarised by reason, one line each (not one per test)."""
    reasons = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason")
        for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{count:5d}  {reason}")


def torch_cxx_std():
    """The -std flag torch's cpp_extension builds extensions with (the C++
    standard its headers need), read from cpp_extension itself."""
    import inspect
    import re
    import torch.utils.cpp_extension as cpp_extension
    found = re.search(r"common_cflags \+= \['(-std=c\+\+\d+)'", inspect.getsource(cpp_extension))
    return found.group(1) if found else "-std=c++17"


def wide_chunk_elements(dtype):
    """Elements of one chunk of the CUDA full sum's wide tree: 2048 16-byte
    vectors (32 KB; csrc/cuda/sum_chunks.cu)."""
    return 2048 * (16 // torch.empty((), dtype=dtype).element_size())


def random_tensor(shape, dtype, device, seed, offset=3.0):
    """Fresh normal data with an offset (never zeros); integers in [-50, 50)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return (torch.rand(shape, generator=g) > 0.5).to(device)
    if not dtype.is_floating_point:
        return torch.randint(-50, 50, shape, generator=g, dtype=torch.int64).to(dtype).to(device)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 2.0 + offset
    return x.to(dtype).to(device)


def ops_called(fn):
    """Names of the dispatcher ops a call ran (CPU-side profiler)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return {e.key for e in prof.key_averages()}


def on_one_thread(fn):
    """fn() with torch's intra-op threads set to one (then restored)."""
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        return fn()
    finally:
        torch.set_num_threads(threads)


def torch_sum(x, dim=None, keepdim=False, dtype=None):
    if dim is None:
        return torch.sum(x, dtype=dtype) if not keepdim else torch.sum(x, dim=list(range(x.dim())), keepdim=True, dtype=dtype)
    return torch.sum(x, dim, keepdim=keepdim, dtype=dtype)


def assert_matches(got, x, dim=None, keepdim=False, dtype=None):
    """got must have torch.sum's shape and dtype, and match the fp64 reference."""
    expect = torch_sum(x, dim, keepdim, dtype)
    assert got.shape == expect.shape, f"shape {tuple(got.shape)} != torch.sum's {tuple(expect.shape)}"
    assert got.dtype == expect.dtype, f"dtype {got.dtype} != torch.sum's {expect.dtype}"
    assert got.device == x.device
    assert got.is_contiguous()
    out_dtype = expect.dtype
    xin = x.to(out_dtype) if dtype is not None else x  # torch.sum sums in `dtype`
    if not out_dtype.is_floating_point:
        ref = torch_sum(xin.to(torch.int64), dim, keepdim)
        assert torch.equal(got.cpu(), ref.cpu())
        return
    xd = xin.double().cpu()
    ref = torch_sum(xd, dim, keepdim)
    mag = torch_sum(xd.abs(), dim, keepdim)
    g = got.double().cpu()
    finite = torch.isfinite(ref) & torch.isfinite(g)
    # non-finite results must agree exactly (NaN with NaN, inf with same-sign inf)
    torch.testing.assert_close(g[~finite], torch_sum(xin.cpu(), dim, keepdim).double()[~finite], equal_nan=True)
    tol = ROUND[out_dtype] * ref.abs() + ACC[out_dtype] * mag + 1e-30
    err = (g - ref).abs()
    bad = finite & (err > tol)
    assert not bad.any(), (
        f"{int(bad.sum())} of {g.numel()} outputs off; worst err {err[finite].max().item():.3e} "
        f"vs tol {tol[finite].min().item():.3e}")
