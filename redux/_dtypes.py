"""Dtype facts of the shim (csrc/torch/plan.h), read once from redux._C."""
import torch

from . import _C

# redux.mean's floating result dtype -> the dtype its sum runs in (plan.h mean_sum_dtype): the wide dtype
# every composite (var, softmax, norms, the distributed mean and cross-entropy) computes in
MEAN_SUM_DTYPE = {getattr(torch, out): getattr(torch, wide) for out, wide in _C.mean_dtypes()}
