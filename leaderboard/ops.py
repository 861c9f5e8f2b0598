"""The scored ops: every variant of redux.VARIANTS plus the torch.sum
baseline, each as a competition-style callable f((data, output)) -> sum."""
import torch

import redux
from redux.variants import BASELINE, VARIANTS


def _torch_sum(data):
    return torch.sum(data[0])


def _redux_op(name):
    op = getattr(torch.ops.redux, name)

    def run(data):
        return op(data[0])

    run.__name__ = name
    return run


def available(device):
    """{name: callable} of the ops that run on `device`, baseline first."""
    ops = {BASELINE: _torch_sum}
    cuda = torch.device(device).type == "cuda"
    for v in VARIANTS:
        if v.general or (cuda and redux.has_cuda_kernels()):
            ops[v.name] = _redux_op(v.name)
    return ops


def submission_name(path):
    """The name a submission file is listed under: file:<its name>."""
    import os

    name = "file:" + os.path.splitext(os.path.basename(path))[0]
    _submissions[name] = path
    return name


def load_submission(path):
    """(name, custom_kernel) of a competition-style Python submission file
    (loaded into this process: only a submission's own child calls this)."""
    import importlib.util

    name = submission_name(path)
    spec = importlib.util.spec_from_file_location(f"_submission_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "custom_kernel", None)):
        raise SystemExit(f"{path} defines no custom_kernel(data)")
    return name, module.custom_kernel


_submissions = {}


def describe(name):
    if name == BASELINE:
        return "PyTorch's own sum (the baseline)", False
    if name in _submissions:
        return f"submission {_submissions[name]}", False
    v = redux.by_name(name)
    return v.idea, v.deterministic
