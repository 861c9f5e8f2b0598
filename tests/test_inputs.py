"""Hostile inputs: every dtype torch has into every entry, every backend
redux has no kernel for, inputs that are not dense (expanded, overlapping,
stepped) read in bounded pieces, forged layouts for the internal ops, and
the switch against torch for all of them."""
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import redux
import redux.distributed as rd
from conftest import DEVICES, HAS_CUDA, random_tensor

# Every dtype this torch has, found programmatically: one torch adds later is swept too.
ALL_DTYPES = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)
RUNGS = [v.name for v in redux.VARIANTS if not v.general]


def _cuda_unsafe(dtype):
    """Dtypes torch's own CUDA calls are not compared against: with bits,
    sub-byte integer and quantized types, and in some casts to float8 and
    float4, torch fails a device-side assert (c10/core/DynamicCast.h) that
    ends the process's CUDA context; and CUDA torch sums complex32 results
    where its CPU kernels (the switch's probe) refuse them. On CUDA redux
    must refuse these dtypes (its ops) without touching data."""
    name = str(dtype).split(".")[1]
    if name.startswith(("float8", "float4")) or name == "complex32":
        return True
    return name.startswith(("bits", "q")) or re.fullmatch(r"u?int[1-7]", name) is not None


def _make(dtype, device):
    """A (3, 4) tensor of `dtype` with small exact values, or None where torch cannot make one."""
    base = torch.tensor([[1.5, -2.25, 3.0, 0.5], [4.0, 1.0, -1.0, 2.0], [0.25, 0.75, 1.25, 8.0]])
    for make in (lambda: base.to(dtype).to(device), lambda: torch.empty(3, 4, dtype=dtype, device=device)):
        try:
            return make()
        except Exception:  # noqa: BLE001
            continue
    return None


