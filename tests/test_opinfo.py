"""PyTorch's own OpInfo samples (torch.testing._internal's op database) for
torch.sum, mean, var, std, var_mean, logsumexp, softmax, log_softmax,
linalg.vector_norm, amax and amin,
each run through redux's op and compared with torch's answer: values,
dtype, shape.
The database imports expecttest (a test dependency: pyproject's `test`
extra, scripts/quickstart.py)."""
import warnings

import pytest
import torch

import redux  # noqa: F401  registers torch.ops.redux
from conftest import DEVICES

pytest.importorskip("expecttest", reason="torch's OpInfo database needs expecttest (pip install expecttest)")
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

VARIANCES = ("var", "std", "var_mean")
TAKE_COMPLEX = VARIANCES + ("linalg.vector_norm",)
OPS = [op for op in op_db
       if op.name in ("sum", "mean", "logsumexp", "softmax", "log_softmax", "linalg.vector_norm", "amax", "amin")
       + VARIANCES]


def redux_call(op, sample):
    """The sample's call of torch.<op> as a call of torch.ops.redux.<op>: an
    int dim as a list, and torch.var's older (dim, unbiased, keepdim) form
    as correction (unbiased True: 1, False: 0)."""
    args, kwargs = list(sample.args), dict(sample.kwargs)
    if op.name in VARIANCES:
        if "unbiased" in kwargs:
            kwargs["correction"] = int(kwargs.pop("unbiased"))
        for i, a in enumerate(args):
            if isinstance(a, bool):  # unbiased, positional; a keepdim may follow it
                kwargs["correction"] = int(args.pop(i))
                if len(args) > i:
                    kwargs["keepdim"] = args.pop(i)
                break
    if op.name == "linalg.vector_norm":
        if isinstance(kwargs.get("dim"), int):
            kwargs["dim"] = [kwargs["dim"]]
        return torch.ops.redux.vector_norm(sample.input, *args, **kwargs)
    if args and isinstance(args[0], int) and op.name not in ("softmax", "log_softmax"):
        args[0] = [args[0]]
    return getattr(torch.ops.redux, op.name)(sample.input, *args, **kwargs)


def check(op, sample, got, want, dtype):
    """torch's answer within torch's tolerance for the dtype; where torch's
    own low-precision answer is off by more (bfloat16 log_softmax near 0),
    redux's must be as close as torch's to torch's float64 one, or within
    an ulp of that."""
    try:
        torch.testing.assert_close(got, want, equal_nan=True)
        return
    except AssertionError as e:
        if dtype not in (torch.float16, torch.bfloat16) or "dtype" in sample.kwargs:
            raise AssertionError(f"{op.name} {dtype} {sample}: {e}") from None
    exact = op(sample.input.double(), *sample.args, **sample.kwargs)
    for g, w, x in zip(*(t if isinstance(t, tuple) else (t,) for t in (got, want, exact))):
        assert g.shape == w.shape and g.dtype == w.dtype
        redux_error, torch_error = (g.double() - x).abs(), (w.double() - x).abs()
        ulp = torch.finfo(dtype).eps * x.abs().clamp_min(torch.finfo(dtype).tiny)
        assert (redux_error <= torch_error + ulp).all(), f"{op.name} {dtype} {sample}: farther from fp64 than torch"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""))
def test_opinfo_samples_give_torchs_answers(device, op):
    # complex inputs: redux's sums refuse them (the switch answers complex sums and means, tests/test_switch.py)
    dtypes = [d for d in op.supported_dtypes(device) if not (d.is_complex and op.name not in TAKE_COMPLEX)]
    assert dtypes, op.name
    samples = 0
    torch.manual_seed(0)  # the samples' values come from torch's generator
    for dtype in sorted(dtypes, key=str):
        for sample in op.sample_inputs(device, dtype):
            with warnings.catch_warnings():  # torch's own "degrees of freedom <= 0"
                warnings.simplefilter("ignore")
                want = op(sample.input, *sample.args, **sample.kwargs)
                got = redux_call(op, sample)
            check(op, sample, got, want, dtype)
            samples += 1
    assert samples > 0


EXTREMES = [op for op in OPS if op.name in ("amax", "amin")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", EXTREMES, ids=lambda op: op.name)
def test_opinfo_samples_give_torchs_gradients_for_the_extremes(device, op):
    """amax / amin on the float64 samples: the gradient of every sample is
    torch's, bit for bit (the same formula on the same exact maximum), and
    gradcheck passes where no two elements tie (ties make the maximum not
    differentiable; torch's formula shares the gradient there)."""
    torch.manual_seed(0)
    checked = 0
    for sample in op.sample_inputs(device, torch.float64, requires_grad=True):
        x = sample.input
        mine, theirs = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
        got = redux_call(op, type(sample)(mine, args=sample.args, kwargs=sample.kwargs))
        want = op(theirs, *sample.args, **sample.kwargs)
        g = torch.randn_like(want)
        got.backward(g)
        want.backward(g)
        assert torch.equal(mine.grad, theirs.grad), f"{op.name} {sample}"
        if x.numel() > 0 and x.detach().unique().numel() == x.numel():
            assert torch.autograd.gradcheck(
                lambda t: redux_call(op, type(sample)(t, args=sample.args, kwargs=sample.kwargs)), (x,))
        checked += 1
    assert checked > 0
