"""torch.ops.redux.mean: torch.mean's semantics on redux's sum kernels,
checked against an fp64 reference on random data with an offset."""
import zlib

import pytest
import torch

import redux
from conftest import DEVICES, on_one_thread, ops_called, random_tensor

SHAPES_DIMS = [((1000,), None), ((7, 1025), [1]), ((7, 1025), [0]), ((3, 5, 257), [-1]), ((3, 5, 257), [0, 2]),
               ((4, 33, 17), [1]), ((2, 3, 4, 5), [1, 3]), ((), None), ((6, 4), [])]


def reference_mean(x, dim, keepdim, out_dtype):
    xd = x.double().cpu()
    dims = list(range(x.dim())) if not dim else dim
    ref = xd.mean(dims, keepdim=keepdim) if x.dim() else xd
    return ref.to(out_dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_mean_matches_torch_semantics_and_fp64_reference(device, dtype, shape, dim, keepdim):
    x = random_tensor(shape, dtype, device, seed=zlib.crc32(repr((shape, dim, keepdim)).encode()) % 1000)
    got = torch.ops.redux.mean(x, dim, keepdim)
    expect = torch.mean(x, dim, keepdim=keepdim) if dim is not None else torch.mean(x)
    if dim is None and keepdim:
        expect = torch.mean(x, list(range(x.dim())), keepdim=True) if x.dim() else expect
    assert got.shape == expect.shape and got.dtype == expect.dtype and got.device == x.device
    ref = reference_mean(x, dim, keepdim, torch.float64)
    # float64: the reference is torch's plain fp64 mean, itself off by up to
    # ~n ulp; redux's compensated sum is closer to exact
    tol = {torch.float32: 2e-7, torch.float64: 1e-13, torch.float16: 1e-3, torch.bfloat16: 8e-3}[dtype]
    assert torch.allclose(got.double().cpu(), ref.reshape(got.shape), rtol=tol, atol=0), (got, ref)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_dtype_argument_and_integers(device):
    x = random_tensor((40, 30), torch.int64, device, seed=3)
    got = torch.ops.redux.mean(x, [1], False, dtype=torch.float32)
    assert got.dtype == torch.float32 and torch.allclose(got, torch.mean(x, 1, dtype=torch.float32))
    with pytest.raises(RuntimeError, match="redux.mean: argument 'self' has dtype Long"):
        torch.ops.redux.mean(x)
    with pytest.raises(RuntimeError, match="redux.mean: argument 'dtype' has dtype Int"):
        torch.ops.redux.mean(x.float(), dtype=torch.int32)
    with pytest.raises(RuntimeError, match="redux.mean: argument 'self' has dtype ComplexFloat"):
        torch.ops.redux.mean(torch.ones(3, dtype=torch.complex64, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_mean_of_nothing_is_nan_like_torch(device):
    x = torch.empty(0, 5, device=device)
    assert torch.isnan(torch.ops.redux.mean(x)).item()
    got, expect = torch.ops.redux.mean(x, [0]), torch.mean(x, 0)
    assert got.shape == expect.shape and torch.isnan(got).all()
    assert torch.ops.redux.mean(torch.empty(5, 0, device=device), [0]).shape == (0,)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_is_the_sum_divided_once(device):
    """One rounding: the fp64 sum of float32 data divided in fp64, then cast."""
    x = random_tensor((3, 4099), torch.float32, device, seed=11)
    wide = torch.ops.redux.sum(x, [1], False, dtype=torch.float64)
    assert torch.equal(torch.ops.redux.mean(x, [1]), (wide / 4099).float())
    assert torch.equal(redux.mean(x, 1), torch.ops.redux.mean(x, [1]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_the_mean_without_a_gradient_divides_into_its_dtype_with_the_same_bits(device, dtype):
    """No gradient recorded: float32 and float64 in one kernel
    (redux::_one_pass_mean, the division in the tree's finish); float16 and
    bfloat16 one division that writes the result dtype (on CUDA no separate
    cast; torch's CPU division casts through a copy); the bits of the
    differentiable path, nan for nothing."""
    for shape, dim in (((3, 4099), [1]), ((33, 7), [0]), ((5, 6, 7), [0, 2]), ((1000,), None), ((0, 4), [0])):
        x = random_tensor(shape, dtype, device, seed=len(shape) + shape[0])
        fast = torch.ops.redux.mean(x, dim)
        recorded = torch.ops.redux.mean(x.clone().requires_grad_(), dim).detach()
        assert fast.dtype == recorded.dtype == dtype and fast.shape == recorded.shape
        assert torch.equal(fast, recorded) or (x.numel() == 0 and fast.isnan().all() and recorded.isnan().all())
    x = random_tensor((4, 9), dtype, device, seed=3)
    names = ops_called(lambda: torch.ops.redux.mean(x, [1]))
    if dtype in (torch.float32, torch.float64):
        assert "redux::_one_pass_mean" in names and not names & {"aten::div", "redux::sum"}, sorted(names)
    else:
        assert "aten::div" in names
    if device == "cuda":
        assert not names & {"aten::_to_copy", "aten::copy_"}, sorted(names)
    # traced and transformed calls keep the functional path, with the same bits
    want = torch.ops.redux.mean(x, [1])
    assert torch.equal(torch.vmap(lambda r: torch.ops.redux.mean(r, [0]))(x), want)
    assert torch.equal(torch.compile(lambda t: torch.ops.redux.mean(t, [1]), fullgraph=True)(x), want)


@pytest.mark.parametrize("device", DEVICES)
def test_mean_gradient_is_torchs(device):
    x = random_tensor((5, 7, 3), torch.float32, device, seed=5).requires_grad_()
    g = random_tensor((5, 3), torch.float32, device, seed=6)
    (gr,) = torch.autograd.grad(torch.ops.redux.mean(x, [1]), x, g)
    (gt,) = torch.autograd.grad(torch.mean(x, 1), x, g)
    # g / n rounded once (the division runs in fp64) against torch's, which
    # may multiply by 1/n (CUDA does): within one rounding of each other
    assert torch.allclose(gr, gt, rtol=2**-23, atol=0)
    xd = random_tensor((3, 4), torch.float64, device, seed=7).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.ops.redux.mean(t, [0], True), (xd,))


@pytest.mark.parametrize("device", DEVICES)
def test_mean_opcheck(device):
    x = random_tensor((6, 9), torch.float32, device, seed=8)
    torch.library.opcheck(torch.ops.redux.mean.default, (x, [1], True))
    torch.library.opcheck(torch.ops.redux.mean.default, (x,), {"dtype": torch.float64})


@pytest.mark.parametrize("device", DEVICES)
def test_the_mean_dtype_table_is_the_rule_the_op_follows(device):
    """redux._C.mean_dtypes() (read by redux.distributed.mean) names the
    sum's dtype of each result dtype: the op's bits are that sum, divided
    once, rounded once."""
    table = redux._C.mean_dtypes()
    assert {out for out, _ in table} == {"float32", "float64", "float16", "bfloat16"}
    for out, wide in table:
        x = random_tensor((37, 1001), getattr(torch, out), device, seed=5)
        summed = torch.ops.redux.sum(x, [1], dtype=getattr(torch, wide))
        assert torch.equal(torch.ops.redux.mean(x, [1]), summed.div(1001).to(x.dtype)), (out, wide)


# the families of the one-kernel mean: full (short, chunked, the wide tree),
# rows (lane groups, long rows), columns (tile kernel, float32 strips)
ONE_PASS_CASES = [((1000,), None), (((1 << 20) + 3,), None), ((37, 1025), [1]), ((5, 70001), [1]),
                  ((300, 33, 5), [1]), ((4100, 128), [0]), ((2, 513, 64), [1]), ((3, 5, 257), [0, 2])]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_one_kernel_mean_has_the_composites_bits_in_every_family(device, dtype):
    """redux::_one_pass_mean (no gradient) against the differentiable
    composite (redux.sum in fp64, torch's division, the cast): equal bits;
    independent of the grid and the thread count; a row's bits in any
    batch; a strided input as its dense copy."""
    grids = (1, 3, 7, 64) if device == "cuda" else (1, 2, 5)
    for shape, dim in ONE_PASS_CASES:
        x = random_tensor(shape, dtype, device, seed=sum(shape) % 997, offset=-1.5)
        fast = torch.ops.redux.mean(x, dim)
        assert torch.equal(fast, torch.ops.redux.mean(x.clone().requires_grad_(), dim).detach()), shape
        assert torch.equal(torch.ops.redux._one_pass_mean(x, dim), fast)
        for grid in grids:
            assert torch.equal(torch.ops.redux._one_pass_mean(x, dim, grid=grid), fast), (shape, grid)
        assert torch.equal(on_one_thread(lambda: torch.ops.redux.mean(x, dim)), fast)
    x = random_tensor((9, 70001), dtype, device, seed=4)
    whole = torch.ops.redux.mean(x, [1])
    for i in (0, 8):
        assert torch.equal(torch.ops.redux.mean(x[i:i + 1], [1]), whole[i:i + 1])
    view = random_tensor((64, 300), dtype, device, seed=5)[:, ::3]
    assert torch.equal(torch.ops.redux._one_pass_mean(view, [0]), torch.ops.redux._one_pass_mean(view.contiguous(), [0]))


@pytest.mark.parametrize("device", DEVICES)
def test_the_one_kernel_mean_edges_errors_and_integration(device):
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0], [inf, 1.0], [inf, -inf], [nan, 0.0]], device=device)
    torch.testing.assert_close(torch.ops.redux._one_pass_mean(rows, [1]), rows.mean(1), equal_nan=True)
    assert torch.ops.redux._one_pass_mean(torch.empty(0, 3, device=device), [0]).isnan().all()
    assert torch.ops.redux._one_pass_mean(torch.empty(3, 0, device=device), [0]).shape == (0,)
    with pytest.raises(RuntimeError, match="argument 'self' has dtype Half"):
        torch.ops.redux._one_pass_mean(rows.half(), [1])
    with pytest.raises(RuntimeError, match="argument 'grid'"):
        torch.ops.redux._one_pass_mean(rows, [1], grid=-1)
    x = random_tensor((6, 40), torch.float32, device, seed=6)
    torch.library.opcheck(torch.ops.redux._one_pass_mean.default, (x, [1], True))
    assert torch.equal(torch.vmap(lambda r: torch.ops.redux._one_pass_mean(r))(x), torch.ops.redux.mean(x, [1]))
