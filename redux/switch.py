"""The model-wide switch: torch's reductions on redux.

    redux.enable()            # on, until redux.disable()
    with redux.enabled():     # on inside the block, then as before
        loss = model(x).mean()

While on, aten::sum and aten::mean on CPU and CUDA tensors run redux's
kernels, every overload: full and over dims, with and without dtype, and
the out= forms (sum.out, sum.IntList_out, mean.dtype_out, mean.out; the
named-dim forms reach these): torch.sum, Tensor.sum, torch.mean,
x.pow(2).mean(-1) in an RMSNorm, the sums and means inside a loss, the sum
inside logsumexp (at::sum_out). Through torch.library: kernels of our own for
the aten ops at the CPU and CUDA dispatch keys, so torch's autograd formulas
still apply (gradients are torch's) and everything above the backends
(autocast, functionalization, other devices) is untouched. The most called
ones (sum, mean, _softmax, _log_softmax and their backward, amax, amin,
linalg_vector_norm: _C.routed_in_cpp()) are C++ kernels
(csrc/torch/switch_routes.cpp) that run redux's op without Python where
this file's kernel would call it directly (redux's dtypes) and call this
file's kernel for anything else.

The other reductions of a training step run redux's ops too, with
torch's values, error types and (other) gradient formulas:
aten::_softmax / _log_softmax and their _backward_data (the sums in the
wide dtype), var / std / var_mean (.correction), linalg_vector_norm,
_foreach_norm (clip_grad_norm_'s), nll_loss_forward (cross_entropy's
loss), native_layer_norm and _fused_rms_norm (F.layer_norm, F.rms_norm)
and their backward, amax and amin, eager and compiled (_COMPOSITES). Not
routed: nll_loss's backward (elementwise).

What each call gets: redux.sum's guarantees (bits that depend only on the
values, shape, layout and dtype; fp64 accumulation for float32; batch
invariance for reductions over trailing dims: row i of a batch has the bits
of the same row alone). Inputs redux has no kernel for are still answered,
never refused where torch would not refuse: complex through the real sum of
its real and imaginary parts (also redux), integer results other than int64
as redux's int64 sum cast down (the same wrapping as torch), inputs redux
does not read (float8, ...) converted to the result dtype first, as torch
does. What torch refuses (probed from torch itself when the switch first
turns on, ~0.1 s: float8 and complex32 results, the mean of integers
without a floating dtype, ...) raises torch's error types, and bad dims
its IndexError. The probe runs torch's CPU kernels: on CUDA, where torch
also sums complex32 results, the switch refuses them as the CPU does.

Scope: the switch is process-wide (the dispatcher's registrations are
global): every thread sees it while it is on. enable() and disable() turn a
persistent "on" on and off; each enabled() block holds it on for its
duration; the kernels are registered while either holds and removed when
the last lets go, so nesting and threads compose. A redux kernel never
calls aten::sum or aten::mean, so there is no re-entry.

torch.compile: Inductor lowers aten::sum and aten::mean to reductions of
its own while it compiles, before any CPU or CUDA kernel runs. So while on,
the switch also gives Inductor's decomposition table entries for the aten
sum and mean overloads: AOTAutograd traces them, in the forward and the
backward graphs, into the same functions the eager kernels run (redux.sum
/ redux.mean, with the same fallbacks), so compiled models get the eager
switch's bits. Only the sums and means eager routes: those the model calls,
and those of ops whose eager kernels call them (logsumexp, mse_loss,
l1_loss); the routed ops above decompose into the functions their eager
kernels run; the sums Inductor makes when it decomposes an op the switch
does not route (group_norm, ...) stay Inductor's, as they stay torch's in
eager. A graph pass (Inductor's
post_grad_custom_post_pass) routes, by the same rule, the sums Inductor's
own passes add later. Turning the switch on or off resets torch.compile's
in-memory caches (torch._dynamo.reset(): compiled functions compile again
on their next call, under the new setting), and the pass's uuid keys the
on-disk caches, so code compiled under one setting is never run under the
other. For a compiled model, turn it on once (enable()) rather than around
each step.

Compiled code and eager bits (eager_numerics, on by default): Inductor's
own code for many elementwise ops is not bitwise torch's kernels (its exp,
cos, sqrt, sigmoid, division, the decomposed backward of silu or gelu;
fused multiply-adds on CUDA), and it rewrites embedding's backward (a sum
over repeated tokens) with atomics on CUDA. While on, the switch makes
Inductor lower those ops (_EAGER_KERNELS) to torch's kernels and round as
eager does (emulate_precision_casts, IEEE division): a compiled model has
the eager switch's bits, forward and backward (tests/test_model.py), at the
price of Inductor's fusion around those ops. Exact arithmetic (+, -, *,
casts, where) still fuses. enable(eager_numerics=False) keeps Inductor's
code for them. torch's own optimizers are not covered: a compiled AdamW
step computes its bias corrections as float32 tensors, eager as Python
floats.

With other overrides: torch keeps one Python override per op and dispatch
key. The switch takes the aten ops above (sum, mean and the others) at CPU and
CUDA; where another library already holds one, enable() raises naming the
op and the file and line that registered it, and installs nothing. A
batch-invariant matmul (overrides of aten::mm, addmm, bmm, ...) takes other
ops: register it before or after enable(), and both stay in force. If that
library also overrides mean or sum (some carry a mean of their own), leave
those out of it and let the switch take them: redux's reductions over
trailing dims are batch-invariant already. Together they make a model's
per-sample results independent of the batch size; the switch alone does not
make matmuls batch-invariant.
"""
import contextlib
import functools
import sys
import threading
import warnings

