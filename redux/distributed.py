"""Sums of tensors sharded over ranks, on torch.distributed (NCCL, gloo).

Two ways in:

* DTensor: ``torch.ops.redux.sum`` (and ``redux.sum`` / ``redux.mean``) take
  DTensor inputs. The sharding rule is registered with DTensor
  (``register_sharding``), so the output placements are torch.sum's: a
  sharded reduced dim gives ``Partial("sum")``, a sharded kept dim stays
  ``Shard``; ``full_tensor()`` / ``redistribute`` finish through the process
  group (NCCL or gloo), like torch.sum's own.
* Exact mode, ``redux.distributed.sum``: the result has exactly the bits of
  ``torch.ops.redux.sum`` of the whole tensor on one device, for any number
  of ranks. Each rank adds the units of its shard with the one-device
  kernels (redux.h, "Sharded sums"), the partials (bytes, not the tensor)
  are all-gathered, and every rank runs the one-device finish in unit order.

Shard layout exact mode assumes: the whole tensor is cut along dim 0 into
contiguous pieces in rank order (rank r holds rows [o_r, o_r + len_r) of
dim 0; pieces may differ in length, as torch.chunk's or DTensor Shard(0)'s
do); every other dim is whole on every rank. A DTensor input must be
``Shard(0)`` on one mesh dim and ``Replicate`` on the others.

``redux.distributed.cross_entropy`` is a vocabulary-parallel cross-entropy
built on it: the logits' vocab dim sharded over the ranks, its logsumexp's
sum over the vocab done in exact mode, so the loss has the same bits at any
rank count.

``redux.distributed.mean`` gives ``torch.ops.redux.mean``'s bits the same
way (the sum in the wider dtype, one division). Both are differentiable
(a shard's gradient is the output's gradient broadcast onto it, no
collective), compile with torch.compile(fullgraph=True) as one custom op,
and check every rank's input in their first collective, so that an
invalid input on one rank raises the same error on every rank.

The work is one C++ op, ``redux._sum_shards`` (csrc/torch/sharded_exact.cpp):
this rank's partials, one all-gather, the finish. When every shard boundary
falls on a unit boundary (``unit_of``), only partials move (a few KB to MB).
A boundary inside a unit moves that unit's raw elements on the two sides of
it (at most one unit per boundary) in the same all-gather, so the bits stay
exact. A problem of one unit (short reductions) gathers the shards and sums
them whole. A DTensor's shard lengths come from its metadata: one
collective, no host synchronisation, capturable in a CUDA graph. A plain
shard's lengths come from a first, small all-gather read on the host.
"""
import builtins
import importlib.abc
import importlib.util
import math
import sys
import zlib
from typing import List, Optional, Tuple

import torch
import torch.distributed as dist

from . import _C
from ._dtypes import MEAN_SUM_DTYPE as _MEAN_SUM_DTYPE

__all__ = ["sum", "mean", "cross_entropy", "unit_of"]

# Layout fields of torch.ops.redux._sum_sharding (csrc/torch/sharded.h).
_FAMILY, _OUTER, _N, _INNER, _UNIT, _UNITS, _ACC, _ROLE, _PER = range(9)
_META_DIMS = 8  # sizes carried by the cheap cross-rank check
# _C.sum_shards(_SHARDS_ROUTE, ...) calls torch.ops.redux._sum_shards with
# its arguments taken straight from Python (the op's own argument parsing
# costs more host time than the collective); other inputs take the route.
_SHARDS_ROUTE = torch.ops.redux._sum_shards.default


def unit_of(shape, dim=None, *, dtype=torch.float32, device="cpu", out_dtype=None):
    """Rows of dim 0 per unit for a sum of a tensor of `shape` over `dim` on
    `device`'s tree: shards of dim 0 whose lengths are multiples of it (all
    but the last) move only partials. None when the sum is one unit (or
    trivial) and exact mode gathers the shards instead."""
    x = torch.empty((1,) + tuple(shape)[1:], dtype=dtype, device=device)
    _, layout = torch.ops.redux._sum_sharding(x, list(shape), _dims(dim), out_dtype)
    if layout[_FAMILY] < 0 or layout[_UNITS] < 2:
        return None
    per, unit = layout[_PER], layout[_UNIT]
    if layout[_ROLE] == 1:  # dim 0 is kept: any cut of it moves only partials or outputs
        return 1
    # the fewest dim-0 rows whose elements of n are a whole number of units
    return unit // math.gcd(per, unit)


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, int) else list(dim)


