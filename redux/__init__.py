"""redux: deterministic, accurate, fast sum reductions for PyTorch.

    import redux
    y = torch.ops.redux.sum(x, dim=1)   # wherever a model calls torch.sum
    y = redux.sum(x, dim=1)             # the same op, with a docstring
    y = redux.mean(x, dim=1)            # torch.mean on redux's sum
    with redux.enabled():               # torch.sum / torch.mean everywhere -> redux
        loss = model(batch)
    y = redux.distributed.sum(shard)    # a sum sharded over ranks, one-device bits

torch.ops.redux.sum also takes DTensor inputs (redux.distributed registers
its sharding rule).

VARIANTS lists every sum variant the extension registers.
"""
import functools

import torch

from ._version import __version__


def _load_native_library():
    """Imports redux._C, which only works under the torch release it was
    built against (its C++ ABI): under any other, a clear ImportError that
    names both and the command that rebuilds it."""
    try:
        from . import _build_info
    except ImportError:
        _build_info = None
    running = torch.__version__.split("+")[0]
    rebuild = ("rebuild it for the running torch from its source: pip install --no-build-isolation "
               "--force-reinstall --no-deps <a redux checkout or git URL> (in a checkout: "
               "pip install --no-build-isolation -e .)")
    if _build_info is not None and _build_info.TORCH_RELEASE != running:
        raise ImportError(f"redux was built for torch {_build_info.TORCH_VERSION}, but torch {torch.__version__} "
                          f"is running; {rebuild}")
    try:
        from . import _C
    except ImportError as e:
        built = f"torch {_build_info.TORCH_VERSION}" if _build_info is not None else "an unknown torch"
        raise ImportError(f"redux's native library failed to load ({e}); it was built for {built} and torch "
                          f"{torch.__version__} is running; {rebuild}") from e
    return _C


_C = _load_native_library()  # registers torch.ops.redux.* (all backends, Meta, autograd)
from .switch import disable, enable, enabled, is_enabled
from .variants import VARIANTS, Variant, by_name
from . import batching, distributed

distributed._register_dtensor_rules_when_loaded()
batching.register()

__all__ = ["__version__", "sum", "mean", "var", "std", "var_mean", "logsumexp", "softmax", "log_softmax",
           "vector_norm", "amax", "amin", "distributed", "enable", "disable", "enabled", "is_enabled", "VARIANTS",
           "Variant", "by_name", "has_cuda_kernels"]


def _serve_packet_calls(packet, entry, *bound):
    """Makes calls of a torch.ops packet (torch.ops.redux.sum) take the eager
    entry where it gives what torch's route would: entry(route, *bound,
    *args, **kwargs) checks the call in C (eager.cpp) and hands any other call,
    errors included, to route, the packet's own __call__. Why: torch's route
    parses the arguments against the schema, ~5 us a call on a small CPU
    input and 12-20 us more after a streamed 4 MB one than the eager entry
    (bench/cpu_host.py), which every eager caller paid. The packet
    stays the same object, an OpOverloadPacket (torch.compile, FX and
    torch.library see no difference); only its class gains this __call__."""
    route = torch._ops.OpOverloadPacket.__call__.__get__(packet)
    base = type(packet)
    # A partial is not a descriptor: as a class's __call__ it is called without the instance.
    packet.__class__ = type("EagerOpOverloadPacket", (base,),
                            {"__call__": functools.partial(entry, route, *bound), "__module__": base.__module__})


_serve_packet_calls(torch.ops.redux.sum, _C.packet_sum)
_serve_packet_calls(torch.ops.redux.mean, _C.packet_mean)
# The other public ops: the same entry by their schemas (_C.packet_op).
for _name in ("amax", "amin", "var", "std", "var_mean", "logsumexp", "softmax", "log_softmax", "vector_norm"):
    _serve_packet_calls(getattr(torch.ops.redux, _name), _C.packet_op, _C.op_handle(f"redux::{_name}"))
del _name

# The ops' overloads, bound once: calling an overload skips the packet's
# overload lookup, and a call without a dtype keyword skips the keyword
# parsing (redux.sum's host time on a small input 4.4-4.6 -> 3.7-3.9 us).
_SUM = torch.ops.redux.sum.default
_MEAN = torch.ops.redux.mean.default
_TENSOR = torch.Tensor
_compiling = torch.compiler.is_compiling
# A private torch function: where a torch lacks it, every call takes torch.ops.
_function_mode = getattr(torch._C, "_is_torch_function_mode_enabled", lambda: True)