import torch

from . import _C
from ._dtypes import MEAN_SUM_DTYPE as _WIDE
from ._dtypes import ROW_KERNEL_DTYPES as _ROW_KERNEL_DTYPES
from ._dtypes import ROW_KERNEL_MAX_N as _ROW_KERNEL_MAX_N

_lock = threading.Lock()
_holders = 0        # enabled() blocks open now
_persistent = False  # enable() without disable()
_library = None     # (the kernels' remover, the compiled routes' remover, eager_numerics) while on

# The input dtypes redux's kernels read (others are converted to the result
# dtype first, as torch does) and the dtypes a sum gives: the shim's lists.
_REDUX_READS, _REDUX_OUT = (tuple(getattr(torch, name) for name in names) for names in _C.dtypes())
_MEAN_OUT = tuple(d for d in _REDUX_OUT if d.is_floating_point)  # floating only, as torch.mean's
# torch's own verdicts on the calls off redux's direct path, probed once
# (while the switch is off) for every (op, input dtype, dtype argument):
# {key: (error with valid dims or None, error with a dim out of range)}.
# The switch then refuses exactly what torch refuses, with its error type,
# in its order (torch.mean checks its dtype before the dims, the missing
# kernels come after them).
_torch_verdicts = None


def _outcome(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001  (torch's verdict, kept as it is)
        return e
    return None


def _probe_tensor(dtype):
    for make in (torch.ones, torch.empty):
        try:
            return make(2, dtype=dtype)
        except Exception:  # noqa: BLE001
            continue
    return None  # torch cannot make such a tensor: none can reach the switch


def _probe_torch_verdicts():
    dtypes = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)
    verdicts = {}
    with warnings.catch_warnings():  # casts that drop an imaginary part warn
        warnings.simplefilter("ignore")
        for in_dtype in dtypes:
            x = _probe_tensor(in_dtype)
            for op in ("sum", "mean") if x is not None else ():
                fn = getattr(torch, op)
                for dtype in [None] + dtypes:
                    refusal = _outcome(lambda: fn(x, dtype=dtype))
                    if refusal is not None:
                        verdicts[op, in_dtype, dtype] = (refusal, _outcome(lambda: fn(x, 5, dtype=dtype)))
    return verdicts


def _dims_error(x, dim, keepdim):
    """torch's error for dims out of range or repeated, from its meta
    kernel (no data touched), or None."""
    if dim is None:
        return None
    try:
        torch.empty(x.shape, device="meta").sum(dim, keepdim)
    except (IndexError, RuntimeError) as e:
        return e
    return None


def _unusual(op, x, dim, keepdim, dtype):
    """A call off redux's direct path (complex, an input redux does not
    read, a result dtype torch's kernels refuse): torch's errors first."""
    bad_dims = _dims_error(x, dim, keepdim)
    verdict = _torch_verdicts.get((op, x.dtype, dtype))
    if verdict is not None:
        refusal, with_bad_dims = verdict
        if bad_dims is None:
            raise type(refusal)(*refusal.args)
        if with_bad_dims is not None and not isinstance(with_bad_dims, IndexError):
            raise type(with_bad_dims)(*with_bad_dims.args)
    if bad_dims is not None:
        raise bad_dims


def _result_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return torch.int64 if not x.dtype.is_floating_point and not x.dtype.is_complex else x.dtype


def _complex(op, x, out, dim, keepdim):
    """A complex sum or mean as redux's real one over the real and imaginary
    parts (view_as_real's trailing dim of 2 is kept)."""
    x = x.to(out) if x.dtype != out else x
    if x.dim() == 0:  # the sum or mean of one element is that element
        return x.clone()
    xr = torch.view_as_real(x)
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else [d % x.dim() for d in dim]
    return torch.view_as_complex(op(xr, dims, keepdim).contiguous())


def _sum(x, dim, keepdim, dtype):
    out = _result_dtype(x, dtype)
    if out.is_complex or out not in _REDUX_OUT or x.dtype not in _REDUX_READS:
        _unusual("sum", x, dim, keepdim, dtype)
    if out.is_complex:
        return _complex(torch.ops.redux.sum, x, out, dim, keepdim)
    if x.dtype not in _REDUX_READS:  # float8, complex, ...: torch converts to the result dtype first
        x = x.to(out)
    if out in _REDUX_OUT:
        return torch.ops.redux.sum(x, dim, keepdim, dtype=dtype)
    if not out.is_floating_point:  # int8/16/32, uint8, bool: int64 wraps like them once cast
        return torch.ops.redux.sum(x, dim, keepdim, dtype=torch.int64).to(out)
    return torch.ops.redux.sum(x, dim, keepdim, dtype=torch.float32).to(out)


def _mean(x, dim, keepdim, dtype):
    out = dtype if dtype is not None else x.dtype
    if out.is_complex or out not in _MEAN_OUT or x.dtype not in _REDUX_READS:
        _unusual("mean", x, dim, keepdim, dtype)
    if out.is_complex:
        return _complex(torch.ops.redux.mean, x, out, dim, keepdim)
    if x.dtype not in _REDUX_READS:
        x = x.to(out)
    if out in _MEAN_OUT:
        return torch.ops.redux.mean(x, dim, keepdim, dtype=dtype)
    return torch.ops.redux.mean(x, dim, keepdim, dtype=torch.float32).to(out)


def _into(overload, reduce, x, dims, keepdim, dtype, out):
    """An out= overload: torch's checks and result dtype from the same
    overload on meta tensors (so its errors and its resize warning are
    torch's own), the value from redux, then copied into `out`. dims None:
    an overload without dims."""
    meta_out = torch.empty(out.shape, dtype=out.dtype, device="meta")
    meta_x = torch.empty(x.shape, dtype=x.dtype, device="meta")
    if dims is None:
        overload(meta_x, dtype=dtype, out=meta_out)
    else:
        overload(meta_x, dims, keepdim, dtype=dtype, out=meta_out)
    result = reduce(x, dims, keepdim, meta_out.dtype)
    if out.shape != result.shape:
        out.resize_(result.shape)
    return out.copy_(result)


# The functional overloads: the eager kernels, and (declining what eager
# does not route) the decompositions compiled code traces.
_FUNCTIONAL = {
    "sum": lambda x, *, dtype=None: _sum(x, None, False, dtype),
    "sum.dim_IntList": lambda x, dim, keepdim=False, *, dtype=None: _sum(x, dim, keepdim, dtype),
    "mean": lambda x, *, dtype=None: _mean(x, None, False, dtype),
    "mean.dim": lambda x, dim, keepdim=False, *, dtype=None: _mean(x, dim, keepdim, dtype),
}


_FLOATS = tuple(_WIDE)  # the floating dtypes redux computes in


def _torch_kernel_dtypes(kernel, *tensors, complex_too=False):
    """torch's verdict on dtypes its kernel has no loop for: NotImplementedError."""
    for t in tensors:
        if t is not None and t.dtype not in _FLOATS + ((torch.complex64, torch.complex128) if complex_too else ()):
            raise NotImplementedError(f'"{kernel}" not implemented for \'{str(t.dtype).split(".")[1]}\'')


# 16-bit complex dtypes (redux does not read them) -> their real part's dtype
_HALF_COMPLEX = {torch.complex32: torch.float16}
if hasattr(torch, "bcomplex32"):  # newer torch
    _HALF_COMPLEX[torch.bcomplex32] = torch.bfloat16


def _statistic(op, kernel, upcast=tuple(_HALF_COMPLEX)):
    """var / std / var_mean / vector_norm on redux: the 16-bit complex dtypes
    torch's kernels take (`upcast`) through complex64, as those kernels
    compute them; integers get redux's RuntimeError (torch's, or the
    RuntimeError it derives its NotImplementedError from); other dtypes
    torch has no loop for, its NotImplementedError."""
    def run(x, *args, **kwargs):
        if x.dtype in upcast:
            real = _HALF_COMPLEX[x.dtype]
            out = op(x.to(torch.complex64), *args, **kwargs)
            return tuple(o.to(x.dtype if o.is_complex() else real) for o in out) \
                if isinstance(out, tuple) else out.to(real)
        if x.dtype in _HALF_COMPLEX:
            _torch_kernel_dtypes(kernel, x)
        if x.dtype.is_floating_point:
            _torch_kernel_dtypes(kernel, x, complex_too=True)
        return op(x, *args, **kwargs)
    return run


def _empty_as_torch(op, x, *args):
    """op's empty result for an empty x of a dtype torch's kernel has no
    loop for: torch reaches no loop there, so it refuses no dtype (its dim
    checks stand: op runs on a float32 stand-in)."""
    return op(torch.empty(x.shape, device=x.device), *args).to(x.dtype)


def _softmax(kernel, op, x, dim, half_to_float):
    """aten::_softmax / _log_softmax: redux's op (half_to_float: a float32 result)."""
    if x.numel() == 0 and not half_to_float and x.dtype not in _FLOATS:
        return _empty_as_torch(op, x, dim)
    _torch_kernel_dtypes(kernel, x)
    return op(x, dim, torch.float32 if half_to_float else None)


def _extreme(op):
    """amax / amin on redux: exact in any order, and redux's bits are
    order-free too (-0 below +0, one NaN); dtypes torch has no loop for get
    NotImplementedError, as torch's, but for an empty input."""
    def run(x, dim=(), keepdim=False):
        try:
            return op(x, dim, keepdim)
        except NotImplementedError:
            if x.numel() != 0:
                raise
            return _empty_as_torch(op, x, dim, keepdim)
    return run


def _takes_row_kernel(x, dims):
    """Whether a row kernel reduces x over dims (sorted): x's trailing dims,
    rows of a length and dtype the kernels take (csrc/torch/row_kernels.h),
    a device they run on. The switch runs below autograd: no gradient is
    recorded here."""
    k = len(dims)
    if x.dim() == 0 or k == 0 or list(dims) != list(range(x.dim() - k, x.dim())):
        return False
    return (x.dtype in _ROW_KERNEL_DTYPES and 0 < _row_length(x, dims) <= _ROW_KERNEL_MAX_N
            and x.device.type in ("cpu", "cuda", "meta"))


def _row_length(x, dims):
    n = 1
    for d in dims:
        n *= x.shape[d]
    return n


def _from_rows(r, dims):
    """A row kernel's per-row result, the reduced dims kept as size 1."""
    return r.reshape(r.shape + (1,) * len(dims))


def _exp_rows_backward(op, grad, out, dim, input_dtype):
    """The backward by redux::_exp_rows_backward (one kernel) where it takes
    the call: along the last dim, one dtype, rows it takes; else None."""
    if (out.dim() == 0 or not _takes_row_kernel(out, [dim % out.dim()]) or grad.dtype != out.dtype
            or grad.shape != out.shape):
        return None
    return torch.ops.redux._exp_rows_backward(grad, out, op).to(input_dtype)


def _softmax_backward(grad, out, dim, input_dtype):
    """aten::_softmax_backward_data: y * (g - sum(g * y)), in one kernel
    (_exp_rows_backward) or in the wide dtype with the sum by redux, one
    rounding to the input's dtype."""
    _torch_kernel_dtypes("softmax_backward", grad, out)
    fused = _exp_rows_backward(0, grad, out, dim, input_dtype)
    if fused is not None:
        return fused
    wide = _WIDE[out.dtype]
    g, y = grad.to(wide), out.to(wide)
    return y.mul(g.sub(torch.ops.redux.sum(g.mul(y), [dim], True))).to(input_dtype)


def _log_softmax_backward(grad, out, dim, input_dtype):
    """aten::_log_softmax_backward_data: g - exp(y) * sum(g), as above."""
    _torch_kernel_dtypes("log_softmax_backward", grad, out)
    fused = _exp_rows_backward(1, grad, out, dim, input_dtype)
    if fused is not None:
        return fused
    wide = _WIDE[out.dtype]
    g, y = grad.to(wide), out.to(wide)
    return g.sub(y.exp().mul(torch.ops.redux.sum(g, [dim], True))).to(input_dtype)


def _checked_by_meta(op, *args):
    """torch's argument errors of `op` (shapes, weights), from its meta kernel.
    The verdict depends on the shapes, dtypes and other arguments only, so an
    accepted call is remembered: the meta kernels are Python decompositions
    that cost ~1 ms, more than the op itself."""
    key = (op,) + tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor)
                        else tuple(a) if isinstance(a, list) else a for a in args)
    if key in _META_ACCEPTED:
        return
    try:
        op(*(torch.empty(a.shape, dtype=a.dtype, device="meta") if isinstance(a, torch.Tensor) else a for a in args))
    except AssertionError as e:  # the meta kernel's form of the CPU and CUDA kernels' RuntimeError
        raise RuntimeError(str(e)) from None
    if len(_META_ACCEPTED) >= 256:
        _META_ACCEPTED.clear()
    _META_ACCEPTED.add(key)