def sum(x, dim=None, keepdim=False, *, dtype=None, group=None):  # noqa: A001 - torch.sum's name
    """torch.sum of a tensor sharded along dim 0 over the ranks of `group`,
    with exactly the bits of torch.ops.redux.sum of the whole tensor on one
    device (see the module's doc for the layout). x: a DTensor, or this
    rank's shard (a plain tensor) with `group` (None: the default group).
    Every rank of the group must call it. Returns the whole result on every
    rank: a plain tensor, or a Replicate DTensor for a DTensor input.
    Differentiable: the gradient of a shard is the output's gradient
    broadcast onto it (no collective)."""
    return _reduce("sum", x, dim, keepdim, dtype, group)


def mean(x, dim=None, keepdim=False, *, dtype=None, group=None):
    """torch.mean of a tensor sharded as for `sum`, with exactly the bits of
    torch.ops.redux.mean of the whole tensor on one device: the sharded sum
    in the wider dtype, divided once by the whole tensor's count. Floating
    results only, like torch.mean."""
    return _reduce("mean", x, dim, keepdim, dtype, group)


def _reduce(op, x, dim, keepdim, dtype, group):
    if not torch.compiler.is_compiling() and group is None:
        spec = getattr(x, "_spec", None)  # a DTensor's
        if spec is not None and not x.requires_grad:
            try:
                key = (op, id(spec.mesh), spec, dim if dim is None or isinstance(dim, int) else tuple(dim), keepdim,
                       dtype, x._local_tensor.shape[:1])
                known = _CALLS.get(key)
            except TypeError:  # an unhashable argument: the full path names it
                key = known = None
            if known is not None:
                return _call_known(op, x._local_tensor, keepdim, dtype, *known)
            out = _reduce_dtensor(op, x, dim, keepdim, dtype, group)
            if key is not None:
                if len(_CALLS) >= 64:
                    _CALLS.clear()
                _CALLS[key] = _known_call(x, dim, out)
            return out
    where = f"redux.distributed.{op}"
    dims = _dims(dim)
    dtensor = _dtensor_type()
    if dtensor is not None and isinstance(x, dtensor):
        return _reduce_dtensor(op, x, dim, keepdim, dtype, group)
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"{where}: no process group: call torch.distributed.init_process_group first, "
                           "or pass a DTensor")
    problem = _front_problem(x)
    if problem:  # still enter the first collective, so that every rank raises, not just this one
        _agree(op, None, None, False, None, group, _comm_device(None, group), problem)
    return _run(op, x, dims, keepdim, dtype, group, None)


def _reduce_dtensor(op, x, dim, keepdim, dtype, group):
    where = f"redux.distributed.{op}"
    dims = _dims(dim)
    local, group, mesh, lengths = _dtensor_shards(x, group, where)
    if group is None:  # replicated: every rank holds the whole tensor
        one_device = torch.ops.redux.mean if op == "mean" else torch.ops.redux.sum
        return _as_dtensor(one_device(local, dims, keepdim, dtype=dtype), mesh)
    # a DTensor's metadata is the same on every rank: so is any problem, raised here with no collective
    problem = _local_problem(op, local, dims, keepdim, dtype)
    if problem:
        raise problem[0](f"{where}: {problem[1]}")
    return _as_dtensor(_run(op, local, dims, keepdim, dtype, group, lengths), mesh)


# A DTensor call that needs no gradient, once it has succeeded, by (op, mesh
# id, input spec, dim, keepdim, dtype, local rows) -> what it found: the
# group, this rank, the lengths, where the collective's buffers live, the
# result's spec. The checks and lookups of a first call cost more host time
# than the collective; a training step repeats a few calls.
_CALLS = {}


def _known_call(x, dim, out):
    """The facts `_call_known` needs, of a successful call on DTensor x."""
    local, group, mesh, lengths = _dtensor_shards(x, None, "")
    name = None if group is None else group.group_name
    rank = None if group is None else _group_facts(group)[0]
    device = None if group is None else _comm_device(local, group)
    return mesh, _dims(dim), name, group, rank, lengths, device, out._spec


