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

Cost: when every shard boundary falls on a unit boundary (``unit_of``),
only partials move (a few KB to MB). A boundary inside a unit moves that
unit's raw elements on the two sides of it (at most one unit per boundary),
so the bits stay exact. A problem of one unit (short reductions) gathers
the shards and sums them whole. Every path is deterministic and exact.
"""
import builtins
import importlib.abc
import importlib.util
import math
import sys
import zlib

import torch
import torch.distributed as dist

__all__ = ["sum", "unit_of"]

# Layout fields of torch.ops.redux._sum_sharding (csrc/torch/sharded.h).
_FAMILY, _OUTER, _N, _INNER, _UNIT, _UNITS, _ACC, _ROLE, _PER = range(9)
_ROWS = 1  # redux_family REDUX_ROWS
_META_DIMS = 8  # sizes carried by the cheap cross-rank check


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


def _group_of(x, group):
    """(local tensor, group, DTensor mesh or None, dim-0 lengths or None) for
    a DTensor or a shard. A DTensor's metadata is the same on every rank, so
    its lengths come from its global shape, with no collective."""
    try:
        from torch.distributed.tensor import DTensor, Replicate, Shard
    except ImportError:  # pragma: no cover - torch without DTensor
        DTensor = None
    if DTensor is not None and isinstance(x, DTensor):
        if group is not None:
            raise ValueError("redux.distributed.sum: argument 'group' must be None for a DTensor input "
                             "(its device mesh names the group)")
        mesh, placements = x.device_mesh, x.placements
        sharded = [i for i, p in enumerate(placements) if not isinstance(p, Replicate)]
        if len(sharded) > 1 or any(not (isinstance(placements[i], Shard) and placements[i].dim == 0)
                                   for i in sharded):
            raise ValueError(f"redux.distributed.sum: argument 'x' has placements {tuple(placements)}; exact "
                             "mode supports Shard(0) on one mesh dim and Replicate on the others "
                             "(redistribute the DTensor first)")
        if not sharded:
            return x.to_local(), None, mesh, None
        local, ranks = x.to_local(), mesh.size(sharded[0])
        if x.dim() == 0:
            raise ValueError("redux.distributed.sum: argument 'x' is 0-dim: there is no dim 0 to be sharded on")
        # Shard(0) cuts dim 0 as torch.chunk does: ceil(size / ranks) per rank, the last ones shorter or empty
        step = -(-x.shape[0] // ranks)
        lengths = [max(0, min(step, x.shape[0] - r * step)) for r in range(ranks)]
        if local.shape[0] != lengths[mesh.get_local_rank(sharded[0])]:
            raise RuntimeError(f"redux.distributed.sum: internal: this rank's Shard(0) piece has {local.shape[0]} "
                               f"rows, torch.chunk's rule says {lengths[mesh.get_local_rank(sharded[0])]}")
        return local, mesh.get_group(sharded[0]), mesh, lengths
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"redux.distributed.sum: argument 'x' must be a Tensor or DTensor, got {type(x).__name__}")
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("redux.distributed.sum: no process group: call torch.distributed.init_process_group "
                           "first, or pass a DTensor")
    return x, group, None, None


def _comm_device(x, group):
    """Where the collectives' buffers live: CUDA for NCCL, else the CPU."""
    return x.device if dist.get_backend(group) == "nccl" else torch.device("cpu")


def _gather_rows(t, lengths, group, device):
    """all_gather of tensors equal but for dim 0, whose per-rank lengths are
    `lengths`: padded to the longest, then cut back; returns the list. They
    travel as bytes: every dtype moves exactly, also those a backend cannot
    gather (gloo has no int16 or unsigned ones)."""
    longest = max(lengths)
    rest = tuple(t.shape[1:])
    row_bytes = math.prod(rest) * t.element_size()
    pad = torch.zeros((longest, row_bytes), dtype=torch.uint8, device=device)
    pad[: t.shape[0]] = t.to(device).contiguous().view(torch.uint8).reshape(t.shape[0], row_bytes)
    parts = [torch.empty_like(pad) for _ in lengths]
    dist.all_gather(parts, pad, group=group)
    return [p[:n].view(t.dtype).reshape((n,) + rest) for p, n in zip(parts, lengths)]