_META_ACCEPTED = set()  # keys of calls whose meta kernel raised nothing


def _nll_loss(x, target, weight, reduction, ignore_index, *, eager):
    """aten::nll_loss_forward (cross_entropy's loss): redux's
    _nll_loss_forward (the picked log-probabilities and weights in the wide
    dtype, summed by redux, one division for "mean", one rounding). Eager,
    torch's argument errors come from its meta kernel, its out-of-range
    target error from a check on the CPU (on CUDA, torch's and that gather
    both fail a device-side assert); traced (compiled code), torch has
    checked the arguments already."""
    _torch_kernel_dtypes("nll_loss", x, weight)
    if eager:
        _checked_by_meta(torch.ops.aten.nll_loss_forward, x, target, weight, reduction, ignore_index)
    if target.dtype != torch.int64:
        raise RuntimeError(f"nll_loss: argument 'target' must hold class indices as int64 (Long), got {target.dtype}")
    if eager and x.device.type == "cpu":
        bad = (target != ignore_index) & ((target < 0) | (target >= x.shape[-1]))
        if bool(bad.any()):
            raise IndexError(f"Target {int(target[bad][0])} is out of bounds.")
    # the loss and total weight in the wide dtype, rounded once (csrc/torch/nll_loss.cpp)
    return torch.ops.redux._nll_loss_forward(x, target, weight, reduction, ignore_index)