def _call_known(op, local, keepdim, dtype, mesh, dims, name, group, rank, lengths, device, out_spec):
    if group is None:  # replicated
        out = (torch.ops.redux.mean if op == "mean" else torch.ops.redux.sum)(local, dims, keepdim, dtype=dtype)
    elif op == "sum":
        out = _C.sum_shards(_SHARDS_ROUTE, local, lengths, rank, dims, keepdim, dtype, name, device)
    else:
        out = _shards_reduce(True, local, dims, keepdim, dtype, group, lengths)[0]
    return _new_dtensor(out, out_spec)


def _new_dtensor(local, spec):
    """DTensor(local, spec) without its __init__, which does nothing but
    costs a few microseconds of decorators."""
    cls = _dtensor_type()
    return cls.__new__(cls, local, spec, requires_grad=False)


def _run(op, x, dims, keepdim, dtype, group, lengths):
    """Exact mode: the custom op where autograd or torch.compile needs it,
    else its body straight away (the op's Python layers cost more than the
    collective on a fast link)."""
    if torch.compiler.is_compiling() or (x.requires_grad and torch.is_grad_enabled()):
        return _exact(x, dims, keepdim, dtype, "" if group is None else group.group_name, lengths, op == "mean")[0]
    return _shards_reduce(op == "mean", x, dims, keepdim, dtype, dist.group.WORLD if group is None else group,
                          lengths)[0]


def _dtensor_type():
    """DTensor's class when torch.distributed.tensor is loaded (a DTensor
    input means it is), else None: importing it costs ~0.6 s."""
    module = sys.modules.get("torch.distributed.tensor")
    return getattr(module, "DTensor", None)


def _dtensor_shards(x, group, where):
    """(local tensor, group, mesh, dim-0 lengths) of a DTensor; group None
    when it is replicated. Its metadata is the same on every rank, so the
    lengths come from its global shape, with no collective."""
    if group is not None:
        raise ValueError(f"{where}: argument 'group' must be None for a DTensor input (its device mesh names "
                         "the group)")
    mesh, placements = x.device_mesh, x.placements
    # to_local() is an autograd function: needed only when a gradient flows
    local = x.to_local() if torch.compiler.is_compiling() or x.requires_grad else x._local_tensor
    if torch.compiler.is_compiling():  # traced once: no cache (its key would guard on ids and sizes)
        return (local,) + _shards_of(x, local, mesh, placements, where)
    # the mesh by identity (the value holds it, so the id stays its own): an equal new mesh has its own group
    key = (id(mesh), placements, x.dim() and x.shape[0], local.dim() and local.shape[0])
    known = _SHARDS.get(key)
    if known is None:
        known = _shards_of(x, local, mesh, placements, where)
        if len(_SHARDS) >= 64:
            _SHARDS.clear()
        _SHARDS[key] = known
    return (local,) + known


_SHARDS = {}  # (id(mesh), placements, global rows, local rows) -> (group, mesh, lengths), of valid DTensors


