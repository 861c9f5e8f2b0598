"""torch.vmap over redux.sum / redux.mean (redux/batching.py): the ops' own
batching rule, not torch's per-sample fallback; each sample's bits where
the sample reduces its trailing dims or all of them. torch.func's other
transforms (grad, jacrev, hessian, jvp, jacfwd) and forward-mode AD through
redux's C++ autograd kernel."""
import contextlib

import pytest
import torch

import redux
from conftest import DEVICES, assert_matches, random_tensor

SHAPE = (6, 33, 130)  # a 33 x 130 sample, odd sizes; the batch dim moved by in_dims


@contextlib.contextmanager
def no_fallback():
    """torch's per-sample fallback turned into an error: only a batching rule can serve the op."""
    functorch = torch._C._functorch
    if not hasattr(functorch, "_set_vmap_fallback_enabled"):
        pytest.skip("this torch cannot turn off vmap's fallback")
    was = functorch._is_vmap_fallback_enabled()
    functorch._set_vmap_fallback_enabled(False)
    try:
        yield
    finally:
        functorch._set_vmap_fallback_enabled(was)


def per_sample(fn, x, in_dim):
    return torch.stack([fn(x.select(in_dim, i)) for i in range(x.shape[in_dim])])


# (dim, keepdim, dtype) of one sample; all keep each sample's bits (full or trailing).
TRAILING = [(None, False, None), (-1, False, None), ([1], True, None), ([0, 1], False, None), ((), False, None),
            (-1, False, torch.float64)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", [redux.sum, redux.mean, lambda *a, **k: torch.ops.redux.sum(*a, **k)],
                         ids=["redux.sum", "redux.mean", "torch.ops"])
@pytest.mark.parametrize("in_dim", [0, 1, -1])
@pytest.mark.parametrize("dim,keepdim,dtype", TRAILING)
def test_vmap_gives_each_samples_bits(device, op, in_dim, dim, keepdim, dtype):
    x = random_tensor(SHAPE, torch.float32, device, seed=11)
    fn = lambda t: op(t, dim, keepdim, dtype=dtype)  # noqa: E731
    with no_fallback():
        got = torch.vmap(fn, in_dims=in_dim)(x)
    want = per_sample(fn, x, in_dim)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.equal(got, want)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
@pytest.mark.parametrize("in_dim", [0, 2])
def test_vmap_over_a_samples_leading_dim_matches_the_reference(device, dtype, in_dim):
    """Columns of each sample: the fp64 reference's result (the CUDA
    chunking may follow the batched shape, so not per-sample bits)."""
    x = random_tensor(SHAPE, dtype, device, seed=12)
    with no_fallback():
        got = torch.vmap(lambda t: redux.sum(t, 0), in_dims=in_dim)(x)
    moved = x.movedim(in_dim, 0)
    assert_matches(got, moved, dim=1)


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_of_0_dim_samples_and_nested_vmap(device):
    x = random_tensor((7,), torch.float32, device, seed=13)
    with no_fallback():
        assert torch.equal(torch.vmap(redux.sum)(x), x)
        assert torch.equal(torch.vmap(lambda t: redux.sum(t, -1, True))(x), x)
        assert torch.equal(torch.vmap(lambda t: redux.mean(t, 0))(x), x)
        y = random_tensor((3, 4, 50), torch.float32, device, seed=14)
        got = torch.vmap(torch.vmap(lambda t: redux.sum(t)), in_dims=1)(y)
    assert torch.equal(got, redux.sum(y, -1).T)


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_then_backward(device):
    """vmap inside a graph that autograd differentiates."""
    x = random_tensor((4, 9), torch.float32, device, seed=15).requires_grad_()
    with no_fallback():
        torch.vmap(lambda t: redux.mean(t * t))(x).sum().backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() / 9)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_func_transforms(device):
    """torch.func's grad, per-sample grads (vmap of grad), jacrev, and
    hessian (a backward of the backward) through redux's sum and mean."""
    x = random_tensor((5, 7), torch.float64, device, seed=17)
    torch.testing.assert_close(torch.func.grad(lambda t: redux.sum(t * t))(x), 2 * x)
    with no_fallback():
        per_sample = torch.vmap(torch.func.grad(lambda t: redux.mean(t * t)))(x)
    torch.testing.assert_close(per_sample, 2 * x / 7)
    jac = torch.func.jacrev(lambda t: redux.sum(t, 0, dtype=torch.float32))(x)
    want = torch.func.jacrev(lambda t: torch.sum(t, 0, dtype=torch.float32))(x)  # in the input's dtype
    assert jac.shape == want.shape == (7, 5, 7) and jac.dtype == want.dtype == torch.float64
    assert torch.equal(jac, want)
    hess = torch.func.hessian(lambda t: redux.sum(t ** 3))(x[0])
    torch.testing.assert_close(hess, torch.diag(6 * x[0]))
    assert redux.sum(x.requires_grad_(), -1).grad_fn.name() == "redux::SumBackward"


@pytest.mark.parametrize("device", DEVICES)
def test_forward_mode_ad(device):
    """A sum is linear: the output's tangent is the sum of the input's
    tangent (jvp, jacfwd, forward-AD dual tensors, gradcheck's forward
    check); an integer result carries no tangent."""
    import torch.autograd.forward_ad as fwAD
    x = random_tensor((5, 7), torch.float64, device, seed=18)
    v = random_tensor((5, 7), torch.float64, device, seed=19)
    value, tangent = torch.func.jvp(lambda t: redux.sum(t, -1), (x,), (v,))
    assert torch.equal(value, redux.sum(x, -1)) and torch.equal(tangent, redux.sum(v, -1))
    _, tangent = torch.func.jvp(lambda t: redux.mean(t, 0, True), (x,), (v,))
    torch.testing.assert_close(tangent, v.mean(0, True))
    assert torch.equal(torch.func.jacfwd(lambda t: redux.sum(t, 1))(x), torch.func.jacfwd(lambda t: t.sum(1))(x))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        out = fwAD.unpack_dual(torch.ops.redux.sum(dual, [0], dtype=torch.float32))
        assert out.tangent.dtype == torch.float32 and torch.equal(out.tangent, redux.sum(v, 0, dtype=torch.float32))
        assert fwAD.unpack_dual(redux.sum(dual, dtype=torch.int64)).tangent is None
    assert torch.autograd.gradcheck(lambda t: redux.sum(t, [0]), (x[:3, :4].clone().requires_grad_(),),
                                    check_forward_ad=True)


def test_vmap_with_a_bad_dim_names_the_argument():
    x = torch.ones(3, 4, 5)
    with pytest.raises(IndexError, match=r"redux.sum: argument 'dim' has 2, out of range for a tensor of 2 "
                                         r"dimension\(s\) \(expected in \[-2, 1\]\)"):
        torch.vmap(lambda t: redux.sum(t, 2))(x)
    with pytest.raises(IndexError, match=r"redux.mean: argument 'dim' has -2"):
        torch.vmap(lambda t: redux.mean(t, [0, -2]))(torch.ones(3, 4))
    with pytest.raises(RuntimeError, match="more than once"):
        torch.vmap(lambda t: redux.sum(t, [0, -2]))(x)


def test_vmap_inside_torch_compile():
    x = random_tensor((4, 50), torch.float32, "cpu", seed=16)
    compiled = torch.compile(lambda t: torch.vmap(lambda u: redux.sum(u, -1))(t), fullgraph=True)
    with no_fallback():
        assert torch.equal(compiled(x), redux.sum(x, -1))