def _normalized(x, normalized_shape):
    """(the dims before the normalized ones, the normalized dims)."""
    axis = x.dim() - len(normalized_shape)
    return list(range(axis)), list(range(axis, x.dim()))


def _stat_dtype(x):
    """The dtype of layer_norm's mean / rstd and rms_norm's rstd: float32
    for 16-bit inputs (the CPU's layer_norm keeps the input's), else the
    input's."""
    return torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype


# c10's names of the floating dtypes, as torch's errors print them
_SCALAR_NAME = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float", torch.float64: "Double"}


def _layer_norm(x, normalized_shape, weight, bias, eps, *, eager=True):
    """aten::native_layer_norm: the mean and (biased) variance over the
    normalized dims by redux::_moment_rows (one kernel) where it takes
    them, else redux.var_mean in the wide dtype; each output rounded once.
    Traced (eager False), torch has checked the arguments."""
    _torch_kernel_dtypes("layer_norm", x, weight, bias)
    if eager:
        _checked_by_meta(torch.ops.aten.native_layer_norm, x, normalized_shape, weight, bias, eps)
        params = {p.dtype for p in (weight, bias) if p is not None}
        if x.device.type == "cpu" and params - {x.dtype} and not (
                x.dtype in (torch.float16, torch.bfloat16) and params == {torch.float32}):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")  # torch's CPU check
        if x.device.type == "cuda":  # torch's CUDA kernel reads the parameters as the input's dtype
            for p in (weight, bias):
                if p is not None and p.dtype != x.dtype:
                    raise RuntimeError(f"expected scalar type {_SCALAR_NAME.get(x.dtype, x.dtype)} "
                                       f"but found {_SCALAR_NAME.get(p.dtype, p.dtype)}")
    _, dims = _normalized(x, normalized_shape)
    wide = _WIDE[x.dtype]
    xw = x.to(wide)
    if _takes_row_kernel(x, dims):  # one kernel, its fp64 results rounded to the wide dtype
        var, mean = (_from_rows(s.to(wide), dims) for s in torch.ops.redux._moment_rows(
            x.flatten(dims[0]), float(_row_length(x, dims)), False, torch.float64))
    else:
        var, mean = torch.ops.redux.var_mean(xw, dims, correction=0, keepdim=True)
    rstd = var.add(eps).rsqrt()
    out = xw.sub(mean).mul(rstd)
    if weight is not None:
        out = out.mul(weight.to(wide))
    if bias is not None:
        out = out.add(bias.to(wide))
    # the CPU kernel keeps the input's dtype unless float32 parameters make it mixed
    mixed = any(p is not None and p.dtype == torch.float32 for p in (weight, bias))
    stat = x.dtype if x.device.type == "cpu" and not mixed else _stat_dtype(x)
    return out.to(x.dtype), mean.to(stat), rstd.to(stat)


