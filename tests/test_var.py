"""torch.ops.redux.var / std / var_mean: torch.var's semantics in two passes
on redux's sum, against torch and an fp64 reference on random data with an
offset; their determinism, batch invariance, gradients and torch
integration."""
import zlib

import pytest
import torch

import redux
from conftest import DEVICES, on_one_thread, ops_called, random_tensor

SHAPES_DIMS = [((1000,), None), ((7, 1025), [1]), ((7, 1025), [0]), ((3, 5, 257), [-1]), ((3, 5, 257), [0, 2]),
               ((2, 3, 4, 5), [1, 3]), ((), None), ((6, 4), [])]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def same(a, b):
    """Equal bits, nan included."""
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.isnan(), b.isnan()) and torch.equal(
        a.nan_to_num(0.0), b.nan_to_num(0.0))


def close_to_fp64(got, x, op, dim, correction, keepdim):
    """Within an ulp or two of the result dtype from torch's fp64 answer
    (float64 results: within the fp64 answer's own error, a few dozen ulps)."""
    want = getattr(torch, op)(x.double().cpu(), dim, correction=correction, keepdim=keepdim)
    got = got.double().cpu()
    finite = torch.isfinite(want)
    assert torch.equal(torch.isfinite(got), finite) and torch.equal(got[~finite].isnan(), want[~finite].isnan())
    eps = torch.finfo(x.dtype).eps * (64 if x.dtype == torch.float64 else 2)
    assert ((got - want).abs()[finite] <= eps * want.abs()[finite] + 1e-300).all(), (got, want)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # torch's, for its own var
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_std_var_mean_match_torch_and_the_fp64_answer(device, dtype, shape, dim, keepdim):
    x = random_tensor(shape, dtype, device, seed=zlib.crc32(repr((shape, dim, keepdim)).encode()) % 1000)
    for correction in (None, 0, 1, 2.5):
        var = torch.ops.redux.var(x, dim, correction=correction, keepdim=keepdim)
        std = torch.ops.redux.std(x, dim, correction=correction, keepdim=keepdim)
        var2, mean = torch.ops.redux.var_mean(x, dim, correction=correction, keepdim=keepdim)
        want = torch.var(x, dim, correction=correction, keepdim=keepdim)
        for got in (var, std, var2, mean):
            assert got.shape == want.shape and got.dtype == want.dtype and got.device == x.device
        assert same(var, var2)
        close_to_fp64(var, x, "var", dim, correction, keepdim)
        close_to_fp64(std, x, "std", dim, correction, keepdim)
        # the mean of var_mean is redux.mean's, bit for bit
        assert same(mean, torch.ops.redux.mean(x, dim, keepdim))


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_give_torchs_answers(device):
    x = random_tensor((4, 9), torch.float32, device, seed=3)
    cases = {
        "empty": x[:, :0],
        "one element, correction 1": x[:, :1],
        "inf": torch.cat([x, torch.full((4, 1), float("inf"), device=device)], 1),
        "nan": torch.cat([x, torch.full((4, 1), float("nan"), device=device)], 1),
        "constant": torch.full((4, 9), 3.25, device=device),
    }
    for what, t in cases.items():
        for op in ("var", "std"):
            got, want = getattr(torch.ops.redux, op)(t, [1]), getattr(torch, op)(t, [1])
            torch.testing.assert_close(got, want, equal_nan=True, msg=f"{op} of {what}")
    assert torch.equal(torch.ops.redux.var(torch.full((5,), 3.25, device=device)), torch.zeros((), device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_an_empty_reduction_is_nan_whatever_the_correction(device):
    """torch makes the variance of no elements NaN even where N - correction
    is positive (a negative correction), and so does redux."""
    x = random_tensor((3, 4, 5), torch.float32, device, seed=6)
    inputs = {"last dim": (x[:, :, :0], [2]), "middle dim": (x[:, :0, :], [1]), "first dim": (x[:0], [0]),
              "all": (x[:0], None), "strided": (x.transpose(0, 2)[:, :0], [1])}
    for what, (t, dim) in inputs.items():
        for correction in (-2, -0.5, 0, 1, None):
            for dtype in (torch.float32, torch.float64, torch.bfloat16):
                u = t.to(dtype)
                want_var, want_mean = torch.var_mean(u, dim, correction=correction)
                var, mean = torch.ops.redux.var_mean(u, dim, correction=correction)
                std = torch.ops.redux.std(u, dim, correction=correction, keepdim=True)
                assert want_var.isnan().all() and var.shape == want_var.shape, (what, correction, dtype)
                torch.testing.assert_close(var, want_var, equal_nan=True, msg=f"var_mean of {what}")
                torch.testing.assert_close(mean, want_mean, equal_nan=True, msg=f"mean of {what}")
                torch.testing.assert_close(std, torch.std(u, dim, correction=correction, keepdim=True),
                                           equal_nan=True, msg=f"std of {what}")


@pytest.mark.parametrize("device", DEVICES)
def test_std_of_a_constant_row_has_torchs_zero_gradient(device):
    """sqrt's slope is infinite at 0; torch's std backward gives 0 where the
    std is 0, and so does redux's (not the nan of inf times 0)."""
    x = random_tensor((4, 6, 5), torch.float64, device, seed=11)
    x[:, :, 3] = -1.0  # constant columns along dim 1
    x[1] = 2.5  # constant rows along dims 1 and 2
    for dtype in (torch.float64, torch.float32):
        for dim in ([1], [2], [1, 2]):
            grads = []
            for std in (torch.ops.redux.std, torch.std):
                t = x.detach().clone().to(dtype).requires_grad_()
                out = std(t, dim, correction=0)
                assert (out == 0).any(), dim
                out.sum().backward()
                grads.append(t.grad)
            assert not grads[0].isnan().any(), (dtype, dim)
            torch.testing.assert_close(grads[0], grads[1], msg=f"{dtype}, dim {dim}")


@pytest.mark.parametrize("device", DEVICES)
def test_var_with_no_degrees_of_freedom_has_a_nan_gradient(device):
    """Where N - correction <= 0 the variance is inf or NaN (torch warns);
    redux's gradient there is NaN, torch's formula divides by N - correction
    unclamped (docs/design.md, where the results differ from torch's)."""
    x = random_tensor((3, 2), torch.float64, device, seed=12).requires_grad_()
    with pytest.warns(UserWarning, match="degrees of freedom"):
        want = torch.var(x, 1, correction=3)
    got = torch.ops.redux.var(x, [1], correction=3)
    torch.testing.assert_close(got, want)
    got.sum().backward()
    assert x.grad.isnan().all()


@pytest.mark.parametrize("device", DEVICES)
def test_var_means_mean_of_an_infinite_row_is_torch_means(device):
    """torch.var_mean's mean of a row holding inf is NaN (its running mean
    takes inf - inf); redux's is the row's mean, torch.mean's inf
    (docs/design.md, where the results differ from torch's)."""
    x = random_tensor((4, 9), torch.float32, device, seed=7)
    x[1, 3], x[2, 0] = float("inf"), float("-inf")
    var, mean = torch.ops.redux.var_mean(x, [1])
    assert same(mean, torch.ops.redux.mean(x, [1]))
    torch.testing.assert_close(mean, torch.mean(x, 1))
    assert mean[1].item() == float("inf") and mean[2].item() == float("-inf")
    torch.testing.assert_close(var, torch.var(x, 1), equal_nan=True)  # inf - inf: NaN in both


@pytest.mark.parametrize("device", DEVICES)
def test_complex_is_the_variance_of_both_parts(device):
    x = torch.complex(random_tensor((5, 300), torch.float32, device, seed=4),
                      random_tensor((5, 300), torch.float32, device, seed=5))
    var, mean = torch.ops.redux.var_mean(x, [1], correction=0)
    want_var, want_mean = torch.var_mean(x, [1], correction=0)
    assert var.dtype == torch.float32 and mean.dtype == torch.complex64
    torch.testing.assert_close(var, want_var)
    torch.testing.assert_close(mean, want_mean)
    torch.testing.assert_close(torch.ops.redux.std(x), torch.std(x))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_raise_torchs_error_types(device):
    for dtype in (torch.int64, torch.int32, torch.bool):
        with pytest.raises(RuntimeError, match=r"redux.var: argument 'self' has dtype"):
            torch.ops.redux.var(torch.ones(3, 4, dtype=dtype, device=device))
        with pytest.raises(RuntimeError):
            torch.var(torch.ones(3, 4, dtype=dtype, device=device))
    x = random_tensor((3, 4), torch.float32, device, seed=6)
    with pytest.raises(IndexError):
        torch.ops.redux.std(x, [2])
    with pytest.raises(IndexError):
        torch.std(x, [2])


@pytest.mark.parametrize("device", DEVICES)
def test_bits_are_batch_invariant_and_thread_independent(device):
    x = random_tensor((8, 3001), torch.float32, device, seed=7)
    whole = torch.ops.redux.var(x, [1])
    for i in (0, 5):
        assert torch.equal(torch.ops.redux.var(x[i:i + 1], [1]), whole[i:i + 1])
    alone = on_one_thread(lambda: torch.ops.redux.var_mean(x, [0]))
    assert all(torch.equal(a, b) for a, b in zip(alone, torch.ops.redux.var_mean(x, [0])))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_deviations_squared_in_the_read_keep_the_composites_bits(device, dtype):
    """Without a gradient the fp64 deviations' squares are summed by
    redux::_sum_of; with one, by the composite's product and redux.sum: the
    same products and tree, so the same bits."""
    cases = [((4100, 130), [0]), ((300, 33, 5), [1]), ((7, 1025), [0])]  # columns: no row kernel either way
    if dtype == torch.float64:  # the row kernels read float32 and narrower
        cases += [((70001,), None), ((6, 5000), [1])]
    for shape, dim in cases:
        x = random_tensor(shape, dtype, device, seed=len(shape), offset=2.5)
        for op in (torch.ops.redux.var, torch.ops.redux.std):
            fast = op(x, dim)
            recorded = op(x.clone().requires_grad_(), dim)
            assert recorded.requires_grad and same(fast, recorded.detach()), (op, shape)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_and_torch_integration(device):
    x = random_tensor((3, 4, 5), torch.float64, device, seed=8).requires_grad_()
    for dim, correction in ((None, None), ([1], 0), ([0, 2], 2)):
        assert torch.autograd.gradcheck(lambda t: torch.ops.redux.var(t, dim, correction=correction), (x,))
        assert torch.autograd.gradcheck(lambda t: torch.ops.redux.std(t, dim, correction=correction), (x,))
        assert torch.autograd.gradcheck(lambda t: torch.ops.redux.var_mean(t, dim, correction=correction), (x,))
    y = random_tensor((6, 40), torch.float32, device, seed=9)
    for op in (torch.ops.redux.var.default, torch.ops.redux.std.default, torch.ops.redux.var_mean.default):
        torch.library.opcheck(op, (y, [1]), {"correction": 0, "keepdim": True})
        torch.library.opcheck(op, (y,), {})
    per_row = torch.vmap(lambda t: torch.ops.redux.var(t, [0], correction=0))(y)
    assert same(per_row, torch.ops.redux.var(y, [1], correction=0))
    compiled = torch.compile(lambda t: torch.ops.redux.var_mean(t * 1.5, [1], keepdim=True), fullgraph=True)
    eager = torch.ops.redux.var_mean(y * 1.5, [1], keepdim=True)
    assert all(torch.equal(a, b) for a, b in zip(compiled(y), eager))


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_combine_their_pieces_moments_with_the_contracts(device):
    """var, std and var_mean of rows longer than a row kernel takes: each
    piece's moments by the row kernel in fp64, combined by the parallel-
    moments rule; one rounding of the fp64 answer for every correction,
    batch-invariant, the same bits on one thread and compiled."""
    max_n = redux._C.row_kernel_max_n()
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        # the last: a row of the longest pieces
        for shape, dim in (((max_n + 1,), None), ((3, 5 * max_n + 77), [1]), ((2, 3, max_n), [1, 2]),
                           (((1 << 22) + 3,), None)):
            x = random_tensor(shape, dtype, device, seed=sum(shape))
            for correction in (0, 1, 2 * x.numel()):
                for keepdim in (False, True):
                    var, mean = torch.ops.redux.var_mean(x, dim, correction=correction, keepdim=keepdim)
                    std = torch.ops.redux.std(x, dim, correction=correction, keepdim=keepdim)
                    want_var, want_mean = torch.var_mean(x.cpu().double(), dim, correction=correction,
                                                         keepdim=keepdim)
                    for got, want in ((var, want_var), (mean, want_mean), (std, want_var.sqrt())):
                        assert got.dtype == dtype and got.shape == want.shape
                        got = got.double().cpu()
                        if correction > x.numel():  # a negative divisor is 0: inf, as torch's
                            assert torch.equal(got, want.to(dtype).double()), (shape, dtype)
                            continue
                        err = (got - want).abs()
                        assert (err <= torch.finfo(dtype).eps * want.abs()).all(), (shape, dtype, correction)
    x = random_tensor((5, 3 * max_n + 1000), torch.float32, device, seed=6)
    whole = torch.ops.redux.var_mean(x, [1])
    names = ops_called(lambda: torch.ops.redux.var_mean(x, [1]))  # the pieces read in place, combined by redux
    assert "redux::_moment_rows" in names and not names & {"aten::clone", "aten::copy_", "aten::cat", "aten::mul"}
    for i in (0, 3):
        for got, want in zip(torch.ops.redux.var_mean(x[i:i + 1], [1]), whole):
            assert torch.equal(got, want[i:i + 1])
    for got, want in zip(on_one_thread(lambda: torch.ops.redux.var_mean(x, [1])), whole):
        assert torch.equal(got, want)
    std = torch.compile(lambda t: torch.ops.redux.std(t, [1]), fullgraph=True)(x)
    assert torch.equal(std, torch.ops.redux.std(x, [1]))


def test_python_entries_are_the_ops():
    x = random_tensor((5, 33), torch.float32, "cpu", seed=10)
    assert torch.equal(redux.var(x, 1, correction=0), torch.ops.redux.var(x, [1], correction=0))
    assert torch.equal(redux.std(x, keepdim=True), torch.ops.redux.std(x, keepdim=True))
    assert all(torch.equal(a, b) for a, b in zip(redux.var_mean(x, [0]), torch.ops.redux.var_mean(x, [0])))
