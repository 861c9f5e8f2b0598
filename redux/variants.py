"""The one table of redux's sum variants, as Python sees it.

The table itself is C: include/redux/variants.h, compiled into redux._C
(which also registers one op per row). Every op the harness scores, the
tests check and the README lists comes from VARIANTS. `sum`
(torch.ops.redux.sum) is the product; the ladder rungs are kept as ops so
each idea can be scored on its own (csrc/cuda/ladder.cu).
"""
from dataclasses import dataclass

from . import _C


@dataclass(frozen=True)
class Variant:
    rung: int            # its number on the ladder, from 1 (the product is last)
    name: str            # op name in the torch.ops.redux namespace
    deterministic: bool  # bits independent of grid, GPU, stream and run
    general: bool        # full torch.sum semantics (dims, dtypes, CPU); else 1-D float32 CUDA only
    idea: str            # one line: what this variant does


VARIANTS = tuple(Variant(*row) for row in _C.variants())

# torch.sum is scored beside VARIANTS as the baseline; it is not a redux op.
BASELINE = "torch.sum"


def by_name(name):
    for v in VARIANTS:
        if v.name == name:
            return v
    raise KeyError(f"no redux variant named {name!r}; known: {[v.name for v in VARIANTS]}")