def _sum_over(t, dims, total=torch.ops.redux.sum):
    """total(t, dims); t itself for no dims (torch.sum's [] means all)."""
    return total(t, dims) if dims else t


def _layer_norm_backward(grad, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    """aten::native_layer_norm_backward: torch's formula in the wide dtype,
    its means over the normalized dims and sums over the others by redux."""
    _torch_kernel_dtypes("layer_norm_backward", grad, x)
    outer, dims = _normalized(x, normalized_shape)
    wide = _WIDE[x.dtype]
    g, rs = grad.to(wide), rstd.to(wide)
    xhat = x.to(wide).sub(mean.to(wide)).mul(rs)
    gw = g.mul(weight.to(wide)) if weight is not None else g
    dx = dweight = dbias = None
    if output_mask[0]:
        a = torch.ops.redux.mean(gw, dims, True)
        b = torch.ops.redux.mean(gw.mul(xhat), dims, True)
        dx = gw.sub(a).sub(xhat.mul(b)).mul(rs).to(x.dtype)
    if output_mask[1] and weight is not None:
        dweight = _sum_over(g.mul(xhat), outer).to(weight.dtype)
    if output_mask[2] and bias is not None:
        dbias = _sum_over(g, outer).to(bias.dtype)
    return dx, dweight, dbias


def _rms_eps(x, eps):
    return eps if eps is not None else torch.finfo(_stat_dtype(x)).eps


def _rms_norm(x, normalized_shape, weight, eps, *, eager=True):
    """aten::_fused_rms_norm: the mean of squares over the normalized dims
    by redux::_sum_squares_rows (one kernel) where it takes them, else
    redux.mean in the wide dtype; each output rounded once (eager: as for
    _layer_norm)."""
    # torch's CPU composite takes complex inputs too (its x**2, not |x|**2)
    _torch_kernel_dtypes("rms_norm", x, weight, complex_too=x.device.type == "cpu")
    if eager:
        _checked_by_meta(torch.ops.aten._fused_rms_norm, x, normalized_shape, weight, eps)
    _, dims = _normalized(x, normalized_shape)
    wide = _WIDE.get(x.dtype, x.dtype)
    xw = x.to(wide)
    if _takes_row_kernel(x, dims):  # one kernel, its fp64 result rounded to the wide dtype
        squares = _from_rows(torch.ops.redux._sum_squares_rows(
            x.flatten(dims[0]), float(_row_length(x, dims)), False, torch.float64).to(wide), dims)
    else:
        mean = torch.mean if x.is_complex() else torch.ops.redux.mean  # the switch's mean takes complex
        squares = mean(xw.mul(xw), dims, True)
    rstd = squares.add(_rms_eps(x, eps)).rsqrt()
    out = xw.mul(rstd)
    if weight is not None:
        out = out.mul(weight.to(wide))
    return out.to(x.dtype), rstd.to(_stat_dtype(x))


def _rms_norm_backward(grad, x, normalized_shape, rstd, weight, output_mask):
    """aten::_fused_rms_norm_backward: torch's formula in the wide dtype, its
    mean over the normalized dims and sum over the others by redux. The
    conjugates make it the gradient torch's CPU composite gives complex
    inputs (y is holomorphic in x there); for real tensors they are no-ops."""
    _torch_kernel_dtypes("rms_norm_backward", grad, x, complex_too=x.device.type == "cpu")
    outer, dims = _normalized(x, normalized_shape)
    wide = _WIDE.get(x.dtype, x.dtype)
    mean, total = (torch.mean, torch.sum) if x.is_complex() else (torch.ops.redux.mean, torch.ops.redux.sum)
    g, rs = grad.to(wide), rstd.to(wide).conj()
    xhat = x.to(wide).conj().mul(rs)
    gw = g.mul(weight.to(wide).conj()) if weight is not None else g
    dx = dweight = None
    if output_mask[0]:
        dx = gw.sub(xhat.mul(mean(gw.mul(xhat), dims, True))).mul(rs).to(x.dtype)
    if output_mask[1] and weight is not None:
        dweight = _sum_over(g.mul(xhat), outer, total).to(weight.dtype)
    return dx, dweight


_NORM = _statistic(torch.ops.redux.vector_norm, "norm", (torch.complex32,))


def _foreach_norm(tensors, ord, dtype):
    """aten::_foreach_norm: each tensor's vector_norm, with its bits. The
    2-norms the row kernel takes (a tensor as one row, as vector_norm takes
    it) in one call of redux::_sum_squares_each; those of longer real
    tensors as vector_norm computes them (redux::_sum_of of the squares in
    the wide dtype), in one call of redux::_sum_of_each per dtype, their
    roots and casts one kernel each; the others one by one."""
    norms = [None] * len(tensors)
    two = [i for i, t in enumerate(tensors) if ord == 2 and dtype in (None, t.dtype)]
    rows = [i for i in two if _takes_row_kernel(tensors[i], range(tensors[i].dim()))]
    if rows and len({tensors[i].device for i in rows}) == 1:
        for i, norm in zip(rows, torch.ops.redux._sum_squares_each([tensors[i] for i in rows], 1.0, True)):
            norms[i] = norm
    by_dtype = {}
    for i in two:
        t = tensors[i]
        if norms[i] is None and t.dtype in _FLOATS and t.device.type in ("cpu", "cuda") and t.numel():
            by_dtype.setdefault((t.dtype, t.device), []).append(i)
    for (out, _), members in by_dtype.items():
        sums = torch.ops.redux._sum_of_each([tensors[i] for i in members], of="square", dtype=_WIDE[out])
        for i, norm in zip(members, sums.sqrt().to(out).unbind(0)):
            norms[i] = norm
    return [n if n is not None else _NORM(t, ord, None, False, dtype=dtype) for n, t in zip(norms, tensors)]


# The other reductions of a model, on redux's ops: the eager kernels and the
# decompositions compiled code traces (their gradients stay torch's
# formulas, whose sums and means the switch routes too).
_COMPOSITES = {
    "_softmax": lambda x, dim, half_to_float: _softmax("softmax", torch.ops.redux.softmax, x, dim, half_to_float),
    "_log_softmax": lambda x, dim, half_to_float: _softmax("log_softmax", torch.ops.redux.log_softmax, x, dim,
                                                          half_to_float),
    "_softmax_backward_data": _softmax_backward,
    "_log_softmax_backward_data": _log_softmax_backward,
    "var.correction": _statistic(torch.ops.redux.var, "std"),
    "std.correction": _statistic(torch.ops.redux.std, "std"),
    # torch's var_mean and norm kernels take complex32, not bcomplex32
    "var_mean.correction": _statistic(torch.ops.redux.var_mean, "std", (torch.complex32,)),
    "linalg_vector_norm": _NORM,
    # cross_entropy's and nll_loss's loss (its backward is elementwise: torch's)
    "nll_loss_forward": lambda x, target, weight, reduction, ignore_index: _nll_loss(
        x, target, weight, reduction, ignore_index, eager=True),
    # clip_grad_norm_'s per-tensor norms
    "_foreach_norm.Scalar": lambda tensors, ord=2, dtype=None: _foreach_norm(tensors, ord, dtype),
    "native_layer_norm": _layer_norm,
    "native_layer_norm_backward": _layer_norm_backward,
    "amax": _extreme(torch.ops.redux.amax),
    "amin": _extreme(torch.ops.redux.amin),
    # F.rms_norm's (on the CPU, torch composes it from aten ops; the switch's kernel takes its place there too)
    "_fused_rms_norm": _rms_norm,
    "_fused_rms_norm_backward": _rms_norm_backward,
}


def _overload(name):
    """torch.ops.aten's OpOverload for "sum.dim_IntList" ("sum": default)."""
    packet, _, overload = name.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload or "default")


