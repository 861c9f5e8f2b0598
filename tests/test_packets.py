"""The calls of torch.ops.redux's other public packets (amax, amin, var,
std, var_mean, logsumexp, softmax, log_softmax, vector_norm): served by
redux._C.packet_op from the op's schema where the arguments are plain, else
handed to torch's route; either way the same outcome as the route. (sum and
mean have their own entry: tests/test_sum.py.)"""
import pytest
import torch

import redux
from conftest import DEVICES, random_tensor
from test_sum import _outcome as _tensor_outcome
from test_sum import _recording_dispatch_mode, _recording_function_hooks, _route

# op: (calls the entry serves, calls it hands to the route), each (args after the input, kwargs).
# The served calls include ones the op refuses (its own errors, raised the same either way).
CALLS = {
    "amax": ([((), {}), ((1,), {}), (([0, 1],), {}), (([1], True), {}), ((), {"dim": -1, "keepdim": True}),
              ((torch.Size([0]),), {}), ((5,), {}), (([0, 0],), {})],
             [((1.5,), {}), ((True,), {}), ((), {"dim": 1, "dim2": 3}), (([1], 1), {}), (([1],), {"dim": [0]}),
              (([1], False, None), {}), ((2**70,), {})]),
    "logsumexp": ([((1,), {}), (([0, 1], True), {}), ((), {"dim": [1]}), ((), {"dim": 0, "keepdim": False}),
                   (([],), {})],
                  [((), {}), (("a",), {}), ((1, "yes"), {}), (([1],), {"keepdims": True})]),
    "softmax": ([((1,), {}), ((0, torch.float64), {}), ((-1,), {"dtype": None}), ((), {"dim": 0}),
                 ((1,), {"dtype": torch.int32}), ((3,), {})],
                [((), {}), (([1],), {}), ((1.0,), {}), ((1, "float"), {}), ((1,), {"dim": 0})]),
    "var": ([((), {}), ((1,), {}), (([0, 1],), {"keepdim": True}), ((None,), {"correction": 0}),
             ((1,), {"correction": 2.5}), ((), {"correction": None, "keepdim": False})],
            [((1, 0), {}), ((1,), {"correction": True}), ((1,), {"unbiased": False}), ((1,), {"correction": "1"})]),
    "vector_norm": ([((), {}), ((1,), {}), ((float("inf"), 1), {}), ((-float("inf"), [0, 1], True), {}),
                     ((0.5,), {"dim": 1}), ((3, None, False), {"dtype": torch.float64}), ((0,), {}),
                     ((2,), {"dtype": torch.int64})],
                    [((True,), {}), ((2, 1.5), {}), ((2,), {"ord": 1}), ((torch.tensor(2.0),), {})]),
}
CALLS["amin"] = CALLS["amax"]
CALLS["log_softmax"] = CALLS["softmax"]
CALLS["std"] = CALLS["var_mean"] = CALLS["var"]


def _outcome(call):
    """_tensor_outcome, for one tensor or a tuple of them."""
    def each(r):
        return ("returned", r.dtype, tuple(r.shape), r.cpu().tolist())

    try:
        r = call()
    except Exception:  # noqa: BLE001
        return _tensor_outcome(call)
    return tuple(each(t) for t in r) if isinstance(r, tuple) else each(r)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_packet_call_gives_torch_routes_outcome(device, name):
    """Served or routed: the same result bits, dtype and shape, or the same
    error, as torch's own route."""
    packet = getattr(torch.ops.redux, name)
    route = _route(packet)
    x = random_tensor((6, 33), torch.float32, device, seed=60)
    served, routed = CALLS[name]
    for args, kwargs in served + routed:
        assert _outcome(lambda: packet(x, *args, **kwargs)) == _outcome(lambda: route(x, *args, **kwargs)), \
            (args, kwargs)
    for args, kwargs in (((), {}), ((), {"self": x}), ((x, 1, True, None, 4), {})):
        assert _outcome(lambda: packet(*args, **kwargs)) == _outcome(lambda: route(*args, **kwargs))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_packet_call_serves_plain_calls_and_routes_the_rest(name):
    """The entry's choice, seen directly: a served call never reaches the
    route; any other call reaches it with exactly its arguments."""
    x = random_tensor((5, 8), torch.float32, "cpu", seed=61)
    handle = redux._C.op_handle(f"redux::{name}")
    routed = []

    def spy(*args, **kwargs):
        routed.append((args, kwargs))
        return "routed"

    served, others = CALLS[name]
    for args, kwargs in served:
        got = _outcome(lambda: redux._C.packet_op(spy, handle, x, *args, **kwargs))
        want = _outcome(lambda: _route(getattr(torch.ops.redux, name))(x, *args, **kwargs))
        assert routed == [] and got == want, (args, kwargs)
    for args, kwargs in others:
        assert redux._C.packet_op(spy, handle, x, *args, **kwargs) == "routed"
        assert routed.pop() == ((x, *args), kwargs)

    class Sub(torch.Tensor):
        pass

    dim = served[1][0]
    for value in (x.as_subclass(Sub), x.tolist(), None):
        assert redux._C.packet_op(spy, handle, value, *dim) == "routed"
    with torch.overrides.TorchFunctionMode():
        assert redux._C.packet_op(spy, handle, x, *dim) == "routed"


