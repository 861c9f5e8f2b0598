"""torch integration: opcheck (schema, fake kernels, autograd registration),
gradients, torch.compile without graph breaks, the variants table."""
import pytest
import torch

import redux
from conftest import DEVICES, random_tensor


def _samples(device):
    x = random_tensor((6, 40), torch.float32, device, seed=1)
    yield (x,), {}
    yield (x, [1]), {}
    yield (x, [0], True), {}
    yield (x, [-1], False), {"dtype": torch.float64}
    yield (random_tensor((3, 4, 5), torch.float16, device, seed=2), [0, 2], True), {}
    yield (random_tensor((3, 4, 5), torch.float64, device, seed=2).requires_grad_(), [1]), {}
    yield (random_tensor((7, 9), torch.float32, device, seed=3).t().requires_grad_(), [0], True), {}
    yield (random_tensor((5, 6), torch.int32, device, seed=4), [1]), {}


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_sum(device):
    for args, kwargs in _samples(device):
        torch.library.opcheck(torch.ops.redux.sum.default, args, kwargs)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_sum_grid(device):
    x = random_tensor((6, 5000), torch.float32, device, seed=5).requires_grad_()
    for dim, keepdim, dtype, grid in [(None, False, None, 3), ([1], True, None, 1), ([0], False, torch.float64, 0)]:
        torch.library.opcheck(torch.ops.redux._sum_grid.default, (x, dim, keepdim, dtype, grid))


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck(device):
    x = random_tensor((3, 4, 5), torch.float64, device, seed=6).requires_grad_()
    for dim in (None, [0], [1, 2], [-1]):
        for keepdim in (False, True):
            assert torch.autograd.gradcheck(lambda t: torch.ops.redux.sum(t, dim, keepdim), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.ops.redux.sum(t, [1]), (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_backward_matches_torch(device):
    x = random_tensor((4, 6, 8), torch.float16, device, seed=7).requires_grad_()
    for dim, keepdim, dtype in [([1], False, None), ([0, 2], True, None), (None, False, torch.float32)]:
        x.grad = None
        g = random_tensor((), torch.float32, device, seed=8) if dim is None else None
        y = torch.ops.redux.sum(x, dim, keepdim, dtype=dtype)
        gy = torch.ones_like(y) * 1.5 if g is None else g.to(y.dtype)
        y.backward(gy)
        ours = x.grad.clone()
        x.grad = None
        (torch.sum(x, dim, keepdim, dtype=dtype) if dim else torch.sum(x, dtype=dtype)).backward(gy)
        assert ours.dtype == x.dtype and torch.equal(ours, x.grad)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device):
    def model(a, b):
        return torch.ops.redux.sum(a * 2.0, [1]) + redux.sum(b, dim=0, keepdim=False)

    compiled = torch.compile(model, fullgraph=True, dynamic=False)
    a = random_tensor((16, 300), torch.float32, device, seed=9)
    b = random_tensor((300, 16), torch.float32, device, seed=10)
    torch.testing.assert_close(compiled(a, b), model(a, b))
    torch._dynamo.reset()


def test_variants_table_lookup():
    names = [v.name for v in redux.VARIANTS]
    assert len(names) == len(set(names)) and "sum" in names
    for v in redux.VARIANTS:
        assert hasattr(torch.ops.redux, v.name), f"{v.name} in VARIANTS but not registered"
        assert v.idea and isinstance(v.deterministic, bool)
    assert redux.by_name("sum").deterministic
    with pytest.raises(KeyError):
        redux.by_name("no_such_variant")