def _register(eager_numerics):
    global _torch_verdicts
    if _torch_verdicts is None:
        _torch_verdicts = _probe_torch_verdicts()
    aten = torch.ops.aten
    kernels = {
        **_FUNCTIONAL,
        **_COMPOSITES,
        # out= forms: torch.sum(x, 0, out=y), and the sums inside ops written with at::sum_out (logsumexp)
        "sum.out": lambda x, *, dtype=None, out: _into(aten.sum.out, _sum, x, None, False, dtype, out),
        "sum.IntList_out": lambda x, dim, keepdim=False, *, dtype=None, out: _into(
            aten.sum.IntList_out, _sum, x, dim, keepdim, dtype, out),
        "mean.dtype_out": lambda x, *, dtype=None, out: _into(aten.mean.dtype_out, _mean, x, None, False, dtype, out),
        "mean.out": lambda x, dim, keepdim=False, *, dtype=None, out: _into(
            aten.mean.out, _mean, x, dim, keepdim, dtype, out),
    }
    keys = ("CPU", "CUDA")
    for name in kernels:  # a conflict is found before anything is registered
        for key in keys:
            if f"aten/{name}/{key}" in torch.library._impls:
                raise RuntimeError(f"redux.enable: aten::{name} for {key} is already overridden from Python by "
                                   f"{_registrant(name, key)}; torch allows one override per op and key, so "
                                   "disable that library's override first (or redux's switch)")
    # The most called ops get C++ kernels (csrc/torch/switch_routes.cpp): a
    # call these functions would hand straight to a redux op runs it there,
    # any other call comes back to them; the rest are Python kernels.
    in_cpp = {name: kernels[name] for name in _C.routed_in_cpp()}
    taken = {f"aten/{name}/{key}" for name in in_cpp for key in keys}
    lib = torch.library.Library("aten", "IMPL")
    routes = None

    def remove_kernels():
        torch.library._impls.difference_update(taken)
        if routes is not None:
            _C.unroute(routes)
        lib._destroy()

    try:
        with warnings.catch_warnings():  # "overriding a previously registered kernel": on purpose
            warnings.simplefilter("ignore")
            for name, fn in kernels.items():
                for key in keys if name not in in_cpp else ():
                    lib.impl(name, fn, key)
            routes = _C.route_aten(in_cpp)
        torch.library._impls.update(taken)  # another Python override of them is refused, as of the others
        remove_compiled_routes = _install_compiled_routes(eager_numerics)
    except BaseException:
        remove_kernels()  # all or nothing
        raise
    return remove_kernels, remove_compiled_routes, eager_numerics