def _digest(value):
    """The same small integer for the same value on every rank (hash() is
    salted per process)."""
    return zlib.crc32(repr(value).encode())


def _check_alike(local, dim, keepdim, dtype, group, device):
    """Gathers each rank's (shape, dtype, arguments) and raises the same error
    on every rank if they differ. Returns the dim-0 lengths."""
    if local.dim() == 0:
        raise ValueError("redux.distributed.sum: argument 'x' is 0-dim: there is no dim 0 to be sharded on")
    tail = list(local.shape[1:])
    meta = [local.dim(), _digest(local.dtype), local.shape[0], _digest((_dims(dim), bool(keepdim), dtype)),
            _digest(tail[_META_DIMS:])]
    meta += (tail + [0] * _META_DIMS)[:_META_DIMS]
    rows = _gather_rows(torch.tensor([meta], dtype=torch.int64), [1] * dist.get_world_size(group), group, device)
    table = torch.cat(rows).cpu()
    mine = torch.tensor(meta, dtype=torch.int64)
    for rank, row in enumerate(table):
        if row[0] != mine[0] or row[1] != mine[1] or row[3:].ne(mine[3:]).any():
            raise ValueError(f"redux.distributed.sum: argument 'x' differs across ranks: rank {rank} has another "
                             "dtype, number of dims, size of a dim other than 0, or other dim/keepdim/dtype "
                             "arguments than this rank (only dim 0 may differ)")
    return [int(v) for v in table[:, 2]]


def sum(x, dim=None, keepdim=False, *, dtype=None, group=None):  # noqa: A001 - torch.sum's name
    """torch.sum of a tensor sharded along dim 0 over the ranks of `group`,
    with exactly the bits of torch.ops.redux.sum of the whole tensor on one
    device (see the module's doc for the layout). x: a DTensor, or this
    rank's shard (a plain tensor) with `group` (None: the default group).
    Every rank of the group must call it. Returns the whole result on every
    rank: a plain tensor, or a Replicate DTensor for a DTensor input."""
    local, group, mesh, lengths = _group_of(x, group)
    if mesh is not None and group is None:  # replicated: every rank holds the whole tensor
        result = torch.ops.redux.sum(local, _dims(dim), keepdim, dtype=dtype)
        return _as_dtensor(result, mesh)
    device = _comm_device(local, group)
    if lengths is None:  # a plain shard: check the ranks agree and learn their lengths (one small all-gather)
        lengths = _check_alike(local, dim, keepdim, dtype, group, device)
    rank = dist.get_rank(group)
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    whole = [offsets[-1]] + list(local.shape[1:])
    view, layout = torch.ops.redux._sum_sharding(local, whole, _dims(dim), dtype)
    # the result's shape and dtype, by torch.sum's rules (the op's Meta kernel)
    like = torch.ops.redux.sum(torch.empty(whole, dtype=local.dtype, device="meta"), _dims(dim), keepdim, dtype=dtype)
    if layout[_FAMILY] < 0 or layout[_UNITS] < 2:
        if layout[_ROLE] == 1 and layout[_FAMILY] == _ROWS:
            # rows of a batch take their one-device tree (batch invariance)
            out = torch.ops.redux.sum(view, [1], False, dtype=dtype).reshape(-1, 1)
            result = _gather_outputs(out, lengths, layout, group, device)
        else:
            parts = _gather_rows(local, lengths, group, device)
            result = torch.ops.redux.sum(torch.cat(parts).to(local.device), _dims(dim), keepdim, dtype=dtype)
    elif layout[_ROLE] == 1:
        partials = torch.ops.redux._sum_unit_partials(view, layout, 0, layout[_UNITS]) if view.shape[0] else None
        out = (torch.ops.redux._sum_from_partials(partials, layout) if partials is not None
               else torch.empty((0, layout[_INNER]), dtype=like.dtype, device=local.device))
        result = _gather_outputs(out, lengths, layout, group, device)
    else:
        partials = _partials_of_shards(view, layout, [o * layout[_PER] for o in offsets], rank, group, device)
        result = torch.ops.redux._sum_from_partials(partials.to(local.device), layout)
    result = result.reshape(like.shape)
    return _as_dtensor(result, mesh) if mesh is not None else result


def _as_dtensor(result, mesh):
    from torch.distributed.tensor import DTensor, Replicate
    return DTensor.from_local(result, mesh, [Replicate()] * mesh.ndim, run_check=False)