def _outcome(call):
    """("ok", dtype, shape, fp64/complex128 values) or ("err", type, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call()
    except Exception as e:  # noqa: BLE001  (every error is examined)
        return ("err", type(e), str(e))
    if r.device.type == "meta":
        return ("ok", r.dtype, tuple(r.shape), None)
    return ("ok", r.dtype, tuple(r.shape), r.cpu().to(torch.complex128 if r.dtype.is_complex else torch.float64))


def _entries(x, out):
    """(name, redux call, torch's counterpart) for every public entry."""
    kw = {} if out is None else {"dtype": out}
    yield "torch.ops.redux.sum", lambda: torch.ops.redux.sum(x, **kw), lambda: torch.sum(x, **kw)
    yield "torch.ops.redux.sum dim", lambda: torch.ops.redux.sum(x, [1], True, **kw), lambda: torch.sum(x, [1], True, **kw)
    yield "torch.ops.redux.sum.default", lambda: torch.ops.redux.sum.default(x, [0], **kw), lambda: torch.sum(x, [0], **kw)
    yield "redux.sum", lambda: redux.sum(x, 0, **kw), lambda: torch.sum(x, 0, **kw)
    yield "torch.ops.redux.mean", lambda: torch.ops.redux.mean(x, **kw), lambda: torch.mean(x, **kw)
    yield "redux.mean", lambda: redux.mean(x, 1, **kw), lambda: torch.mean(x, 1, **kw)
    yield "_sum_grid", lambda: torch.ops.redux._sum_grid(x, [1], False, out, 3), lambda: torch.sum(x, [1], **kw)
    yield "torch.ops.redux.softmax", lambda: torch.ops.redux.softmax(x, 1, out), lambda: torch.softmax(x, 1, out)
    yield "torch.ops.redux.vector_norm", lambda: torch.ops.redux.vector_norm(x, 2, [1], **kw), \
        lambda: torch.linalg.vector_norm(x, 2, 1, **kw)
    if out is None:  # torch.var, torch.std and torch.logsumexp have no dtype argument
        yield "redux.logsumexp", lambda: redux.logsumexp(x, 1), lambda: torch.logsumexp(x, 1)
        yield "torch.ops.redux.log_softmax", lambda: torch.ops.redux.log_softmax(x, 0), \
            lambda: torch.log_softmax(x, 0)
        yield "torch.ops.redux.var", lambda: torch.ops.redux.var(x, [1]), lambda: torch.var(x, [1])
        yield "redux.std", lambda: redux.std(x, keepdim=True), lambda: torch.std(x, keepdim=True)
        yield "torch.ops.redux.var_mean", lambda: torch.ops.redux.var_mean(x, [0], correction=0)[1], \
            lambda: torch.var_mean(x, [0], correction=0)[1]
    try:
        flat = x.reshape(-1)
    except (RuntimeError, NotImplementedError):  # torch cannot view it (quantized meta): nothing to hand a rung
        flat = None
    if out is None and flat is not None:
        for rung in RUNGS:
            yield rung, lambda rung=rung: getattr(torch.ops.redux, rung)(flat), lambda: torch.sum(flat)


def _check_outcome(name, got, want):
    if got[0] == "err":
        kind, message = got[1], got[2]
        assert issubclass(kind, (RuntimeError, TypeError, IndexError)), (name, kind, message)
        assert "argument '" in message, f"{name}: the error does not name the argument: {message}"
        return
    assert want is not None, f"{name}: redux answered a dtype torch cannot take on this device"
    assert want[0] == "ok", f"{name}: redux answered where torch refuses ({want[1].__name__}: {want[2][:80]})"
    assert got[1:3] == want[1:3], (name, got[1:3], want[1:3])
    if got[3] is not None and want[3] is not None:
        assert torch.allclose(got[3], want[3], rtol=1e-2, atol=1e-2, equal_nan=True), (name, got[3], want[3])


@pytest.mark.parametrize("device", DEVICES + ["meta"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_into_every_entry(device, dtype):
    """torch's answer or a clear error naming the argument, never garbage
    and never a crash; as input dtype and as `dtype` argument. On meta, the
    same verdict, dtype and shape as the CPU kernels give."""
    x = _make(dtype, device)
    floats = _make(torch.float32, device)
    if x is None:  # torch itself cannot make this tensor here: nothing can reach redux
        assert _make(dtype, "cpu") is None or device != "cpu"
    calls = [] if x is None else [(name, r, t) for name, r, t in _entries(x, None)]
    calls += [(f"{name}, dtype={dtype}", r, t) for name, r, t in _entries(floats, dtype)]
    host = "cpu" if device == "meta" else None
    host_calls = {}
    if host:
        hx, hf = _make(dtype, "cpu"), _make(torch.float32, "cpu")
        host_calls = {name: r for name, r, _ in ([] if hx is None else list(_entries(hx, None)))}
        host_calls.update({f"{name}, dtype={dtype}": r for name, r, _ in _entries(hf, dtype)})
    for name, call, counterpart in calls:
        got = _outcome(call)
        if device == "meta":
            if name in host_calls and name not in RUNGS:  # (a rung's meta kernel stands for its CUDA one)
                real = _outcome(host_calls[name])
                assert got[0] == real[0], (name, got[:3], real[:3])
                assert got[0] == "err" or got[1:3] == real[1:3], (name, got[:3], real[:3])
            if got[0] == "err":
                _check_outcome(name, got, None)
            continue
        unsafe = device == "cuda" and _cuda_unsafe(dtype)
        _check_outcome(name, got, None if unsafe else _outcome(counterpart))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_switch_gives_torchs_outcome_for_every_dtype(device, dtype):
    """Under the switch, sum and mean with every dtype argument give torch's
    result (dtype, shape, value) or torch's error type, dims errors included."""
    if device == "cuda" and _cuda_unsafe(dtype):
        pytest.skip("torch itself fails a device-side assert with this dtype on CUDA: no outcome to match")
    x = _make(dtype, device)
    if x is None:
        return  # torch cannot make it: no call can reach the switch
    outs = [d for d in ALL_DTYPES if device != "cuda" or not _cuda_unsafe(d)]
    for out in [None] + outs:
        for name, call in [("sum", lambda: x.sum(dtype=out)), ("sum(1)", lambda: x.sum(1, dtype=out)),
                           ("mean", lambda: x.mean(dtype=out)), ("mean(0, True)", lambda: x.mean(0, True, dtype=out)),
                           ("sum(5)", lambda: x.sum(5, dtype=out)), ("mean(-3)", lambda: x.mean(-3, dtype=out)),
                           ("sum([0, 0])", lambda: x.sum([0, 0], dtype=out))]:
            want = _outcome(call)
            with redux.enabled():
                got = _outcome(call)
            assert got[:3 if got[0] == "ok" else 2] == want[:3 if want[0] == "ok" else 2], (name, out, got[:2], want[:2])
            if got[0] == "ok":  # (where torch's half-precision intermediate overflows, redux's wide one need not)
                finite = torch.isfinite(want[3])
                assert torch.allclose(got[3][finite], want[3][finite], rtol=1e-2, atol=1e-2), (name, out)


@pytest.mark.parametrize("device", DEVICES)
def test_switch_complex_dims_and_zero_dim(device):
    c = torch.randn(3, 4, dtype=torch.complex64, device=device)
    with redux.enabled():
        with pytest.raises(IndexError):
            c.sum(5)
        with pytest.raises(IndexError):
            c.mean(2)
        with pytest.raises(RuntimeError):
            c.sum([1, 1])
        z = torch.tensor(1.5 - 2j, device=device)
        for got, want in ((z.sum(), 1.5 - 2j), (z.mean(), 1.5 - 2j), (z.sum(0), 1.5 - 2j), (z.sum(dtype=torch.complex128), 1.5 - 2j)):
            assert got.dim() == 0 and complex(got) == want
        assert torch.allclose(c.sum(-1), c.cpu().sum(-1).to(device))


BACKENDS = {
    "sparse_coo": lambda x: x.to_sparse(),
    "sparse_csr": lambda x: x.to_sparse_csr(),
    "quantized": lambda x: torch.quantize_per_tensor(x, 0.1, 0, torch.qint8),
    "nested": lambda x: torch.nested.nested_tensor([x[0], x[1, :2]]),
    "mkldnn": lambda x: x.to_mkldnn(),
}


@pytest.mark.parametrize("kind", BACKENDS)
def test_other_backends_get_an_error_naming_the_argument(kind):
    x = random_tensor((3, 4), torch.float32, "cpu", seed=2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = BACKENDS[kind](x)
    except (RuntimeError, AttributeError) as e:  # this torch build lacks the backend
        pytest.skip(f"torch cannot make a {kind} tensor here: {e}")
    calls = {
        "redux.sum": lambda: torch.ops.redux.sum(t),
        "redux.sum": lambda: redux.sum(t, 1),
        "redux.mean": lambda: redux.mean(t),
        "redux._sum_grid": lambda: torch.ops.redux._sum_grid(t, None, False, None, 0),
        "redux._sum_unit_partials": lambda: torch.ops.redux._sum_unit_partials(t, [0] * 11, 0, 1),
        "redux._read_probe": lambda: torch.ops.redux._read_probe(t),
    }
    calls.update({f"redux.{rung}": (lambda rung=rung: getattr(torch.ops.redux, rung)(t)) for rung in RUNGS})
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match=r"redux\.\w+: argument '\w+' (is a|has dtype)"):
            call()


def _bits(t):
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _non_dense_cases(device):
    g = torch.Generator().manual_seed(11)
    base = (torch.randn(64, 300, 70, generator=g) + 3).to(device)
    for dim in (None, [1], [2], [0], [0, 2], [1, 2], [0, 1]):
        yield "stepped 3-D", base[:, ::2, :], dim, None
    row = (torch.randn(1, 1, generator=g) + 3).to(device)
    for dim in (None, [0], [1]):
        yield "expanded", row.expand(5000, 100), dim, None
    flat = (torch.randn(300000, generator=g) + 3).to(device)
    yield "stepped 1-D", flat[::3], None, None
    yield "a column", flat[:210000].view(70000, 3)[:, 0], None, None
    yield "overlapping rows", flat.as_strided((150000, 4), (1, 1)), [1], None
    yield "overlapping columns", flat.as_strided((50000, 40), (1, 1)), [0], None
    yield "overlapping, converted", flat.half().as_strided((50000, 40), (2, 1)), [0], torch.float32
    ints = torch.randint(-50, 50, (2000,), generator=g, dtype=torch.int32).to(device)
    yield "expanded ints", ints[:, None].expand(2000, 300), None, None


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("piece_bytes", ["64", "40000", None])
def test_non_dense_inputs_are_read_in_pieces(device, piece_bytes, monkeypatch):
    """Expanded, overlapping and stepped inputs: the bits of their dense
    copy's sum (several units: the same partials; rows: batch invariance),
    torch.sum's value, whatever the piece size."""
    if piece_bytes is None:
        monkeypatch.delenv("REDUX_PIECE_BYTES", raising=False)
    else:
        monkeypatch.setenv("REDUX_PIECE_BYTES", piece_bytes)
    for name, x, dim, dtype in _non_dense_cases(device):
        assert not x.is_contiguous()
        got = torch.ops.redux.sum(x, dim, dtype=dtype)
        dense = torch.ops.redux.sum(x.contiguous(), dim, dtype=dtype)
        ref = x.double().sum(dim) if dim is not None else x.double().sum()
        assert torch.equal(_bits(got), _bits(dense)), (name, dim)
        assert torch.allclose(got.double(), ref, rtol=1e-5, atol=1e-3), (name, dim)


def test_piece_size_setting_is_checked(monkeypatch):
    monkeypatch.setenv("REDUX_PIECE_BYTES", "lots")
    with pytest.raises(RuntimeError, match="REDUX_PIECE_BYTES must be a positive number of bytes"):
        torch.ops.redux.sum(torch.ones(1).expand(10))


def test_expanded_input_takes_bounded_memory():
    """2^30 elements expanded from one: a dense copy would take 4 GiB; the
    pieces keep the peak within ~100 MB of where it was."""
    code = textwrap.dedent("""
        import resource, torch, redux
        x = torch.ones(1).expand(2**30)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        y = torch.ops.redux.sum(x)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(float(y), grown // 1024)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    total, grown_mib = out.stdout.split()
    assert float(total) == 2**30
    assert int(grown_mib) < 200, f"peak memory grew by {grown_mib} MiB"


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine: CUDA tests skipped")
def test_expanded_input_takes_bounded_memory_cuda():
    """The issue's case: 2^33 elements expanded from one (32 GiB dense)."""
    x = torch.ones(1, device="cuda").expand(2**33)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    y = torch.ops.redux.sum(x)
    assert float(y) == 2**33
    assert torch.cuda.max_memory_allocated() - before < 200 * 2**20


@pytest.mark.parametrize("device", DEVICES)
def test_internal_ops_check_every_layout_field(device):
    """A forged layout is an error naming 'layout', never an out-of-bounds access."""
    x = random_tensor((300007,), torch.float32, device, seed=8)
    view, layout = torch.ops.redux._sum_sharding(x, [300007], None, None)
    units = layout[rd._UNITS]
    partials = torch.ops.redux._sum_unit_partials(view, layout, 0, units)
    assert torch.equal(torch.ops.redux._sum_from_partials(partials, layout).reshape(()), torch.ops.redux.sum(x))
    forged = []
    for field, values in {0: [-1, 3, 99], 1: [0, 2, -5], 2: [0, layout[2] * 4, 2**62], 3: [0, 7], 4: [1, 7, 0],
                          5: [1, units * 8, 2**40], 6: [1, 4096, -8], 9: [7, -1], 10: [7, 4, -1]}.items():
        for v in values:
            bad = list(layout)
            bad[field] = v
            forged.append(bad)
    forged += [layout[:5], layout + [0]]
    for bad in forged:
        with pytest.raises(RuntimeError, match="argument 'layout'"):
            torch.ops.redux._sum_from_partials(partials, bad)
        with pytest.raises(RuntimeError, match="argument 'layout'"):
            torch.ops.redux._sum_unit_partials(view, bad, 0, 1)
