"""vmap batching rules for redux::sum, redux::mean, redux::amax, redux::amin, redux::_sum_of and
redux::_one_pass_mean.

Without a rule torch.vmap runs the op once per sample (torch's slow
fallback, with a warning). The rule moves the batch dim to the front and
reduces the sample's dims, shifted by one, in one call. Reductions over a
sample's trailing dims (and full reductions) keep each sample's bits: a
row's reduction tree depends only on its length and dtype. Sums over a
sample's leading or middle dims (the columns family) are deterministic but,
as for any batch, their chunking on CUDA may follow the batched shape.
amax and amin are exact with order-free bits: a sample's extreme has its
bits in any batch.
"""
import torch

_OPS = {"redux::sum": "redux.sum", "redux::mean": "redux.mean", "redux::amax": "redux.amax",
        "redux::amin": "redux.amin", "redux::_sum_of": "redux._sum_of", "redux::_one_pass_mean": "redux._one_pass_mean"}


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


def _rule(op, name):
    def batched(info, in_dims, input, dim=None, keepdim=False, **kwargs):  # kwargs: dtype (and _sum_of's of, grid)
        if in_dims[0] is None:  # only a tensor argument can be batched, and input is the only one
            return op(input, dim, keepdim, **kwargs), None
        x = input.movedim(in_dims[0], 0)
        rank = x.dim() - 1
        dims = [d + 1 for d in sample_dims(name, dim, rank)]
        if rank == 0:  # a 0-dim sample: its element as a row of one, no kept dim
            x, keepdim = x.unsqueeze(1), False
        return op(x, dims, keepdim, **kwargs), 0
    return batched


def register():
    for qualname, name in _OPS.items():
        op = getattr(torch.ops.redux, qualname.split("::")[1]).default
        torch.library.register_vmap(qualname, _rule(op, name))