def _shards_of(x, local, mesh, placements, where):
    from torch.distributed.tensor import Replicate, Shard
    sharded = [i for i, p in enumerate(placements) if not isinstance(p, Replicate)]
    if len(sharded) > 1 or any(not (isinstance(placements[i], Shard) and placements[i].dim == 0) for i in sharded):
        raise ValueError(f"{where}: argument 'x' has placements {tuple(placements)}; exact mode supports Shard(0) "
                         "on one mesh dim and Replicate on the others (redistribute the DTensor first)")
    if not sharded:
        return None, mesh, None
    if x.dim() == 0:
        raise ValueError(f"{where}: argument 'x' is 0-dim: there is no dim 0 to be sharded on")
    ranks, me = mesh.size(sharded[0]), mesh.get_local_rank(sharded[0])
    # Shard(0) cuts dim 0 as torch.chunk does: ceil(size / ranks) per rank, the last ones shorter or empty
    step = -(-x.shape[0] // ranks)
    lengths = [max(0, min(step, x.shape[0] - r * step)) for r in range(ranks)]
    if local.shape[0] != lengths[me]:
        raise ValueError(f"{where}: argument 'x' holds {local.shape[0]} rows of dim 0 on this rank where its "
                         f"global shape and Shard(0) (torch.chunk's cut) say {lengths[me]}: a DTensor made by "
                         "from_local with uneven pieces needs its global shape and stride")
    return mesh.get_group(sharded[0]), mesh, lengths


def _front_problem(x):
    """(exception type, message) when x cannot be a shard at all, else None."""
    if not isinstance(x, torch.Tensor):
        return TypeError, f"argument 'x' must be a Tensor or DTensor, got {type(x).__name__}"
    if x.layout != torch.strided:
        return TypeError, f"argument 'x' is a {x.layout} tensor; exact mode sums dense (strided) tensors"
    if x.device.type == "meta":
        return ValueError, "argument 'x' is on the meta device, which holds no values to sum"
    return None


def _local_problem(op, local, dims, keepdim, dtype):
    """(exception type, message) when this rank's shard or arguments are
    invalid, found by the one-device op's Meta kernel, else None."""
    problem = _front_problem(local)
    if problem:
        return problem
    if local.dim() == 0:
        return ValueError, "argument 'x' is 0-dim: there is no dim 0 to be sharded on"
    compiling = torch.compiler.is_compiling()
    key = None if compiling else (op, tuple(local.shape), local.dtype, None if dims is None else tuple(dims),
                                  bool(keepdim), dtype)
    if key in _VALID:
        return None
    try:
        meta = torch.empty(local.shape, dtype=local.dtype, device="meta")
    except (RuntimeError, TypeError, NotImplementedError):
        return TypeError, f"argument 'x' has dtype {local.dtype}, which redux does not sum"
    try:
        (torch.ops.redux.mean if op == "mean" else torch.ops.redux.sum)(meta, dims, keepdim, dtype=dtype)
    except _ERRORS as e:
        return type(e) if type(e) in _ERRORS else RuntimeError, str(e).strip()
    if key is not None:
        if len(_VALID) >= 256:
            _VALID.clear()
        _VALID.add(key)
    return None


_VALID = set()  # (op, shape, dtype, dims, keepdim, out dtype) the Meta kernel accepted: it decides on these alone


_ERRORS = (ValueError, TypeError, IndexError, RuntimeError, NotImplementedError)
_MESSAGE_BYTES = 240  # of a rank's error message carried to every rank


def _group_facts(group):
    """(this process's rank in `group`, whether its backend is NCCL): the
    c10d lookups cost more than a collective's launch; kept per group
    object (held, so a new group is a new key)."""
    facts = _GROUPS.get(group)
    if facts is None:
        facts = (dist.get_rank(group), dist.get_backend(group) == "nccl")
        if len(_GROUPS) >= 64:
            _GROUPS.clear()
        _GROUPS[group] = facts
    return facts


_GROUPS = {}


def _comm_device(x, group):
    """Where the collectives' buffers live: CUDA for NCCL, else the CPU."""
    if not _group_facts(dist.group.WORLD if group is None else group)[1]:
        return torch.device("cpu")
    if isinstance(x, torch.Tensor) and x.device.type == "cuda":
        return x.device
    return torch.device("cuda", torch.cuda.current_device())


def _digest(value):
    """The same small integer for the same value on every rank (hash() is
    salted per process)."""
    return zlib.crc32(repr(value).encode())


def _agree(op, local, dims, keepdim, dtype, group, device, problem):
    """The first collective of a plain shard's call: every rank gathers each
    rank's (problem, shape, dtype, arguments). Raises the same error on every
    rank when a rank's input is invalid or the ranks differ; else returns the
    dim-0 lengths."""
    where = f"redux.distributed.{op}"
    if problem is None:
        tail = list(local.shape[1:])
        meta = [0, local.dim(), _digest(local.dtype), local.shape[0], _digest((dims, bool(keepdim), dtype)),
                _digest(tail[_META_DIMS:])] + (tail + [0] * _META_DIMS)[:_META_DIMS]
        text = b""
    else:
        meta = [1 + _ERRORS.index(problem[0])] + [0] * (5 + _META_DIMS)
        text = problem[1].encode()[:_MESSAGE_BYTES]
    row = torch.cat([torch.tensor(meta, dtype=torch.int64).view(torch.uint8),
                     torch.frombuffer(bytearray(text.ljust(_MESSAGE_BYTES, b"\0")), dtype=torch.uint8)])
    world = dist.get_world_size(group)
    table = torch.empty(world * row.numel(), dtype=torch.uint8, device=device)  # flat: gloo wants the same dims
    dist.all_gather_into_tensor(table, row.to(device), group=group)
    table = table.view(world, -1).cpu()  # the one host synchronisation: the lengths decide the next collective
    ints = table[:, : row.numel() - _MESSAGE_BYTES].contiguous().view(torch.int64).tolist()  # Python ints: no tensor op per rank
    for rank, other in enumerate(ints):
        if other[0] != 0:
            message = bytes(table[rank, -_MESSAGE_BYTES:].tolist()).rstrip(b"\0").decode(errors="ignore")
            raise _ERRORS[other[0] - 1](f"{where}: on rank {rank} of {world}: {message}")
    mine = ints[_group_facts(dist.group.WORLD if group is None else group)[0]]
    for rank, other in enumerate(ints):
        if other[1:3] != mine[1:3] or other[4:] != mine[4:]:
            raise ValueError(f"{where}: argument '{'logits' if op == 'cross_entropy' else 'x'}' differs across "
                             f"ranks: rank {rank} has another dtype, number "
                             "of dims, size of a dim other than 0, or other dim/keepdim/dtype arguments than this "
                             "rank (only dim 0 may differ)")
    return [other[3] for other in ints]


def _group_named(name):
    return dist.group.WORLD if not name else dist.distributed_c10d._resolve_process_group(name)


def _reduced(ndim, dims):
    """The reduced dims, ascending (no dims or [] reduces all, as in torch.sum)."""
    if not dims:
        return list(range(ndim))
    reduced = []
    for d in dims:  # no set: under torch.compile with dynamic shapes a dim can be a SymInt
        if d % ndim not in reduced:
            reduced.append(d % ndim)
    return sorted(reduced)


def _mean_count(rows, shard_shape, dim):
    """The elements a mean divides by: the reduced sizes of the whole tensor
    (`rows` rows of dim 0, the other dims the shard's)."""
    whole = [rows] + list(shard_shape[1:])
    return math.prod(whole[d] for d in _reduced(len(whole), dim))


def _mean_dtypes(x_dtype, dtype):
    """(result dtype, the sum's dtype) of redux.mean, for a valid call."""
    out = dtype or x_dtype
    return out, _MEAN_SUM_DTYPE[out]



@torch.library.custom_op("redux::_distributed_reduce", mutates_args=())
def _exact(x: torch.Tensor, dim: Optional[List[int]], keepdim: bool, dtype: Optional[torch.dtype], group_name: str,
           lengths: Optional[List[int]], mean: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """Exact mode as one op (so torch.compile sees one node, no graph break):
    (the result, [this rank's first row, the whole tensor's rows] as int64
    on the CPU, for the backward: of a size that does not depend on the rank
    count, which compiled code cached on disk does not see). `lengths` given
    (a DTensor's): one collective; else the first collective checks every
    rank's input and learns them."""
    group = _group_named(group_name)
    out, lengths = _shards_reduce(mean, x, dim, keepdim, dtype, group, lengths)
    return out, torch.tensor([builtins.sum(lengths[: _group_facts(group)[0]]), builtins.sum(lengths)])


def _shards_reduce(mean, x, dim, keepdim, dtype, group, lengths):
    """(the exact sharded sum (csrc/torch/sharded_exact.cpp) or redux.mean's
    finish of it, the dim-0 lengths). lengths None: the first collective
    checks every rank's input and learns them. A mean is the sum in the
    wide dtype, one division by the whole count (0 elements give nan)."""
    device = _comm_device(x, group)
    if lengths is None:
        op = "mean" if mean else "sum"
        lengths = _agree(op, x, dim, keepdim, dtype, group, device, _local_problem(op, x, dim, keepdim, dtype))
    rank = _group_facts(group)[0]
    if not mean:
        return _C.sum_shards(_SHARDS_ROUTE, x, lengths, rank, dim, keepdim, dtype, group.group_name, device), lengths
    out, wide = _mean_dtypes(x.dtype, dtype)
    total = _C.sum_shards(_SHARDS_ROUTE, x, lengths, rank, dim, keepdim, wide, group.group_name, device)
    return total.div(_mean_count(builtins.sum(lengths), x.shape, dim)).to(out), lengths


@_exact.register_fake
def _exact_fake(x, dim, keepdim, dtype, group_name, lengths, mean):
    kept0 = 0 not in _reduced(x.dim(), dim)
    rows = builtins.sum(lengths) if lengths is not None else x.shape[0]
    one_device = torch.ops.redux.mean if mean else torch.ops.redux.sum
    like = one_device(torch.empty([rows] + list(x.shape[1:]), dtype=x.dtype, device="meta"), dim, keepdim,
                      dtype=dtype)
    shape = list(like.shape)
    if kept0 and lengths is None:  # the other ranks' lengths: known only when the op runs
        shape[0] = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty(shape, dtype=like.dtype), x.new_empty((2,), dtype=torch.int64, device="cpu")


def _exact_setup(ctx, inputs, output):
    x, dim, keepdim, _, group_name, _, mean = inputs
    ctx.shape, ctx.x_dtype, ctx.dim, ctx.keepdim, ctx.group_name, ctx.mean = (
        list(x.shape), x.dtype, dim, keepdim, group_name, mean)
    ctx.save_for_backward(output[1])


def _exact_backward(ctx, grad, _):
    (rows,) = ctx.saved_tensors
    return (_exact_grad(grad, rows, ctx.shape, ctx.dim, ctx.keepdim, ctx.x_dtype, ctx.group_name, ctx.mean),
            None, None, None, None, None, None)


_exact.register_autograd(_exact_backward, setup_context=_exact_setup)


@torch.library.custom_op("redux::_distributed_reduce_backward", mutates_args=())
def _exact_grad(grad: torch.Tensor, rows: torch.Tensor, shape: List[int], dim: Optional[List[int]], keepdim: bool,
                x_dtype: torch.dtype, group_name: str, mean: bool) -> torch.Tensor:
    """The gradient of this rank's shard: the output's gradient broadcast
    onto the whole tensor, this rank's rows of it (as redux.sum's and
    redux.mean's own backward compute it on one device). rows: [this rank's
    first row, the whole tensor's rows]. No collective."""
    first, total = rows.tolist()
    reduced = _reduced(len(shape), dim)
    if mean:
        grad = grad.to(_mean_dtypes(x_dtype, grad.dtype)[1]).div(_mean_count(total, shape, dim))
    if not keepdim:
        for d in reduced:
            grad = grad.unsqueeze(d)
    if 0 not in reduced:
        grad = grad.narrow(0, first, shape[0])
    return grad.expand(shape).to(x_dtype).clone(memory_format=torch.contiguous_format)


@_exact_grad.register_fake
def _exact_grad_fake(grad, rows, shape, dim, keepdim, x_dtype, group_name, mean):
    return grad.new_empty(shape, dtype=x_dtype)


def _exact_grad_setup(ctx, inputs, output):
    grad, _, _, dim, keepdim, _, group_name, mean = inputs
    ctx.grad_dtype, ctx.dim, ctx.keepdim, ctx.group_name, ctx.mean = grad.dtype, dim, keepdim, group_name, mean


def _exact_grad_backward(ctx, v):
    # the backward is linear in the output's gradient; its adjoint is the same sharded reduction of v
    out = _exact(v, ctx.dim, ctx.keepdim, ctx.grad_dtype, ctx.group_name, None, ctx.mean)[0]
    return out, None, None, None, None, None, None, None


_exact_grad.register_autograd(_exact_grad_backward, setup_context=_exact_grad_setup)


_REDUCTIONS = ("mean", "sum", "none")


def cross_entropy(logits, target, *, ignore_index=-100, reduction="mean", group=None):
    """Vocabulary-parallel cross-entropy: F.cross_entropy(whole_logits,
    target) with the vocab dim of the logits sharded over the ranks of
    `group` (None: the default group).

    logits: (tokens, vocab piece), this rank's contiguous piece of the vocab,
    pieces in rank order (any lengths, empty ones included); float32,
    float64, float16 or bfloat16. target: (tokens,) int64 class ids into the
    whole vocab (or ignore_index), the same on every rank. Returns the loss
    (per token for reduction="none"), the same on every rank.

    Every value is computed in the mean's wide dtype (fp64 for float32
    logits) and rounded once. The row maxima and the target logits are
    exact (a maximum over ranks); the sum of exp(logit - max) over the
    vocab is exact mode's sum, so the loss has the same bits at every rank
    count and shard lengths: those of the one-device formula
        m = logits.amax(1) (0 where not finite), in the wide dtype
        s = torch.ops.redux.sum((logits - m[:, None]).exp().t().contiguous(), [0])
        loss = log(s) + m - logits[i, target[i]]
    reduced by torch.ops.redux.sum over the tokens (divided by the number of
    tokens not ignored for "mean"). Three collectives and two reads on the
    host: the shard lengths (with every rank's input checked: an invalid
    input on one rank raises the same error on every rank) and whether a
    class id is out of range. Differentiable with respect to the logits
    (softmax minus one-hot, no collective)."""
    where = "redux.distributed.cross_entropy"
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"{where}: no process group: call torch.distributed.init_process_group first")
    if group is None:
        group = dist.group.WORLD
    problem = _cross_entropy_problem(logits, target, ignore_index, reduction)
    device = _comm_device(logits if problem is None else None, group)
    lengths = _agree("cross_entropy", None if problem else logits.t(), [0], False, None, group, device, problem)
    vocab, rank = builtins.sum(lengths), _group_facts(group)[0]
    if target.numel() and bool(((target != ignore_index) & ((target < 0) | (target >= vocab))).any()):
        # the same target on every rank: every rank raises this
        raise IndexError(f"{where}: argument 'target' has a class id outside [0, {vocab}) that is not "
                         f"ignore_index ({ignore_index})")
    start = builtins.sum(lengths[:rank])
    return _VocabParallelCrossEntropy.apply(logits, target, ignore_index, reduction, group, lengths, start)


def _cross_entropy_problem(logits, target, ignore_index, reduction):
    """(exception type, message) for an invalid call on this rank, else None."""
    problem = _front_problem(logits)
    if problem:
        return problem
    if not isinstance(target, torch.Tensor):
        return TypeError, f"argument 'target' must be a Tensor, got {type(target).__name__}"
    if logits.dim() != 2:
        return ValueError, f"argument 'logits' must be 2-D (tokens, vocab piece), got {logits.dim()}-D"
    if logits.dtype not in _MEAN_SUM_DTYPE:
        return TypeError, (f"argument 'logits' has dtype {logits.dtype} (expected float32, float64, float16 or "
                           "bfloat16)")
    if target.dtype != torch.int64 or target.shape != logits.shape[:1]:
        return ValueError, (f"argument 'target' must be int64 of shape ({logits.shape[0]},) (one class id per "
                            f"token), got {target.dtype} of shape {tuple(target.shape)}")
    if target.device != logits.device:
        return ValueError, f"argument 'target' is on {target.device} and 'logits' on {logits.device}"
    if reduction not in _REDUCTIONS:
        return ValueError, f"argument 'reduction' must be one of {_REDUCTIONS}, got {reduction!r}"
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
        return TypeError, f"argument 'ignore_index' must be an int, got {type(ignore_index).__name__}"
    return None


class _VocabParallelCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target, ignore_index, reduction, group, lengths, start):
        wide = _MEAN_SUM_DTYPE[logits.dtype]
        tokens, width = logits.shape
        local = (target >= start) & (target < start + width)
        valid = target != ignore_index
        # one all-reduce (max) of [row maxima; target logits, -inf off this rank]: both exact
        both = torch.full((2, tokens), -math.inf, dtype=wide, device=logits.device)
        if width:
            both[0] = logits.amax(1)
            picked = logits.gather(1, (target - start).clamp(0, width - 1).unsqueeze(1)).squeeze(1)
            both[1] = picked.to(wide).masked_fill(~local, -math.inf)
        both = both.to(_comm_device(logits, group))
        dist.all_reduce(both, dist.ReduceOp.MAX, group=group)
        both = both.to(logits.device)
        shift = both[0].masked_fill(~both[0].isfinite(), 0)
        exps = torch.empty((width, tokens), dtype=wide, device=logits.device)  # the vocab as dim 0: exact mode's cut
        torch.sub(logits.t(), shift, out=exps).exp_()
        sums = _run("sum", exps, [0], False, None, group, lengths)
        lse = sums.log().add(shift)
        loss = torch.where(valid, lse - both[1], torch.zeros((), dtype=wide, device=logits.device))
        count = valid.sum()
        if reduction == "sum":
            out = torch.ops.redux.sum(loss)
        elif reduction == "mean":
            out = torch.ops.redux.sum(loss).div(count)
        else:
            out = loss
        ctx.save_for_backward(logits, target, lse, count)
        ctx.ignore_index, ctx.reduction, ctx.start = ignore_index, reduction, start
        return out.to(logits.dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        logits, target, lse, count = ctx.saved_tensors
        width = logits.shape[1]
        wide = lse.dtype
        scale = grad.to(wide).expand(target.shape)
        if ctx.reduction == "mean":
            scale = scale.div(count)
        valid = target != ctx.ignore_index
        scale = scale.masked_fill(~valid, 0)
        probs = logits.to(wide).sub(lse.unsqueeze(1)).exp_()
        local = valid & (target >= ctx.start) & (target < ctx.start + width)
        if width:
            probs.scatter_add_(1, (target - ctx.start).clamp(0, width - 1).unsqueeze(1),
                               local.to(wide).neg().unsqueeze(1))
        return probs.mul_(scale.unsqueeze(1)).to(logits.dtype), None, None, None, None, None, None


def _as_dtensor(result, mesh):
    """The Replicate DTensor of `result` on every rank. A result that needs
    no gradient gets a cached spec straight away: from_local's autograd
    function and checks cost more than the collective."""
    from torch.distributed.tensor import DTensor, Replicate
    if torch.compiler.is_compiling() or result.requires_grad:
        return DTensor.from_local(result, mesh, [Replicate()] * mesh.ndim, run_check=False)
    key = (id(mesh), result.shape, result.stride(), result.dtype)
    known = _SPECS.get(key)
    if known is None:
        from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
        known = (DTensorSpec(mesh, (Replicate(),) * mesh.ndim,
                             tensor_meta=TensorMeta(result.shape, result.stride(), result.dtype)),
                 mesh)  # the mesh held, so its id stays its own
        if len(_SPECS) >= 64:
            _SPECS.clear()
        _SPECS[key] = known
    return _new_dtensor(result, known[0])


_SPECS = {}  # (id(mesh), shape, stride, dtype) -> (Replicate spec, mesh)


def _register_dtensor_rules_when_loaded():
    """Registers the DTensor rule now if DTensor is loaded, else right after
    torch.distributed.tensor is first imported: importing it here would add
    ~0.6 s to every `import redux`."""
    if "torch.distributed.tensor" in sys.modules:
        _register_dtensor_rules()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("torch.distributed.tensor", _register_dtensor_rules))


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs `then` once, right after module `name` has executed."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # the real finders answer from here on
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_module = spec.loader.exec_module

        def exec_then(module):
            run_module(module)
            self.then()

        spec.loader.exec_module = exec_then
        return spec


