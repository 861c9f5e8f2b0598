"""vmap batching rules for every public redux op and for redux::_sum_of,
redux::_one_pass_mean and redux::_pow_each.

Without a rule torch.vmap runs the op once per sample (torch's slow
fallback, with a warning). A rule moves the batch dim to the front and
reduces the sample's dims, shifted by one, in one call. Reductions over a
sample's trailing dims (and full reductions) keep each sample's bits: a
row's reduction tree depends only on its length and dtype, and
_pow_each (vector_norm's |x|^p and root) rounds an element the same at any
place, so it takes the batch as it is.

Over a sample's leading or middle dims (the columns families):
- sum, mean and their internal forms reduce the batch in one call:
  deterministic, but, as for any batch, their chunking on CUDA may follow
  the batched shape;
- amax and amin reduce it in one call too: a sample's extreme is exact, so
  its bits do not depend on the batch;
- var, std, var_mean, vector_norm, logsumexp, softmax and log_softmax call
  the op once per sample, inside the rule, so each sample keeps its own bits.
"""
import torch

# op -> how its rule treats columns: "batched" (one call) or "per_sample"
_REDUCTIONS = {"sum": "batched", "mean": "batched", "amax": "batched", "amin": "batched", "_sum_of": "batched",
               "_one_pass_mean": "batched", "var": "per_sample", "std": "per_sample", "var_mean": "per_sample",
               "vector_norm": "per_sample", "logsumexp": "per_sample"}
_ALONG_A_DIM = ("softmax", "log_softmax")  # one int dim, an output of the input's shape


def sample_dims(name, dim, rank):
    """The dims one sample of `rank` dims reduces, each in [0, rank)
    (a 0-dim sample: [0], its one element as a row of one)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return list(range(rank)) or [0]
    dims = [dim] if isinstance(dim, int) else list(dim)
    span = max(rank, 1)
    for d in dims:
        if not -span <= d < span:
            raise IndexError(f"{name}: argument 'dim' has {d}, out of range for a tensor of {rank} dimension(s) "
                             f"(expected in [{-span}, {span - 1}])")
    return [d % span for d in dims]


def _positional_names(op):
    """The names of op's arguments that a call may pass by position, in order."""
    return [a.name for a in op._schema.arguments if not a.kwarg_only]


def _trailing(dims, rank):
    """Whether the sample's dims are its last len(dims), the rows families' case."""
    return sorted(set(dims)) == list(range(rank - len(set(dims)), rank))


def _over_batch(op, x, one_call, batch_args, sample_args):
    """op on x, whose dim 0 is the batch: in one call with batch_args, or
    once per sample with sample_args, stacked (a batch of none: one call,
    there are no bits to keep)."""
    if one_call or x.shape[0] == 0:
        return op(x, **batch_args)
    results = [op(sample, **sample_args) for sample in x.unbind(0)]
    if isinstance(results[0], torch.Tensor):
        return torch.stack(results)
    return tuple(torch.stack(parts) for parts in zip(*results))


def _reduction_rule(op, name, columns):
    outputs = len(op._schema.returns)
    batch_out = (0,) * outputs if outputs > 1 else 0
    unbatched_out = (None,) * outputs if outputs > 1 else None
    names = _positional_names(op)

    def batched(info, in_dims, *args, **kwargs):
        if in_dims[0] is None:  # only the input can be batched: the schema has no other tensor
            return op(*args, **kwargs), unbatched_out
        sample_args = {**dict(zip(names, args)), **kwargs}  # trailing defaults left out
        x = sample_args.pop("self").movedim(in_dims[0], 0)
        rank = x.dim() - 1
        dims = sample_dims(name, sample_args.get("dim"), rank)
        batch_args = {**sample_args, "dim": [d + 1 for d in dims]}
        if rank == 0:  # a 0-dim sample: its element as a row of one, no kept dim
            x, batch_args["keepdim"] = x.unsqueeze(1), False
        one_call = columns == "batched" or rank == 0 or _trailing(dims, rank)
        return _over_batch(op, x, one_call, batch_args, sample_args), batch_out
    return batched


def _along_a_dim_rule(op, name):
    names = _positional_names(op)

    def batched(info, in_dims, *args, **kwargs):
        if in_dims[0] is None:
            return op(*args, **kwargs), None
        sample_args = {**dict(zip(names, args)), **kwargs}
        x = sample_args.pop("self").movedim(in_dims[0], 0)
        rank = x.dim() - 1
        (dim,) = sample_dims(name, sample_args["dim"], rank)
        if rank == 0:  # a 0-dim sample: a row of one, given back 0-dim
            return op(x.unsqueeze(1), **{**sample_args, "dim": 1}).squeeze(1), 0
        batch_args = {**sample_args, "dim": dim + 1}
        return _over_batch(op, x, dim == rank - 1, batch_args, sample_args), 0
    return batched


def _elementwise_rule(op):
    def batched(info, in_dims, x, *args, **kwargs):
        return op(x, *args, **kwargs), in_dims[0]
    return batched


def register():
    torch.library.register_vmap("redux::_pow_each", _elementwise_rule(torch.ops.redux._pow_each.default))
    for opname, columns in _REDUCTIONS.items():
        op = getattr(torch.ops.redux, opname).default
        torch.library.register_vmap(f"redux::{opname}", _reduction_rule(op, f"redux.{opname}", columns))
    for opname in _ALONG_A_DIM:
        op = getattr(torch.ops.redux, opname).default
        torch.library.register_vmap(f"redux::{opname}", _along_a_dim_rule(op, f"redux.{opname}"))