def test_packet_op_refuses_a_call_without_its_handle():
    with pytest.raises(TypeError, match="op_handle"):
        redux._C.packet_op(lambda: None)
    with pytest.raises(TypeError, match="op_handle"):
        redux._C.packet_op(lambda: None, "redux::amax", torch.ones(2))
    with pytest.raises(TypeError, match="op's name"):
        redux._C.op_handle(3)
    with pytest.raises(RuntimeError, match="redux::no_such_op"):
        redux._C.op_handle("redux::no_such_op")


def test_packets_are_still_torchs_packets():
    """Identity, type, overloads and schema unchanged: torch.ops users,
    torch.compile and FX see an OpOverloadPacket."""
    for name in CALLS:
        packet = getattr(torch.ops.redux, name)
        assert packet is getattr(torch.ops.redux, name)
        assert isinstance(packet, torch._ops.OpOverloadPacket) and type(packet).__name__ == "EagerOpOverloadPacket"
        assert packet.overloads() == ["default"] and packet.default._schema.name == f"redux::{name}"


def test_packet_call_gives_subclasses_modes_and_autograd_the_op():
    """A subclass's and a mode's __torch_function__ see the packet, a
    TorchDispatchMode sees the op, and gradients flow as through the route."""
    seen = []
    Logged, FunctionMode = _recording_function_hooks(seen)
    DispatchMode = _recording_dispatch_mode(seen)
    x = random_tensor((6, 7), torch.float32, "cpu", seed=62)
    want = torch.ops.redux.softmax.default(x, 1)
    assert torch.equal(torch.ops.redux.softmax(x.as_subclass(Logged), 1).as_subclass(torch.Tensor), want)
    assert seen == [torch.ops.redux.softmax]
    seen.clear()
    with FunctionMode():
        torch.ops.redux.amax(x, [0])
    assert seen == [torch.ops.redux.amax]
    seen.clear()
    with DispatchMode():  # the ops the route's call runs (vector_norm is a composite)
        torch.ops.redux.vector_norm(x, 2, [1])
        torch.ops.redux.amax(x, [1])
    routed_seen = seen[:]
    seen.clear()
    with DispatchMode():
        _route(torch.ops.redux.vector_norm)(x, 2, [1])
        _route(torch.ops.redux.amax)(x, [1])
    assert seen == routed_seen and torch.ops.redux.amax.default in seen
    for name, call in (("var", lambda t: torch.ops.redux.var(t, [1])),
                       ("log_softmax", lambda t: torch.ops.redux.log_softmax(t, 1)),
                       ("var_mean", lambda t: torch.ops.redux.var_mean(t, [1])[0])):
        a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
        (call(a) * 1.5).sum().backward()
        routed = _route(getattr(torch.ops.redux, name))
        out = routed(b, [1]) if name != "log_softmax" else routed(b, 1)
        ((out[0] if name == "var_mean" else out) * 1.5).sum().backward()
        assert torch.equal(a.grad, b.grad), name


def test_packet_calls_compile_without_graph_breaks():
    x = random_tensor((4, 9), torch.float32, "cpu", seed=63)

    def f(t):
        v, m = torch.ops.redux.var_mean(t, [1])
        return torch.ops.redux.softmax(t, 1).sum(1) + torch.ops.redux.amax(t, 1) + v + m

    assert torch.equal(torch.compile(f, fullgraph=True, backend="aot_eager")(x), f(x))
