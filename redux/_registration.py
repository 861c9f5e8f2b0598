"""Fake (meta) kernels and autograd for the redux ops, via torch.library.

The fake kernels state the result's shape and dtype only; they mirror the
shim's rules (csrc/torch/plan.cpp), and opcheck in the tests holds the two
together.
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


def _setup_context(ctx, inputs, output):
    self, dim, keepdim = inputs[0], inputs[1], inputs[2]
    ctx.input_shape = tuple(self.shape)
    ctx.input_dtype = self.dtype
    ctx.dims = normalize_dims(self.dim(), dim)
    ctx.keepdim = keepdim
    ctx.extra = len(inputs) - 1  # positional non-tensor inputs: no gradient


def _backward(ctx, grad):
    # d(sum)/d(x) = 1 everywhere: the incoming gradient broadcast back.
    if not ctx.keepdim:
        for d in ctx.dims:  # ascending, so earlier insertions keep later indices right
            grad = grad.unsqueeze(d)
    grad = grad.expand(ctx.input_shape)
    if grad.dtype != ctx.input_dtype and ctx.input_dtype.is_floating_point:
        grad = grad.to(ctx.input_dtype)
    return (grad,) + (None,) * ctx.extra


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
    torch.library.register_autograd("redux::sum", _backward, setup_context=_sum_context)
    torch.library.register_autograd("redux::_sum_grid", _backward, setup_context=_setup_context)


def _sum_context(ctx, inputs, keyword_only_inputs, output):
    # inputs: (self, dim, keepdim); dtype is keyword-only, with no gradient slot
    _setup_context(ctx, inputs, output)