def _gather_outputs(out, lengths, layout, group, device):
    """Kept dim 0 sharded: each rank's [slices, inner] outputs, in rank order."""
    per = layout[_PER]
    parts = _gather_rows(out, [n * per for n in lengths], group, device)
    return torch.cat(parts).to(out.device)


def _partials_of_shards(view, layout, bounds, rank, group, device):
    """Reduced dim 0 sharded: rank r holds n-range [bounds[r], bounds[r+1]).
    Returns every unit's partials [outer, units, inner, acc] in unit order:
    whole units from their rank, units cut by a boundary from their pieces,
    gathered raw and added here exactly as one device adds them."""
    unit, units, n = layout[_UNIT], layout[_UNITS], layout[_N]
    ranks = len(bounds) - 1

    def whole_units(r):  # units lying wholly in rank r's range
        a, b = bounds[r], bounds[r + 1]
        u0 = -(-a // unit)
        u1 = units if b == n else b // unit
        return u0, max(u0, u1)

    def pieces(r):  # rank r's n-ranges outside its whole units, cut at unit boundaries
        a, b = bounds[r], bounds[r + 1]
        u0, u1 = whole_units(r)
        outside = [(a, b)] if u0 == u1 else [(a, u0 * unit), (min(u1 * unit, n), b)]
        cut = []
        for lo, hi in outside:
            while lo < hi:
                end = min(hi, (lo // unit + 1) * unit)
                cut.append((lo, end))
                lo = end
        return cut

    u0, u1 = whole_units(rank)
    local = view.new_empty((view.shape[0], 0, view.shape[2], layout[_ACC]), dtype=torch.uint8)
    if u1 > u0:
        local = torch.ops.redux._sum_unit_partials(view[:, u0 * unit - bounds[rank]: min(u1 * unit, n) - bounds[rank]]
                                                   .contiguous(), layout, u0, u1)
    counts = [whole_units(r)[1] - whole_units(r)[0] for r in range(ranks)]
    gathered = _gather_rows(local.transpose(0, 1).contiguous(), counts, group, device)
    # raw elements of the cut units: every rank's pieces, concatenated along n
    mine = [view[:, lo - bounds[rank]: hi - bounds[rank]] for lo, hi in pieces(rank)]
    raw = torch.cat(mine, 1) if mine else view[:, :0]
    piece_len = [builtins.sum(hi - lo for lo, hi in pieces(r)) for r in range(ranks)]
    raws = _gather_rows(raw.transpose(0, 1).contiguous(), piece_len, group, device) if any(piece_len) else None

    full = torch.empty((units,) + tuple(local.transpose(0, 1).shape[1:]), dtype=torch.uint8, device=device)
    for r in range(ranks):
        a, b = whole_units(r)
        if b > a:
            full[a:b] = gathered[r]
    cut = {}
    for r in range(ranks):
        at = 0
        for lo, hi in pieces(r):
            cut.setdefault(lo // unit, []).append(raws[r][at: at + hi - lo])
            at += hi - lo
    for u, bits in sorted(cut.items()):
        data = torch.cat(bits).transpose(0, 1).contiguous().to(view.device)
        full[u] = torch.ops.redux._sum_unit_partials(data, layout, u, u + 1).transpose(0, 1)[0].to(device)
    return full.transpose(0, 1).contiguous()


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
    """DTensor sharding rules of redux.sum: torch.sum's placements."""
    try:
        from torch.distributed.tensor import Partial, Replicate, Shard
        from torch.distributed.tensor.experimental import register_sharding
    except ImportError:  # pragma: no cover - torch built without distributed
        return

    @register_sharding(torch.ops.redux.sum.default)
    def _sum_rule(x, dim=None, keepdim=False, dtype=None):
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

    # register_sharding keys its cache on int arguments only, and dim is
    # int[]?: without this, a call reuses the placements of an earlier call
    # with another dim. Key on dim, keepdim and dtype.
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._op_schema import RuntimeSchemaInfo
    DTensor._op_dispatcher.sharding_propagator.op_to_schema_info[torch.ops.redux.sum.default] = RuntimeSchemaInfo(
        static_argnum=1, static_kwargkey=["dtype"], needs_pytree=True)
