"""Fake (meta) kernels for the redux ops, via torch.library.

The fake kernels state the result's shape and dtype only; they mirror the
shim's rules (csrc/torch/plan.cpp), and opcheck in the tests holds the two
together. Autograd is registered in C++ (csrc/torch/autograd.cpp): the
Python autograd wrapper cost ~6 us of host time per call.
"""
import torch

# Result dtypes redux computes (csrc/torch/plan.cpp says the same in C++).
_OUT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64)


def _is_integral(dtype):
    return not dtype.is_floating_point and not dtype.is_complex


def normalize_dims(ndim, dim):
    """Reduced dims as a sorted tuple of non-negative ints (None/[] = all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return tuple(range(ndim))
    bound = max(ndim, 1)
    seen = set()
    for d in dim:
        if not -bound <= d < bound:
            raise IndexError(f"redux.sum: argument 'dim' has {d}, out of range for a tensor of {ndim} "
                             f"dimension(s) (expected in [{-bound}, {bound - 1}])")
        w = d % bound
        if ndim == 0:
            continue
        if w in seen:
            raise RuntimeError(f"redux.sum: argument 'dim' lists dimension {w} more than once")
        seen.add(w)
    return tuple(sorted(seen))


def result_dtype(self_dtype, dtype):
    if dtype is not None:
        return dtype
    return torch.int64 if _is_integral(self_dtype) else self_dtype


def result_shape(shape, dims, keepdim):
    out = []
    for d, s in enumerate(shape):
        if d not in dims:
            out.append(s)
        elif keepdim:
            out.append(1)
    return out


def _fake_sum(self, dim=None, keepdim=False, *, dtype=None):
    if self.dtype.is_complex:
        raise RuntimeError(f"redux.sum: argument 'self' has dtype {self.dtype}, which is not supported")
    if dtype is not None and dtype not in _OUT_DTYPES:
        raise RuntimeError(f"redux.sum: argument 'dtype' is {dtype}, which is not supported")
    dims = normalize_dims(self.dim(), dim)
    return self.new_empty(result_shape(self.shape, dims, keepdim), dtype=result_dtype(self.dtype, dtype))


def _fake_sum_grid(self, dim, keepdim, dtype, grid):
    return _fake_sum(self, dim, keepdim, dtype=dtype)


def _fake_ladder(x):
    if x.dim() != 1 or x.dtype != torch.float32:
        raise RuntimeError("redux ladder rung: argument 'x' must be a 1-D float32 tensor")
    return x.new_empty(())


def register():
    from .variants import VARIANTS
    for v in VARIANTS:
        if not v.general:
            torch.library.register_fake(f"redux::{v.name}")(_fake_ladder)
    torch.library.register_fake("redux::sum")(_fake_sum)
    torch.library.register_fake("redux::_sum_grid")(_fake_sum_grid)
