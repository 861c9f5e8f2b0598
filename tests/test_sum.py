"""torch.ops.redux.sum against torch.sum and an fp64 reference: values,
shapes, dims, dtypes, layouts, empty and 0-dim tensors, NaN/inf, errors."""
import itertools

import pytest
import torch

import redux
from conftest import DEVICES, FLOAT_DTYPES, assert_matches, random_tensor

SIZES = [1, 31, 32, 33, 1023, 1024, 1025, 4097, 2**16 - 1, 2**16 + 1, 2**20 + 3, 3_000_017]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int32, torch.int64, torch.bool])
@pytest.mark.parametrize("n", SIZES)
def test_full_sizes(device, dtype, n):
    x = random_tensor((n,), dtype, device, seed=n)
    assert_matches(torch.ops.redux.sum(x), x)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4097), (257, 1025), (64, 2**15 + 5), (2, 2**20 + 3), (5000, 7), (70000, 3)])
def test_rows_and_columns_at_edges(device, dtype, shape):
    x = random_tensor(shape, dtype, device, seed=sum(shape))
    for dim in (0, 1, -1):
        assert_matches(torch.ops.redux.sum(x, [dim]), x, [dim])


# Columns whose finish combines many chunks: several finishing threads per
# column with uneven runs of chunks ((3000, 40): 5 chunks in runs of 2),
# partial column tiles ((4099, 130)), inner sizes that allow and forbid
# 16-byte vectors, and a 3-D problem (outer > 1).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64])
@pytest.mark.parametrize("shape", [(20000, 64), (3000, 40), (4099, 130), (40000, 5), (3, 2050, 33), (2, 9000, 8)])
def test_columns_multi_chunk_finish(device, dtype, shape):
    x = random_tensor(shape, dtype, device, seed=sum(shape))
    assert_matches(torch.ops.redux.sum(x, [-2]), x, [-2])


def _dim_choices(ndim):
    choices = [None, []]
    for r in range(1, ndim + 1):
        choices += [list(c) for c in itertools.combinations(range(ndim), r)]
    choices.append([-1])
    if ndim >= 2:
        choices.append([-2, 0] if ndim > 2 else [-2])
    return choices


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(37,), (5, 33), (3, 4, 65), (2, 3, 5, 17)])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int32, torch.bool])
def test_every_dim_combination(device, shape, dtype):
    x = random_tensor(shape, dtype, device, seed=len(shape) * 7 + 1)
    for dim, keepdim in itertools.product(_dim_choices(len(shape)), (False, True)):
        got = torch.ops.redux.sum(x, dim, keepdim)
        assert_matches(got, x, dim if dim else None if not keepdim else list(range(len(shape))), keepdim)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("in_dtype,out_dtype", [
    (torch.float16, torch.float32), (torch.bfloat16, torch.float32), (torch.float32, torch.float64),
    (torch.float32, torch.float16), (torch.float64, torch.float32), (torch.float16, torch.float64),
    (torch.int32, torch.float32), (torch.float32, torch.int64), (torch.bool, torch.int64),
    (torch.uint8, torch.float64), (torch.int16, torch.int64),
])
def test_dtype_argument(device, in_dtype, out_dtype):
    x = random_tensor((7, 3001), in_dtype, device, seed=11)
    for dim in (None, [1], [0]):
        got = torch.ops.redux.sum(x, dim, dtype=out_dtype)
        assert_matches(got, x, dim, dtype=out_dtype)


