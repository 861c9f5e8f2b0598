"""torch.vmap over redux's ops (redux/batching.py): the ops' own batching
rules, not torch's per-sample fallback. sum and mean: each sample's bits
where the sample reduces its trailing dims or all of them; the other ops:
each sample's bits wherever it reduces, in one call for trailing dims. torch.func's other
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


def per_sample(fn, x, in_dim=0):
    """fn on each sample of x along in_dim, stacked (each output of an op of several)."""
    results = [fn(x.select(in_dim, i)) for i in range(x.shape[in_dim])]
    if isinstance(results[0], tuple):
        return tuple(torch.stack(parts) for parts in zip(*results))
    return torch.stack(results)


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


R = torch.ops.redux
# (name, one sample's call) for every op whose rule is not sum's; dims of a 33 x 130 sample
OTHER_OPS = [
    *[(f"var{d}", lambda t, d=d: R.var(t, d)) for d in (None, [-1], [0], [0, 1])],
    ("std_keepdim", lambda t: R.std(t, [1], correction=0, keepdim=True)),
    ("std_cols_keepdim", lambda t: R.std(t, [0], correction=2, keepdim=True)),
    *[(f"var_mean{d}", lambda t, d=d: R.var_mean(t, d, keepdim=True)) for d in (None, [1], [0])],
    *[(f"vector_norm{o}{d}", lambda t, o=o, d=d: R.vector_norm(t, o, d))
      for o in (0, 1, 2, float("inf"), float("-inf")) for d in (None, [1], [0])],
    ("vector_norm_dtype", lambda t: R.vector_norm(t, 2, [1], True, dtype=torch.float64)),
    *[(f"logsumexp{d}", lambda t, d=d: R.logsumexp(t, d)) for d in ([], [1], [0], [0, 1])],
    ("logsumexp_keepdim", lambda t: R.logsumexp(t, [-1], True)),
    *[(f"{op}{d}", lambda t, op=op, d=d: getattr(R, op)(t, d))
      for op in ("softmax", "log_softmax") for d in (0, 1, -1)],
    ("softmax_dtype", lambda t: R.softmax(t, -1, torch.float64)),
]


def same_results(got, want):
    """The same shapes, dtypes and bits (NaNs included), output by output."""
    got, want = (got if isinstance(got, tuple) else (got,)), (want if isinstance(want, tuple) else (want,))
    assert len(got) == len(want)
    as_int = {2: torch.int16, 4: torch.int32, 8: torch.int64}
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert torch.equal(g.view(as_int[g.element_size()]), w.view(as_int[w.element_size()]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("in_dim", [0, 1, -1])
@pytest.mark.parametrize("name,fn", OTHER_OPS, ids=[name for name, _ in OTHER_OPS])
def test_vmap_of_every_other_op_gives_each_samples_bits(device, in_dim, name, fn):
    x = random_tensor(SHAPE, torch.float32, device, seed=21, offset=0.5)
    with no_fallback():
        got = torch.vmap(fn, in_dims=in_dim)(x)
    same_results(got, per_sample(fn, x, in_dim))


def calls_of(op, vmapped):
    """How many times the batching rule of redux::op called the op, in
    vmapped() (the CPU-side profiler counts the vmapped call itself too)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        vmapped()
    return sum(e.count for e in prof.key_averages() if e.key == f"redux::{op}") - 1


