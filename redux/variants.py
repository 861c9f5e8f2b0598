"""The one table of redux's sum variants.

Every op the harness scores, the tests check and the README lists comes from
VARIANTS. `redux.sum` (torch.ops.redux.sum) is the product; the ladder rungs
(added with the leaderboard) are kept as ops so each can be scored.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    name: str           # op name in the torch.ops.redux namespace
    idea: str           # one line: what this variant does
    deterministic: bool # bits independent of grid, GPU, stream and run
    general: bool       # full torch.sum semantics (dims, dtypes, CPU); else 1-D float32 CUDA only


VARIANTS = (
    Variant("sum", "torch.sum semantics; chunked single pass, fp64/compensated accumulation, "
            "last-block finish with integer tickets", True, True),
)


def by_name(name):
    for v in VARIANTS:
        if v.name == name:
            return v
    raise KeyError(f"no redux variant named {name!r}; known: {[v.name for v in VARIANTS]}")