def _views(device):
    base = random_tensor((64, 96, 5), torch.float32, device, seed=3)
    yield "transposed", base[:, :, 0].t()
    yield "step slice", base[::2, 1::3, 1]
    yield "permuted 3-D", base.permute(2, 0, 1)
    yield "offset by one element", base.reshape(-1)[1:1 + 64 * 96].view(64, 96)
    yield "expanded (stride 0)", base[:, :1, 0].expand(64, 96)
    yield "channels_last", random_tensor((3, 8, 9, 10), torch.float32, device, seed=4).to(memory_format=torch.channels_last)
    yield "negative-step equivalent flip", base[:, :, 2].flip(0)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_inputs(device):
    for name, x in _views(device):
        ndim = x.dim()
        for dim in _dim_choices(ndim):
            for keepdim in (False, True):
                got = torch.ops.redux.sum(x, dim, keepdim)
                try:
                    assert_matches(got, x, dim if dim else (None if not keepdim else list(range(ndim))), keepdim)
                except AssertionError as e:
                    raise AssertionError(f"{name}, dim={dim}, keepdim={keepdim}: {e}") from e


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_empty_and_zero_dim(device, dtype):
    for shape, dim in [((0,), None), ((3, 0), [1]), ((3, 0), [0]), ((0, 4), [0]), ((0, 4), [1]),
                       ((2, 0, 3), [0, 2]), ((2, 0, 3), None)]:
        x = torch.empty(shape, dtype=dtype, device=device)
        for keepdim in (False, True):
            got = torch.ops.redux.sum(x, dim, keepdim)
            expect = torch.sum(x, dim, keepdim) if dim else (torch.sum(x) if not keepdim else torch.sum(x, list(range(x.dim())), True))
            assert got.shape == expect.shape and got.dtype == expect.dtype
            assert torch.equal(got.cpu(), expect.cpu())
    s = random_tensor((), dtype, device, seed=5)
    for dim in (None, [], [0], [-1]):
        for keepdim in (False, True):
            got = torch.ops.redux.sum(s, dim, keepdim)
            expect = torch.sum(s, dim, keepdim) if dim else torch.sum(s)
            assert got.shape == expect.shape and got.dtype == expect.dtype
            assert torch.equal(got.cpu(), expect.cpu())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_nan_and_inf_propagate(device, dtype):
    x = random_tensor((6, 3000), dtype, device, seed=9)
    x[1, 17] = float("nan")
    x[2, 2999] = float("inf")
    x[3, 0] = float("-inf")
    x[4, 5] = float("inf")
    x[4, 6] = float("-inf")  # inf + -inf = NaN
    for dim in ([1], [0], None):
        got = torch.ops.redux.sum(x, dim).cpu()
        expect = (torch.sum(x, dim) if dim else torch.sum(x)).cpu()
        assert torch.equal(torch.isnan(got), torch.isnan(expect)), f"dim={dim}"
        assert torch.equal(torch.isposinf(got), torch.isposinf(expect)), f"dim={dim}"
        assert torch.equal(torch.isneginf(got), torch.isneginf(expect)), f"dim={dim}"
    assert torch.isnan(torch.ops.redux.sum(x, [1])[1]) and torch.isposinf(torch.ops.redux.sum(x, [1])[2])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,out", [(torch.float32, None), (torch.float64, None), (torch.float16, None),
                                       (torch.bfloat16, None), (torch.float32, torch.float64)])