# The ops whose eager kernels reach aten::sum / aten::mean through the
# dispatcher or are routed themselves, so that the eager switch routes their
# sums. In compiled code the sums and means traced for any other op
# (group_norm, ...: kernels of their own in eager, decomposed by Inductor)
# stay Inductor's, as eager leaves them to torch: compiled and eager route
# the same reductions.
_ROUTED_IN_EAGER = ("aten::sum", "aten::mean", "aten::logsumexp", "aten::mse_loss", "aten::l1_loss") + tuple(
    "aten::" + name.split(".")[0] for name in _COMPOSITES)


def _routed_here(origin):
    """Whether a sum or mean traced for `origin` (the model's op being
    traced when it was made; None when unknown) is one the eager switch
    routes."""
    return origin is None or origin.name().split(".")[0] in _ROUTED_IN_EAGER


def _when_routed_in_eager(fn):
    """A decomposition that applies to the sums and means the eager switch
    routes, and declines the others (NotImplemented: Inductor's own)."""
    def decompose(*args, **kwargs):
        import torch.fx.traceback as fx_traceback
        if not _routed_here(getattr(fx_traceback, "current_meta", {}).get("original_aten")):
            return NotImplemented
        return fn(*args, **kwargs)
    return decompose


def _route_graph(graph):
    """Swaps the aten sums left in an Inductor graph (added by Inductor's own
    passes after the decompositions) that redux can answer and the eager
    switch routes, for redux.sum (same semantics, same output)."""
    sums = (torch.ops.aten.sum.default, torch.ops.aten.sum.dim_IntList)
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in sums:
            continue
        if not _routed_here(node.meta.get("original_aten")):
            continue
        x = node.args[0]
        x_val, out_val = getattr(x, "meta", {}).get("val"), node.meta.get("val")
        if not (isinstance(x_val, torch.Tensor) and isinstance(out_val, torch.Tensor)):
            continue
        if (x_val.device.type not in ("cpu", "cuda") or x_val.layout != torch.strided
                or x_val.dtype not in _REDUX_READS or out_val.dtype not in _REDUX_OUT):
            continue
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        with graph.inserting_before(node):
            routed = graph.call_function(torch.ops.redux.sum.default, (x, dim, keepdim),
                                         {"dtype": node.kwargs.get("dtype")})
        routed.meta.update(node.meta)
        node.replace_all_uses_with(routed)
        graph.erase_node(node)


def _graph_pass(eager_numerics):
    """The pass object for Inductor's config: a CustomGraphPass whose uuid
    (this file's hash and the setting) keys Inductor's and AOTAutograd's
    on-disk caches."""
    from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

    class RouteToRedux(CustomGraphPass):
        def __call__(self, graph):
            _route_graph(graph)

        def uuid(self):
            return get_hash_for_files((__file__,)) + (b"eager numerics" if eager_numerics else b"")

    return RouteToRedux()


def _install_compiled_routes(eager_numerics):
    """What compiled code needs: decompositions of aten sum and mean into the
    switch's own functions (traced by AOTAutograd with the model, forward
    and backward, symbolic shapes included), the graph pass and, with
    eager_numerics, torch's kernels for _EAGER_KERNELS. Refuses a pass
    already in its place; returns a function that removes all of them."""
    import torch._inductor.config as inductor_config
    from torch._inductor.decomposition import decompositions
    current = inductor_config.post_grad_custom_post_pass
    if current is not None:
        raise RuntimeError(f"redux.enable: torch._inductor.config.post_grad_custom_post_pass is already set "
                           f"({current!r}); redux's switch needs it for compiled code: unset it first")
    routes = {_overload(name): _when_routed_in_eager(fn) for name, fn in _FUNCTIONAL.items()}
    routes.update({_overload(name): fn for name, fn in _COMPOSITES.items()})
    # traced: no data-dependent check (torch's own decomposition has none)
    routes[torch.ops.aten.nll_loss_forward.default] = lambda x, target, weight, reduction, ignore_index: _nll_loss(
        x, target, weight, reduction, ignore_index, eager=False)
    routes[torch.ops.aten.native_layer_norm.default] = lambda x, shape, weight, bias, eps: _layer_norm(
        x, shape, weight, bias, eps, eager=False)
    routes[torch.ops.aten._fused_rms_norm.default] = lambda x, shape, weight, eps: _rms_norm(
        x, shape, weight, eps, eager=False)
    before = {op: decompositions[op] for op in routes if op in decompositions}
    remove_eager_kernels = _install_eager_kernels() if eager_numerics else (lambda: None)
    try:
        decompositions.update(routes)
        _clear_merged_decompositions()
        inductor_config.post_grad_custom_post_pass = _graph_pass(eager_numerics)
    except BaseException:  # all or nothing
        _remove_routes(routes, before)
        remove_eager_kernels()
        raise
    _reset_compiled()

    def remove():
        inductor_config.post_grad_custom_post_pass = None
        _remove_routes(routes, before)
        remove_eager_kernels()
        _reset_compiled()
    return remove


def _remove_routes(routes, before):
    """Takes the switch's decompositions out of Inductor's table, putting
    back those they replaced."""
    from torch._inductor.decomposition import decompositions
    for op in routes:
        decompositions.pop(op, None)
    decompositions.update(before)
    _clear_merged_decompositions()


def _clear_merged_decompositions():
    """Drops Inductor's cached merge of its decomposition table, which would
    not see a change to the table."""
    try:
        from torch._inductor.decomposition import fast_random_decomps
    except ImportError:  # a torch without the cached merge
        return
    fast_random_decomps.cache_clear()


