"""redux: deterministic, accurate, fast sum reductions for PyTorch.

    import redux
    y = torch.ops.redux.sum(x, dim=1)   # wherever a model calls torch.sum
    y = redux.sum(x, dim=1)             # the same op, with a docstring

VARIANTS lists every sum variant the extension registers.
"""
import torch

from . import _C  # noqa: F401  loads the native library: registers torch.ops.redux.* (all backends, Meta, autograd)
from .variants import VARIANTS, Variant, by_name

__all__ = ["sum", "VARIANTS", "Variant", "by_name", "has_cuda_kernels"]


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001  (mirrors torch.sum)
    """torch.sum with redux's guarantees; calls torch.ops.redux.sum.

    Args:
        input: a float32/float64/float16/bfloat16, integer or bool tensor on
            the CPU or a CUDA device (any strides).
        dim: int, list of ints, or None/[] for all dims; negative dims count
            from the end.
        keepdim: keep reduced dims with size 1.
        dtype: result dtype (float32, float64, float16, bfloat16 or int64);
            the input is converted to it first, as torch.sum does. Integer and
            bool inputs default to int64.

    Returns the same shape and dtype as torch.sum. The result bits depend only
    on the input's values, shape, layout and dtype: not on the GPU, grid,
    stream, thread count or run. float32 sums accumulate in fp64, float16 and
    bfloat16 in at least fp32, float64 with compensation. Differentiable.
    """
    if isinstance(dim, int):
        dim = [dim]
    return torch.ops.redux.sum(input, dim, keepdim, dtype=dtype)


def has_cuda_kernels():
    """True when this build of redux carries CUDA kernels."""
    return torch._C._dispatch_has_kernel_for_dispatch_key("redux::sum", "CUDA")