def test_full_sum_special_values_both_finishes(device, dtype, out):
    # Full sums of many chunks. Up to 64 MiB the CUDA finish waits on slots
    # whose stored bits are their own "full" flag: a NaN or inf partial (or a
    # dd's NaN low word after inf - inf) must neither hang it nor be lost;
    # above, a ticket finishes. After each case a finite sum of the same
    # tensor would read any slot left full from the case before.
    per = torch.empty((), dtype=dtype).element_size()
    for n in (1_000_003, (64 << 20) // per + 1001):
        # Half types without the offset: 33M elements of it would overflow.
        x = random_tensor((n,), dtype, device, seed=17, offset=0.0 if per == 2 else 3.0)
        for values in ([float("nan")], [float("inf")], [float("-inf")], [float("inf"), float("-inf")]):
            at = [n // 3 + 5 * k for k in range(len(values))]
            saved = x[at].clone()
            for i, v in zip(at, values):
                x[i] = v
            got = torch.ops.redux.sum(x, dtype=out).cpu()
            expect = torch.sum(x, dtype=out).cpu()
            assert torch.isnan(got) == torch.isnan(expect), f"n={n} {values}"
            assert torch.isposinf(got) == torch.isposinf(expect), f"n={n} {values}"
            assert torch.isneginf(got) == torch.isneginf(expect), f"n={n} {values}"
            x[at] = saved
            assert_matches(torch.ops.redux.sum(x, dtype=out), x, dtype=out)


@pytest.mark.parametrize("device", DEVICES)
def test_half_overflow_like_torch(device):
    x = torch.full((100000,), 1000.0, dtype=torch.float16, device=device)
    assert torch.isposinf(torch.ops.redux.sum(x)) and torch.isposinf(torch.sum(x))
    assert torch.ops.redux.sum(x, dtype=torch.float32).item() == 1e8


@pytest.mark.parametrize("dtype, half_ulp, tiny", [(torch.float16, 2.0**-11, 2.0**-24), (torch.bfloat16, 2.0**-8, 2.0**-30)])
def test_cpu_16_bit_sums_round_once_from_fp64(dtype, half_ulp, tiny):
    # 1 + half an ulp + a little: nearest is 1 + ulp. Rounded to float first,
    # the little is lost, the tie goes to even and gives 1.
    values = [1.0, half_ulp, tiny]
    expect = 1.0 + 2 * half_ulp
    for sign in (1.0, -1.0):
        x = torch.tensor([sign * v for v in values], dtype=dtype)
        assert torch.ops.redux.sum(x).item() == sign * expect
        assert torch.ops.redux.sum(x.view(1, 3), 1).item() == sign * expect
        assert torch.ops.redux.sum(x.view(3, 1), 0).item() == sign * expect
        big = torch.cat([x, torch.zeros(3 * 2**15, dtype=dtype)])  # several chunks and a finish
        assert torch.ops.redux.sum(big).item() == sign * expect


@pytest.mark.parametrize("device", DEVICES)
def test_accuracy_beats_naive_float(device):
    # 2^22 copies of 0.1f with a large offset: naive float accumulation drifts;
    # fp64 accumulation gives the correctly rounded float of the exact sum.
    x = torch.full((2**22,), 0.1, dtype=torch.float32, device=device)
    exact = float(torch.tensor(0.1, dtype=torch.float32).double()) * 2**22
    assert torch.ops.redux.sum(x).item() == torch.tensor(exact, dtype=torch.float32).item()


@pytest.mark.parametrize("device", DEVICES)
def test_errors_name_the_argument(device):
    x = random_tensor((4, 5), torch.float32, device, seed=1)
    with pytest.raises(IndexError, match="argument 'dim'.*out of range"):
        torch.ops.redux.sum(x, [2])
    with pytest.raises(IndexError, match="argument 'dim'.*out of range"):
        torch.ops.redux.sum(x, [-3])
    with pytest.raises(RuntimeError, match="argument 'dim' lists dimension 1 more than once"):
        torch.ops.redux.sum(x, [1, -1])
    with pytest.raises(RuntimeError, match="argument 'dim' lists dimension 0 more than once"):
        torch.ops.redux.sum(x[0, 0], [0, 0])  # 0-dim: torch.sum refuses it too
    for bad in (True, [True], (False, 1)):  # torch.sum refuses these; torch.ops would take them as ints
        with pytest.raises(TypeError, match="argument 'dim' must be"):
            torch.ops.redux.sum(x, bad)
        with pytest.raises(TypeError):
            torch.sum(x, bad)
    with pytest.raises(RuntimeError, match="more than once"):
        torch.ops.redux.sum(x, [1, True])  # torch.sum reads a later bool as an int too
    with pytest.raises(RuntimeError, match="argument 'self' has dtype ComplexFloat"):
        torch.ops.redux.sum(x.to(torch.complex64))
    with pytest.raises(RuntimeError, match="argument 'dtype' is Int"):
        torch.ops.redux.sum(x, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="argument 'grid' must be"):
        torch.ops.redux._sum_grid(x, None, False, None, -1)


def test_sparse_input_is_rejected():
    x = random_tensor((4, 5), torch.float32, "cpu", seed=1).to_sparse()
    with pytest.raises(RuntimeError, match="redux.sum: argument 'self' is a Float tensor of the SparseCPU backend"):
        torch.ops.redux.sum(x)


def test_python_wrapper_is_the_op():
    x = random_tensor((8, 9), torch.float32, "cpu", seed=2)
    assert torch.equal(redux.sum(x, 1), torch.ops.redux.sum(x, [1]))
    assert torch.equal(redux.sum(x, dim=(0, 1), keepdim=True), torch.ops.redux.sum(x, [0, 1], True))
    assert redux.sum(x, dtype=torch.float64).dtype == torch.float64
    assert redux.sum.__doc__ and "torch.sum" in redux.sum.__doc__


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [None, 1, -1, [0, 1], (1, 0), []])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [None, torch.float64])
def test_python_wrappers_give_the_ops_bits(device, dim, keepdim, dtype):
    """redux.sum / redux.mean on a plain tensor (the eager entry, _C.sum /
    _C.mean): the same results, bit for bit, as torch.ops.redux.*."""
    x = random_tensor((33, 70), torch.float32, device, seed=3)
    dims = [dim] if isinstance(dim, int) else dim
    for wrapper, op in ((redux.sum, torch.ops.redux.sum), (redux.mean, torch.ops.redux.mean)):
        got = wrapper(x, dim, keepdim, dtype=dtype)
        want = op(x, dims, keepdim, dtype=dtype)
        assert got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want), wrapper.__name__
    ints = (x * 10).to(torch.int32)
    assert torch.equal(redux.sum(ints, dim, keepdim), torch.ops.redux.sum(ints, dims, keepdim))