def test_a_samples_trailing_dims_take_one_call_and_its_columns_one_a_sample():
    """Rows (and full reductions) are batch-invariant, so the batch goes in
    one call; over a sample's leading dims the rule calls the op per sample."""
    x = random_tensor(SHAPE, torch.float32, "cpu", seed=22)
    with no_fallback():
        assert calls_of("var", lambda: torch.vmap(lambda t: R.var(t, [-1]))(x)) == 1
        assert calls_of("var", lambda: torch.vmap(lambda t: R.var(t))(x)) == 1
        assert calls_of("var", lambda: torch.vmap(lambda t: R.var(t, [0]))(x)) == SHAPE[0]
        assert calls_of("softmax", lambda: torch.vmap(lambda t: R.softmax(t, -1), in_dims=2)(x)) == 1
        assert calls_of("log_softmax", lambda: torch.vmap(lambda t: R.log_softmax(t, 0), in_dims=1)(x)) == SHAPE[1]
        assert calls_of("amax", lambda: torch.vmap(lambda t: R.amax(t, [0]))(x)) == 1  # exact: one call anywhere


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_of_a_general_p_norm_keeps_each_samples_bits(device):
    """|x|^p and the root are redux::_pow_each, which rounds an element the
    same at every place: each sample's bits, over rows and over columns."""
    x = random_tensor(SHAPE, torch.float32, device, seed=23)
    for p, dtype in ((3, None), (0.5, torch.float64), (-1.5, None), (7.25, torch.float64)):
        for dim in ([-1], [0]):
            fn = lambda t: R.vector_norm(t, p, dim, dtype=dtype)  # noqa: E731
            with no_fallback():
                got = torch.vmap(fn)(x)
            same_results(got, per_sample(fn, x))


@pytest.mark.parametrize("device", DEVICES)
def test_vmap_of_0_dim_samples_of_every_other_op(device):
    x = random_tensor((7,), torch.float32, device, seed=24)
    calls = [lambda t: R.var(t), lambda t: R.var_mean(t, [0], keepdim=True), lambda t: R.std(t, None, correction=0),
             lambda t: R.logsumexp(t, [0], True), lambda t: R.vector_norm(t, 2, [0], True),
             lambda t: R.softmax(t, 0), lambda t: R.log_softmax(t, -1)]
    with no_fallback():
        for fn in calls:  # var of one element is NaN: same_results compares bits
            same_results(torch.vmap(fn)(x), per_sample(fn, x))
        y = random_tensor((3, 4, 50), torch.float32, device, seed=25)
        nested = torch.vmap(torch.vmap(lambda t: R.logsumexp(t, [0])), in_dims=1)(y)
    assert torch.equal(nested, R.logsumexp(y, [-1]).T)


@pytest.mark.parametrize("device", DEVICES)
def test_per_sample_gradients_through_the_other_ops(device):
    """vmap of grad and grad through vmap, over rows (one call) and over
    columns (a call a sample), against each sample's own gradient."""
    x = random_tensor((5, 7, 9), torch.float64, device, seed=27)
    losses = [lambda t: R.var(t, [0]).sum(), lambda t: R.var(t, [-1]).sum(), lambda t: R.softmax(t, 0)[0].sum(),
              lambda t: R.logsumexp(t, [0]).sum(), lambda t: R.vector_norm(t, 2, [0]).sum()]
    for loss in losses:
        want = per_sample(torch.func.grad(loss), x)
        y = x.clone().requires_grad_()
        with no_fallback():
            vmapped_grads = torch.vmap(torch.func.grad(loss))(x)
            torch.vmap(loss)(y).sum().backward()
        torch.testing.assert_close(vmapped_grads, want, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(y.grad, want, rtol=1e-12, atol=1e-12)


def test_vmap_of_the_other_ops_with_a_bad_dim_names_the_argument():
    x = torch.ones(3, 4, 5)
    for op, call in (("var", lambda t: R.var(t, [2])), ("logsumexp", lambda t: R.logsumexp(t, [-3])),
                     ("vector_norm", lambda t: R.vector_norm(t, 2, [2])), ("softmax", lambda t: R.softmax(t, 2))):
        with pytest.raises(IndexError, match=rf"redux.{op}: argument 'dim' has -?\d, out of range for a tensor of 2 "):
            torch.vmap(call)(x)


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
        y = random_tensor((4, 6, 50), torch.float32, "cpu", seed=26)
        for fn in (lambda t: torch.vmap(lambda u: R.var_mean(u, [-1]))(t),  # one call
                   lambda t: torch.vmap(lambda u: R.softmax(u, 0), in_dims=1)(t)):  # one a sample
            same_results(torch.compile(fn, fullgraph=True)(y), fn(y))
