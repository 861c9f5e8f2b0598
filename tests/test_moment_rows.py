"""redux::_moment_rows, the CPU's one-kernel var / std / var_mean along the
last dim that the composites take where no gradient is recorded: against
the fp64 answer on random data with an offset at lengths around powers of
two, torch's edge values, batch, thread-count and alignment invariance,
when it is taken, and its errors."""
import pytest
import torch

import redux  # noqa: F401  (loads the ops)
from conftest import DEVICES, on_one_thread, ops_called, random_tensor

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
LENGTHS = [1, 2, 3, 15, 16, 17, 255, 1024, 1025, 8191, 65536]



@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_within_one_rounding_of_the_fp64_answer(dtype, n):
    x = random_tensor((3, n), dtype, "cpu", seed=n)
    x64 = x.double()
    info = torch.finfo(dtype)
    for correction in (0, 1, 2):
        if n - correction <= 0:
            continue
        var, mean = torch.ops.redux._moment_rows(x, float(n - correction), False)
        std, _ = torch.ops.redux._moment_rows(x, float(n - correction), True)
        want_var, want_mean = torch.var_mean(x64, -1, correction=correction)
        for got, want in ((var, want_var), (mean, want_mean), (std, want_var.sqrt())):
            assert got.dtype == dtype and got.shape == want.shape
            err = (got.double() - want).abs()
            assert (err <= info.eps * want.abs() + info.tiny * info.eps).all(), (correction, err.max().item())


def test_edge_values_give_torchs_answers():
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0, 3.0, 4.0], [nan, 1.0, 2.0, 3.0], [inf, 1.0, 2.0, 3.0], [-inf, -inf, 0.0, 1.0],
                         [5.0, 5.0, 5.0, 5.0], [3e38, 3e38, 0.0, 0.0]])
    for dtype in DTYPES:
        x = rows.to(dtype)
        for correction in (0, 1, 4, 5):
            var, mean = torch.ops.redux.var_mean(x, [-1], correction=correction)
            want = torch.var(x.float(), -1, correction=correction)
            torch.testing.assert_close(var, want.to(dtype), equal_nan=True, msg=f"{dtype} {correction}")
            # the mean is the fp64 mean, rounded (torch.var_mean's own gives nan beside an
            # inf; torch.mean's float32 sum overflows on the last row)
            torch.testing.assert_close(mean, torch.mean(x.double(), -1).to(dtype), equal_nan=True)
        torch.testing.assert_close(torch.ops.redux.std(x, [-1]), torch.std(x.float(), -1).to(dtype), equal_nan=True)


def test_bits_depend_on_the_row_alone():
    for n in (17, 1025, 8191):
        x = random_tensor((9, n), torch.float32, "cpu", seed=7)
        whole = torch.ops.redux._moment_rows(x, float(n - 1), False)
        for i in (0, 4, 8):
            part = torch.ops.redux._moment_rows(x[i:i + 1], float(n - 1), False)
            assert all(torch.equal(p, w[i:i + 1]) for p, w in zip(part, whole))
        shifted = torch.empty(9 * n + 1)[1:].view(9, n).copy_(x)
        assert all(torch.equal(a, b) for a, b in zip(torch.ops.redux._moment_rows(shifted, float(n - 1), False), whole))
        one = on_one_thread(lambda: torch.ops.redux._moment_rows(x, float(n - 1), False))
        assert all(torch.equal(a, b) for a, b in zip(one, whole))


@pytest.mark.parametrize("device", DEVICES)
def test_the_composites_take_it_on_the_cpu_where_no_gradient_is_recorded(device):
    x = random_tensor((4, 6, 300), torch.float32, device, seed=8)
    calls = {"var": lambda t: torch.ops.redux.var(t, [-1]),
             "std": lambda t: torch.ops.redux.std(t, [2], correction=0, keepdim=True),
             "var_mean": lambda t: torch.ops.redux.var_mean(t, [-1], keepdim=True)}
    for name, call in calls.items():
        names = ops_called(lambda: call(x))
        assert ("redux::_moment_rows" in names) == (device == "cpu"), name  # no CUDA kernel yet
        g = x.clone().requires_grad_()
        names = ops_called(lambda: call(g))
        assert "redux::_moment_rows" not in names and "redux::sum" in names, name  # differentiable: the composite
        got, want = call(x), call(g)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert a.shape == b.shape and a.dtype == b.dtype, name
            torch.testing.assert_close(a, b.detach(), rtol=2e-7, atol=1e-7)
    for call in (lambda: torch.ops.redux.var(x, [1]), lambda: torch.ops.redux.var(x.double(), [-1]),
                 lambda: torch.ops.redux.var(x, [1, 2])):
        assert "redux::_moment_rows" not in ops_called(call)


def test_compiled_vmapped_and_checked():
    x = random_tensor((6, 129), torch.float32, "cpu", seed=10)
    step = lambda t: torch.ops.redux.var(t * 0.5, [-1]) + torch.ops.redux.std(t, [-1])  # noqa: E731
    assert torch.equal(torch.compile(step, fullgraph=True)(x), step(x))
    assert torch.equal(torch.vmap(lambda r: torch.ops.redux.var(r, [0]))(x), torch.ops.redux.var(x, [1]))
    torch.library.opcheck(torch.ops.redux._moment_rows.default, (x, 128.0, False))
    torch.library.opcheck(torch.ops.redux._moment_rows.default, (x.bfloat16(), 129.0, True))


def test_bad_arguments_are_named():
    x = random_tensor((3, 4), torch.float32, "cpu", seed=11)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' is 0-dim"):
        torch.ops.redux._moment_rows(x[0, 0], 1.0, False)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' has dtype"):
        torch.ops.redux._moment_rows(x.double(), 1.0, False)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' has an empty last dim"):
        torch.ops.redux._moment_rows(x[:, :0], 1.0, False)