def _spy_eager_entries(monkeypatch):
    """Records each call of redux._C.sum / redux._C.mean."""
    calls = []
    for name in ("sum", "mean"):
        real = getattr(redux._C, name)
        monkeypatch.setattr(redux._C, name, lambda *a, real=real, name=name: calls.append(name) or real(*a))
    return calls


def test_python_wrappers_take_the_eager_entry_for_plain_tensors(monkeypatch):
    calls = _spy_eager_entries(monkeypatch)
    x = random_tensor((6, 7), torch.float32, "cpu", seed=5)
    redux.sum(x, 1)
    redux.mean(x, dtype=torch.float64)
    assert calls == ["sum", "mean"]


def _recording_function_hooks(seen):
    """A tensor subclass and a TorchFunctionMode whose __torch_function__
    appends each func it sees to `seen`, then runs it."""

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    return Logged, Mode


def _recording_dispatch_mode(seen):
    """A TorchDispatchMode that appends each op it sees to `seen`, then runs it."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    return Mode


def test_python_wrappers_give_subclasses_and_function_modes_the_op(monkeypatch):
    """A tensor subclass's __torch_function__ and an active TorchFunctionMode
    see torch.ops.redux.sum / mean, as before the eager entry existed."""
    calls = _spy_eager_entries(monkeypatch)
    seen = []
    Logged, Mode = _recording_function_hooks(seen)

    x = random_tensor((6, 7), torch.float32, "cpu", seed=6)
    logged = x.as_subclass(Logged)
    assert torch.equal(redux.sum(logged, 1).as_subclass(torch.Tensor), torch.ops.redux.sum(x, [1]))
    with Mode():
        assert torch.equal(redux.mean(x, 0), torch.ops.redux.mean(x, [0]))
    assert torch.ops.redux.sum.default in seen and torch.ops.redux.mean.default in seen
    assert calls == []


def test_python_wrappers_export_and_fx_record_the_ops():
    """torch.export and torch.fx see redux.sum / redux.mean as the ops'
    nodes (their tracers take the torch.ops call), with eager's results."""

    class M(torch.nn.Module):
        def forward(self, t):
            return redux.sum(t, 1) + redux.mean(t, 1)

    x = random_tensor((4, 8), torch.float32, "cpu", seed=10)
    ops = {torch.ops.redux.sum.default, torch.ops.redux.mean.default}
    exported = torch.export.export(M(), (x,))
    assert ops <= {n.target for n in exported.graph.nodes if n.op == "call_function"}
    assert torch.equal(exported.module()(x), M()(x))
    traced = torch.fx.symbolic_trace(M())
    assert ops <= {n.target for n in traced.graph.nodes if n.op == "call_function"}
    assert torch.equal(traced(x), M()(x))


def test_eager_entry_goes_through_the_dispatcher():
    """The eager entry is the op: a TorchDispatchMode sees redux::sum, and
    autograd gives torch.sum's gradients."""
    seen = []
    Mode = _recording_dispatch_mode(seen)

    x = random_tensor((5, 9), torch.float32, "cpu", seed=7).requires_grad_()
    with Mode():
        redux.sum(x.detach(), 1)
    assert torch.ops.redux.sum.default in seen
    (redux.sum(x, 1) * torch.arange(5.0)).sum().backward()
    assert torch.equal(x.grad, torch.arange(5.0)[:, None].expand(5, 9))
    x.grad = None
    redux.mean(x).backward()
    assert torch.allclose(x.grad, torch.full((5, 9), 1 / 45))


def test_eager_entry_takes_torch_sums_dim_forms():
    """Ints with __index__ (numpy's), torch.Size and tuples, as torch.sum takes them."""
    np = pytest.importorskip("numpy")
    x = random_tensor((4, 5, 6), torch.float32, "cpu", seed=9)
    for dim in (np.int64(1), [np.int32(0), 2], torch.Size([1, 2]), (-1,)):
        dims = [int(d) for d in dim] if isinstance(dim, (list, tuple)) else [int(dim)]
        assert torch.equal(redux.sum(x, dim), torch.ops.redux.sum(x, dims)), dim
        assert redux.sum(x, dim).shape == torch.sum(x, dims).shape