# With eager_numerics on, the ops compiled code runs as torch's eager kernels
# (Inductor fallbacks): those whose Inductor code has other bits than the
# kernel's (transcendental functions, division, the backward formulas of
# activations, lerp), and embedding's backward, a reduction eager
# leaves to torch's kernel that Inductor would rewrite (with atomics on CUDA).
_EAGER_KERNELS = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
    "asin", "acos", "atan", "atan2", "sqrt", "rsqrt", "reciprocal", "pow", "div", "erf", "erfc", "erfinv",
    "sigmoid", "sigmoid_backward", "tanh_backward", "silu", "silu_backward", "gelu", "gelu_backward",
    "softplus", "softplus_backward", "elu", "elu_backward", "mish", "mish_backward", "lerp",
    "embedding_dense_backward",
)
# ... and Inductor's own settings for eager's rounding: no fused multiply-add
# contraction, 16-bit intermediates rounded as eager rounds them, IEEE division.
_EAGER_CONFIG = {"emulate_precision_casts": True, "eager_numerics.division_rounding": True}


@functools.cache
def _eager_kernel_overloads():
    """The functional overloads of _EAGER_KERNELS with a CPU or CUDA kernel
    (fixed for the process: found once)."""
    found = []
    for name in _EAGER_KERNELS:
        packet = getattr(torch.ops.aten, name)
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if "out" in overload or op._schema.is_mutable or not torch._C._dispatch_has_kernel(op.name()):
                continue  # out= and in-place forms, and the Python-number overloads (exp.int)
            if any(torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), key) for key in ("CPU", "CUDA")):
                found.append(op)
    return tuple(found)


def _install_eager_kernels():
    """Makes Inductor lower _EAGER_KERNELS to torch's kernels (no
    decomposition, a fallback lowering) and round as eager does; returns a
    function that puts back what was there."""
    import torch._inductor.config as inductor_config
    from torch._inductor import lowering
    from torch._inductor.decomposition import decompositions
    ops = _eager_kernel_overloads()
    saved = [(op, lowering.lowerings.get(op), decompositions.get(op), op in lowering.fallbacks,
              op in lowering.needs_realized_inputs) for op in ops]
    settings = inductor_config.patch(_EAGER_CONFIG)

    def remove(entered=True):
        if entered:
            settings.__exit__(None, None, None)
        for op, lowered, decomposed, fallback, realized in saved:
            if lowered is None:
                lowering.lowerings.pop(op, None)
            else:
                lowering.lowerings[op] = lowered
            if decomposed is not None:
                decompositions[op] = decomposed
            if not fallback:
                lowering.fallbacks.discard(op)
            if not realized:
                lowering.needs_realized_inputs.discard(op)
        _clear_merged_decompositions()

    try:
        for op in ops:
            decompositions.pop(op, None)
            lowering.add_needs_realized_inputs(op)
            lowering.register_lowering(op, type_promotion_kind=None)(lowering.fallback_handler(op))
        _clear_merged_decompositions()
    except BaseException:  # all or nothing
        remove(entered=False)
        raise
    settings.__enter__()
    return remove


def _reset_compiled():
    """Drops torch.compile's in-memory compiled code, if torch.compile has
    been used at all, so nothing compiled under the other setting runs."""
    if "torch._dynamo" in sys.modules:
        torch._dynamo.reset()


def _registrant(name, key):
    """Where the kernel now registered for aten::name at `key` was
    registered (file:line, from the dispatcher's table)."""
    for line in torch._C._dispatch_dump(f"aten::{name}").splitlines():
        if line.startswith(f"{key}: registered at "):
            return "the code at " + line.split("registered at ", 1)[1].rsplit(" [", 1)[0]
    return "another library"


def _update(eager_numerics):
    """Registers or removes the kernels to match the holders (under _lock);
    eager_numerics: the setting asked for by the call (None: any)."""
    global _library
    want = _persistent or _holders > 0
    if want and _library is not None and eager_numerics not in (None, _library[2]):
        raise RuntimeError(f"redux's switch is on with eager_numerics={_library[2]}; turn it off (disable(), "
                           f"the enabled() blocks' end) before turning it on with eager_numerics={eager_numerics}")
    if want and _library is None:
        _library = _register(eager_numerics)
    elif not want and _library is not None:
        remove_kernels, remove_compiled_routes, _ = _library
        remove_kernels()
        remove_compiled_routes()
        _library = None


def enable(*, eager_numerics=True):
    """Turns the switch on until disable() (idempotent). eager_numerics:
    compiled code also computes the elementwise ops whose Inductor code is
    not bitwise torch's kernels with those kernels, so a compiled model has
    the eager switch's bits, at the price of Inductor's fusion around them
    (False: Inductor's own code for them; the reductions are redux's
    either way)."""
    global _persistent
    with _lock:
        was, _persistent = _persistent, True
        try:
            _update(eager_numerics)
        except BaseException:
            _persistent = was
            raise


def disable():
    """Turns enable()'s "on" off; open enabled() blocks keep it on until they end."""
    global _persistent
    with _lock:
        _persistent = False
        _update(None)


def is_enabled():
    """True while torch's sum and mean run on redux."""
    with _lock:
        return _library is not None


@contextlib.contextmanager
def enabled(*, eager_numerics=True):
    """On for the block (nested blocks and enable() compose), then as
    before; eager_numerics as for enable()."""
    global _holders
    with _lock:
        _holders += 1
        try:
            _update(eager_numerics)
        except BaseException:
            _holders -= 1
            raise
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            _update(None)
