"""torch.ops.redux.logsumexp / softmax / log_softmax: torch's semantics on
redux's sum, against the fp64 answer on random data with an offset; edge
values, determinism, batch invariance, gradients and torch integration."""
import pytest
import torch

import redux
from conftest import DEVICES, on_one_thread, random_tensor

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
CASES = [((1000,), 0), ((7, 1025), 1), ((7, 1025), 0), ((3, 5, 257), -1), ((4, 33, 17), 1), ((), 0)]


def within_ulps(got, want64, dtype, ulps):
    got, want64 = got.cpu(), want64.cpu()
    finite = torch.isfinite(want64)
    assert torch.equal(torch.isfinite(got), finite)
    err = (got.double() - want64)[finite].abs()
    scale = want64[finite].abs().clamp_min(1.0)  # log-domain values near 0: absolute, at the inputs' scale
    assert (err <= ulps * torch.finfo(dtype).eps * scale).all(), err.max()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", CASES)
def test_results_are_within_an_ulp_or_two_of_the_fp64_answer(device, dtype, shape, dim):
    x = random_tensor(shape, dtype, device, seed=abs(hash((shape, dim))) % 1000)
    x64 = x.double().cpu()
    for keepdim in (False, True):
        got = torch.ops.redux.logsumexp(x, [dim], keepdim)
        assert got.dtype == dtype and got.shape == torch.logsumexp(x, [dim], keepdim).shape
        within_ulps(got, torch.logsumexp(x64, [dim], keepdim), dtype, 2)
    for name in ("softmax", "log_softmax"):
        got = getattr(torch.ops.redux, name)(x, dim)
        assert got.dtype == dtype and got.shape == x.shape
        within_ulps(got, getattr(torch, name)(x64, dim), dtype, 2 if dtype != torch.float64 else 64)
    as_double = torch.ops.redux.softmax(x, dim, torch.float64)  # dtype: the input is converted first, as torch does
    assert as_double.dtype == torch.float64 and torch.equal(as_double, torch.ops.redux.softmax(x.double(), dim))


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_give_torchs_answers(device):
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0, 3.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [nan, 1.0, 2.0], [-inf, 0.0, 1.0]],
                        device=device)
    for keepdim in (False, True):
        torch.testing.assert_close(torch.ops.redux.logsumexp(rows, [1], keepdim), torch.logsumexp(rows, [1], keepdim),
                                   equal_nan=True)
    for name in ("softmax", "log_softmax"):
        torch.testing.assert_close(getattr(torch.ops.redux, name)(rows, 1), getattr(torch, name)(rows, 1),
                                   equal_nan=True)
    empty = torch.empty(3, 0, device=device)
    assert torch.equal(torch.ops.redux.logsumexp(empty, [1]), torch.logsumexp(empty, [1]))  # -inf
    assert torch.ops.redux.softmax(empty, 1).shape == (3, 0)
    ints = torch.arange(12, device=device).reshape(3, 4)
    got = torch.ops.redux.logsumexp(ints, [1])
    assert got.dtype == torch.get_default_dtype()
    torch.testing.assert_close(got, torch.logsumexp(ints, [1]))