def test_eager_entry_names_the_bad_argument():
    x = random_tensor((4, 5), torch.float32, "cpu", seed=8)
    for kwargs, arg in (({"dim": "a"}, "dim"), ({"dim": 1.5}, "dim"), ({"dim": [0, "a"]}, "dim"),
                        ({"dim": True}, "dim"), ({"keepdim": 1}, "keepdim"), ({"dtype": "float"}, "dtype")):
        for wrapper in (redux.sum, redux.mean):
            with pytest.raises(TypeError, match=f"argument '{arg}'"):
                wrapper(x, **kwargs)
    with pytest.raises(TypeError, match="expected \\(input, dim, keepdim, dtype\\)"):
        redux._C.sum(x)
    with pytest.raises(TypeError, match="argument 'input' must be a Tensor"):
        redux._C.sum([1.0], None, False, None)
    # Errors of the op itself come through unchanged.
    ints = torch.arange(20).reshape(4, 5)
    for wrapper, op, t, dim in ((redux.sum, torch.ops.redux.sum, x, 5), (redux.sum, torch.ops.redux.sum, x, [0, 0]),
                                (redux.mean, torch.ops.redux.mean, ints, 1)):
        with pytest.raises(Exception) as eager:
            wrapper(t, dim)
        with pytest.raises(Exception) as direct:
            op(t, [dim] if isinstance(dim, int) else dim)
        assert type(eager.value) is type(direct.value) and str(eager.value) == str(direct.value)


def test_eager_entry_from_many_threads():
    """Threads calling redux.sum at once (the entry runs the op without the
    GIL) each get their own tensor's bits."""
    import threading

    xs = [random_tensor((64, 300), torch.float32, "cpu", seed=20 + i) for i in range(4)]
    want = [torch.ops.redux.sum(x, [1]) for x in xs]
    bad = []

    def work(i):
        for _ in range(200):
            if not torch.equal(redux.sum(xs[i], 1), want[i]):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []


def test_python_wrappers_trace_whole():
    """redux.sum and redux.mean inside torch.compile(fullgraph=True): one
    graph, the results of eager mode."""
    x = random_tensor((16, 40), torch.float32, "cpu", seed=4)

    def f(t):
        return redux.sum(t, 1) + redux.mean(t, 1, dtype=torch.float64).float()

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(x), f(x))


# ---- torch.ops.redux.sum / .mean's call (redux._serve_packet_calls) ----

def _route(packet):
    """torch's own route for a call of the packet: OpOverloadPacket.__call__."""
    return torch._ops.OpOverloadPacket.__call__.__get__(packet)


def _outcome(call):
    """What a call gives: its tensor (dtype, shape, values) or its error (type, message)."""
    try:
        r = call()
    except Exception as e:  # noqa: BLE001  (every error is compared, whatever its type)
        return ("raised", type(e), str(e))
    return ("returned", r.dtype, tuple(r.shape), r.cpu().tolist())


# (args after the input, kwargs): calls the eager entry serves, then calls it
# hands to torch's route (bad arguments, forms it does not parse).
SERVED_CALLS = [((), {}), (([1],), {}), ((1,), {}), ((-1,), {}), (((0, 1),), {}), (([],), {}), ((None,), {}),
                (([1], True), {}), ((), {"dim": 1}), ((), {"dim": [0], "keepdim": True}), ((torch.Size([1]),), {}),
                (([1],), {"dtype": torch.float64}), ((), {"dtype": torch.float64}), ((None, False), {"dtype": None}),
                (([0, 0],), {}), ((5,), {}), ((), {"dim": -3})]
ROUTED_CALLS = [(("a",), {}), ((1.5,), {}), (([0, "a"],), {}), (([1], 1), {}), (([1], False, None), {}),
                ((), {"dim": 1, "dim2": 3}), (([1],), {"dim": [0]}), (([1], True), {"keepdim": True}),
                ((), {"dtype": "float"}), ((), {"dtype": 3})]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_packet_call_gives_torch_routes_outcome(device, name):
    """torch.ops.redux.sum(...) and .mean(...), served or routed: the same
    result bits, dtype and shape, or the same error, as torch's own route."""
    packet = getattr(torch.ops.redux, name)
    route = _route(packet)
    x = random_tensor((6, 33), torch.float32, device, seed=40)
    for args, kwargs in SERVED_CALLS + ROUTED_CALLS:
        got = _outcome(lambda: packet(x, *args, **kwargs))
        want = _outcome(lambda: route(x, *args, **kwargs))
        assert got == want, (args, kwargs)
    ints = (x * 10).to(torch.int32)
    assert _outcome(lambda: packet(ints, [1])) == _outcome(lambda: route(ints, [1]))
    for args, kwargs in (((), {}), ((), {"self": x, "dim": [1]}), ((x, [1], False, None), {})):
        assert _outcome(lambda: packet(*args, **kwargs)) == _outcome(lambda: route(*args, **kwargs))


