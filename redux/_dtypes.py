"""Dtype facts of the shim (csrc/torch/plan.h), read once from redux._C."""
import torch

from . import _C

# redux.mean's floating result dtype -> the dtype its sum runs in (plan.h mean_sum_dtype): the wide dtype
# every composite (var, softmax, norms, the distributed mean and cross-entropy) computes in
MEAN_SUM_DTYPE = {getattr(torch, out): getattr(torch, wide) for out, wide in _C.mean_dtypes()}

# the dtypes the row kernels read and the longest row the composites give them (csrc/torch/row_kernels.h)
ROW_KERNEL_DTYPES = tuple(getattr(torch, name) for name in _C.row_kernel_dtypes())
ROW_KERNEL_MAX_N = _C.row_kernel_max_n()