def _register_dtensor_rules():
    """DTensor sharding rules of redux.sum and of redux::_sum_of (a sum of
    |x| or x * x, which adds over shards as a sum does): torch.sum's
    placements; of redux::_pow_each (element by element, the same bits at
    every place): its input's."""
    try:
        from torch.distributed.tensor import Partial, Replicate, Shard
        from torch.distributed.tensor.experimental import register_sharding
    except ImportError:  # pragma: no cover - torch built without distributed
        return

    def placements(x, dim, keepdim):
        ndim = len(x.shape)
        dims = _dims(dim)
        reduced = set(range(ndim)) if not dims else {d % max(ndim, 1) for d in dims}
        rules = [([Replicate()], [Replicate(), None, None])]
        for d in range(ndim):
            if d in reduced:
                out = Partial("sum")
            else:
                out = Shard(d if keepdim else d - len([r for r in reduced if r < d]))
            rules.append(([out], [Shard(d), None, None]))
        return rules

    @register_sharding(torch.ops.redux.sum.default)
    def _sum_rule(x, dim=None, keepdim=False, dtype=None):
        return placements(x, dim, keepdim)

    @register_sharding(torch.ops.redux._sum_of.default)
    def _sum_of_rule(x, dim=None, keepdim=False, of="square", dtype=None, grid=0):
        return placements(x, dim, keepdim)

    @register_sharding(torch.ops.redux._pow_each.default)
    def _pow_each_rule(x, exponent):
        return [([Replicate()], [Replicate(), None])] + [([Shard(d)], [Shard(d), None]) for d in range(len(x.shape))]

    # register_sharding keys its cache on int arguments only, and dim is
    # int[]?: without this, a call reuses the placements of an earlier call
    # with another dim. Key on dim, keepdim and dtype.
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._op_schema import RuntimeSchemaInfo
    DTensor._op_dispatcher.sharding_propagator.op_to_schema_info[torch.ops.redux.sum.default] = RuntimeSchemaInfo(
        static_argnum=1, static_kwargkey=["dtype"], needs_pytree=True)
    DTensor._op_dispatcher.sharding_propagator.op_to_schema_info[torch.ops.redux._sum_of.default] = RuntimeSchemaInfo(
        static_argnum=1, static_kwargkey=["of", "dtype", "grid"], needs_pytree=True)