def _eager(input):
    """Whether the eager entry (_C.sum / _C.mean: the same op through the
    dispatcher, ~2 us less host time a call) may serve this call: a plain
    tensor, no torch.compile or torch.export tracing, no __torch_function__
    mode. Subclasses, modes and tracers take the torch.ops call, which gives
    them their __torch_function__ hooks and the op as a graph node."""
    return not _compiling() and type(input) is _TENSOR and not _function_mode()


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001  (mirrors torch.sum)
    """torch.sum with redux's guarantees: torch.ops.redux.sum, the same bits.

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
    if _eager(input):
        return _C.sum(input, dim, keepdim, dtype)
    if isinstance(dim, int):
        dim = [dim]
    return _SUM(input, dim, keepdim) if dtype is None else _SUM(input, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.mean with redux's guarantees: torch.ops.redux.mean, the same bits.

    The sum runs through redux.sum's kernels and tree in a wider dtype (fp64
    for float32 and float64 results, fp32 for float16 and bfloat16), then is
    divided by the count of reduced elements and rounded once to the result
    dtype. Floating-point results only, like torch.mean (integers need a
    floating-point `dtype`); an empty reduction gives nan. Differentiable.
    """
    if _eager(input):
        return _C.mean(input, dim, keepdim, dtype)
    if isinstance(dim, int):
        dim = [dim]
    return _MEAN(input, dim, keepdim) if dtype is None else _MEAN(input, dim, keepdim, dtype=dtype)


def var(input, dim=None, *, correction=None, keepdim=False):
    """torch.var with redux's guarantees: torch.ops.redux.var, the same bits.

    Two passes on redux.sum: the mean in the wide dtype (fp64 for float32
    and float64, fp32 for float16 and bfloat16), then the sum of squared
    deviations from it in that dtype, divided once by max(0, N - correction)
    (correction 1 by default) and rounded once. Floating-point and complex
    inputs (complex: the variances of both parts, added), like torch.var.
    The bits depend only on the values, shape, layout and dtype; rows over
    trailing dims are batch-invariant. Differentiable.
    """
    return torch.ops.redux.var(input, [dim] if isinstance(dim, int) else dim, correction=correction, keepdim=keepdim)


def std(input, dim=None, *, correction=None, keepdim=False):
    """torch.std: the square root of redux.var, taken in the wide dtype
    before the one rounding (torch.ops.redux.std)."""
    return torch.ops.redux.std(input, [dim] if isinstance(dim, int) else dim, correction=correction, keepdim=keepdim)


def var_mean(input, dim=None, *, correction=None, keepdim=False):
    """torch.var_mean: (redux.var, redux.mean) from the same passes; the
    mean has redux.mean's bits (torch.ops.redux.var_mean)."""
    return torch.ops.redux.var_mean(input, [dim] if isinstance(dim, int) else dim, correction=correction,
                                    keepdim=keepdim)


def logsumexp(input, dim, keepdim=False):
    """torch.logsumexp with redux's guarantees (torch.ops.redux.logsumexp):
    the sum of exp(x - max) by redux.sum in the wide dtype (fp64 for float32
    and float64, fp32 for float16 and bfloat16), its log plus the max, one
    rounding. Integer inputs give the default floating dtype, as torch's.
    Differentiable."""
    return torch.ops.redux.logsumexp(input, [dim] if isinstance(dim, int) else dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """torch.softmax with redux's guarantees (torch.ops.redux.softmax): exp(x
    - max) in the wide dtype over its sum by redux.sum, one rounding. Rows
    are batch-invariant. Differentiable."""
    return torch.ops.redux.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.log_softmax with redux's guarantees (torch.ops.redux.log_softmax):
    x - max - log(sum(exp(x - max))) in the wide dtype, one rounding."""
    return torch.ops.redux.log_softmax(input, dim, dtype)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm with redux's guarantees
    (torch.ops.redux.vector_norm): |x| in the wide dtype (fp64 for float32
    and float64 and their complex forms), summed by redux.sum (ord 0, 1, 2
    and other p; +-inf: the exact max / min), one rounding. Differentiable
    (a zero norm has a zero gradient, as torch's)."""
    return torch.ops.redux.vector_norm(input, ord, [dim] if isinstance(dim, int) else dim, keepdim, dtype=dtype)


def amax(input, dim=(), keepdim=False):
    """torch.amax with redux's guarantees (torch.ops.redux.amax): the exact
    maximum, with bits that depend on the values alone (-0 below +0, any NaN
    the canonical NaN). Differentiable as torch's: the gradient shared
    evenly by the elements equal to the maximum."""
    return torch.ops.redux.amax(input, [dim] if isinstance(dim, int) else dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """torch.amin with redux's guarantees (torch.ops.redux.amin): the exact
    minimum, as redux.amax."""
    return torch.ops.redux.amin(input, [dim] if isinstance(dim, int) else dim, keepdim)


def has_cuda_kernels():
    """True when this build of redux carries CUDA kernels."""
    return torch._C._dispatch_has_kernel_for_dispatch_key("redux::sum", "CUDA")
