"""PyTorch's own OpInfo samples (torch.testing._internal's op database) for
torch.sum, torch.mean, torch.var, torch.std and torch.var_mean, each run
through redux's op and compared with torch's answer: values, dtype, shape.
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
OPS = [op for op in op_db if op.name in ("sum", "mean") + VARIANCES]


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
    if args and isinstance(args[0], int):
        args[0] = [args[0]]
    return getattr(torch.ops.redux, op.name)(sample.input, *args, **kwargs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""))
def test_opinfo_samples_give_torchs_answers(device, op):
    # complex sums and means: redux's ops refuse them (the switch answers them, tests/test_switch.py)
    dtypes = [d for d in op.supported_dtypes(device) if not (d.is_complex and op.name in ("sum", "mean"))]
    assert dtypes, op.name
    samples = 0
    for dtype in sorted(dtypes, key=str):
        for sample in op.sample_inputs(device, dtype):
            with warnings.catch_warnings():  # torch's own "degrees of freedom <= 0"
                warnings.simplefilter("ignore")
                want = op(sample.input, *sample.args, **sample.kwargs)
                got = redux_call(op, sample)
            torch.testing.assert_close(got, want, equal_nan=True, msg=lambda m: f"{op.name} {dtype} {sample}: {m}")
            samples += 1
    assert samples > 0