@pytest.mark.parametrize("device", DEVICES)
def test_an_empty_dim_list_reduces_every_dim(device):
    """dim=[] is every dim, as torch.amax reads it and torch.logsumexp does
    with keepdim (without keepdim torch.logsumexp raises a shape error of
    its own making; docs/design.md, where the results differ from torch's)."""
    x = random_tensor((5, 7, 3), torch.float32, device, seed=8)
    whole = torch.ops.redux.logsumexp(x.flatten(), [0])
    torch.testing.assert_close(torch.ops.redux.logsumexp(x, []), whole)
    kept = torch.ops.redux.logsumexp(x, [], True)
    assert kept.shape == (1, 1, 1) == torch.logsumexp(x, [], True).shape
    assert torch.equal(kept.flatten()[0], torch.ops.redux.logsumexp(x, []))
    torch.testing.assert_close(kept, torch.logsumexp(x, [], True))
    scalar = x[0, 0, 0]
    assert torch.equal(torch.ops.redux.logsumexp(scalar, []), torch.logsumexp(scalar, []))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_raise_errors_naming_the_argument(device):
    x = random_tensor((3, 4), torch.float32, device, seed=1)
    with pytest.raises(RuntimeError, match="redux.softmax: argument 'self' has dtype"):
        torch.ops.redux.softmax(x.long(), 1)
    with pytest.raises(RuntimeError, match="redux.log_softmax: argument 'self' has dtype"):
        torch.ops.redux.log_softmax(x[:0].long(), 1)  # empty too (torch does not check an empty one)
    with pytest.raises(RuntimeError, match="redux.log_softmax: argument 'self' is complex"):
        torch.ops.redux.log_softmax(torch.complex(x, x), 1)
    with pytest.raises(RuntimeError, match="redux.logsumexp: argument 'self' is complex"):
        torch.ops.redux.logsumexp(torch.complex(x, x), [1])
    with pytest.raises(RuntimeError, match="redux.softmax: argument 'dtype' has dtype"):
        torch.ops.redux.softmax(x, 1, torch.float8_e4m3fn)
    with pytest.raises(RuntimeError, match="redux.softmax: argument 'self' has dtype"):
        torch.ops.redux.softmax(x.cpu().to(torch.float8_e5m2).to(device), 1, torch.float32)
    with pytest.raises(IndexError):
        torch.ops.redux.softmax(x, 2)
    with pytest.raises(IndexError):
        torch.ops.redux.logsumexp(x, [-3])


@pytest.mark.parametrize("device", DEVICES)
def test_rows_are_batch_invariant_and_bits_thread_independent(device):
    x = random_tensor((8, 3001), torch.float32, device, seed=2)
    for name in ("softmax", "log_softmax"):
        whole = getattr(torch.ops.redux, name)(x, 1)
        for i in (0, 6):
            assert torch.equal(getattr(torch.ops.redux, name)(x[i:i + 1], 1), whole[i:i + 1])
    lse = torch.ops.redux.logsumexp(x, [1])
    assert torch.equal(torch.ops.redux.logsumexp(x[3:5], [1]), lse[3:5])
    alone = on_one_thread(lambda: torch.ops.redux.logsumexp(x, [0]))
    assert torch.equal(alone, torch.ops.redux.logsumexp(x, [0]))


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_and_torch_integration(device):
    x = random_tensor((3, 4, 5), torch.float64, device, seed=3).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: torch.ops.redux.logsumexp(t, [1, 2]), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.ops.redux.logsumexp(t, [0], True), (x,))
    for name in ("softmax", "log_softmax"):
        assert torch.autograd.gradcheck(lambda t: getattr(torch.ops.redux, name)(t, -1), (x,))
    y = random_tensor((6, 40), torch.float32, device, seed=4)
    torch.library.opcheck(torch.ops.redux.logsumexp.default, (y, [1], True))
    torch.library.opcheck(torch.ops.redux.softmax.default, (y, 1))
    torch.library.opcheck(torch.ops.redux.log_softmax.default, (y, 0, torch.float64))
    per_row = torch.vmap(lambda t: torch.ops.redux.softmax(t, 0))(y)
    assert torch.equal(per_row, torch.ops.redux.softmax(y, 1))
    step = lambda t: torch.ops.redux.log_softmax(t * 1.5, 1) + torch.ops.redux.logsumexp(t, [1], True)  # noqa: E731
    assert torch.equal(torch.compile(step, fullgraph=True)(y), step(y))


def test_python_entries_are_the_ops():
    x = random_tensor((5, 33), torch.float32, "cpu", seed=5)
    assert torch.equal(redux.logsumexp(x, 1), torch.ops.redux.logsumexp(x, [1]))
    assert torch.equal(redux.softmax(x, 0), torch.ops.redux.softmax(x, 0))
    assert torch.equal(redux.log_softmax(x, -1, dtype=torch.float64), torch.ops.redux.log_softmax(x, -1, torch.float64))