def test_packet_call_serves_plain_calls_and_routes_the_rest():
    """The entry's choice, seen directly: a served call never reaches the
    route it is given; any other call reaches it with exactly its arguments."""
    x = random_tensor((5, 8), torch.float32, "cpu", seed=41)
    routed = []

    def spy(*args, **kwargs):
        routed.append((args, kwargs))
        return "routed"

    for args, kwargs in SERVED_CALLS:  # the last three served, and the op refuses them
        got = _outcome(lambda: redux._C.packet_sum(spy, x, *args, **kwargs))
        assert routed == [] and got == _outcome(lambda: _route(torch.ops.redux.sum)(x, *args, **kwargs)), (args, kwargs)
    for args, kwargs in ROUTED_CALLS:
        assert redux._C.packet_sum(spy, x, *args, **kwargs) == "routed"
        assert routed.pop() == ((x, *args), kwargs)
    # Not a plain tensor (a subclass, not a tensor), or a __torch_function__ mode active: routed.
    class Sub(torch.Tensor):
        pass

    for value in (x.as_subclass(Sub), x.tolist(), None):
        assert redux._C.packet_sum(spy, value, [1]) == "routed"
    with torch.overrides.TorchFunctionMode():
        assert redux._C.packet_sum(spy, x, [1]) == "routed"
    with pytest.raises(TypeError, match="torch's route"):
        redux._C.packet_sum()


def test_packet_is_still_torchs_packet():
    """The packet keeps its identity, type, overloads and schema: torch.ops
    users, torch.compile and FX see an OpOverloadPacket."""
    for name in ("sum", "mean"):
        packet = getattr(torch.ops.redux, name)
        assert packet is getattr(torch.ops.redux, name)
        assert isinstance(packet, torch._ops.OpOverloadPacket) and type(packet).__name__ == "EagerOpOverloadPacket"
        assert packet.overloads() == ["default"] and str(packet) == f"redux.{name}"
        assert packet.default._schema.name == f"redux::{name}"


def test_packet_call_gives_subclasses_modes_and_autograd_the_op():
    """Through the packet, as before it served calls: a subclass's and a
    mode's __torch_function__ see the packet, a TorchDispatchMode sees
    redux::sum, and autograd gives torch.sum's gradients."""
    seen = []
    Logged, FunctionMode = _recording_function_hooks(seen)
    DispatchMode = _recording_dispatch_mode(seen)

    x = random_tensor((6, 7), torch.float32, "cpu", seed=42)
    want = torch.ops.redux.sum.default(x, [1])
    assert torch.equal(torch.ops.redux.sum(x.as_subclass(Logged), [1]).as_subclass(torch.Tensor), want)
    assert seen == [torch.ops.redux.sum]
    seen.clear()
    with FunctionMode():
        got = torch.ops.redux.mean(x, [0])
    assert seen == [torch.ops.redux.mean] and torch.equal(got, torch.ops.redux.mean.default(x, [0]))
    seen.clear()
    with DispatchMode():
        torch.ops.redux.sum(x, [1])
    assert seen == [torch.ops.redux.sum.default]
    w = x.clone().requires_grad_()
    (torch.ops.redux.sum(w, [1]) * torch.arange(6.0)).sum().backward()
    assert torch.equal(w.grad, torch.arange(6.0)[:, None].expand(6, 7))


def test_packet_call_from_many_threads():
    """Threads calling torch.ops.redux.sum at once (served without the GIL)
    each get their own tensor's bits."""
    import threading

    xs = [random_tensor((64, 300), torch.float32, "cpu", seed=50 + i) for i in range(4)]
    want = [torch.ops.redux.sum.default(x, [1]) for x in xs]
    bad = []

    def work(i):
        for _ in range(200):
            if not torch.equal(torch.ops.redux.sum(xs[i], [1]), want[i]):
                bad.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
