"""The one table of redux's sum variants.

Every op the harness scores, the tests check and the README lists comes from
VARIANTS. `sum` (torch.ops.redux.sum) is the product; the ladder rungs are
kept as ops so each idea can be scored on its own (csrc/cuda/ladder.cu).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    name: str            # op name in the torch.ops.redux namespace
    idea: str            # one line: what this variant does
    deterministic: bool  # bits independent of grid, GPU, stream and run
    general: bool        # full torch.sum semantics (dims, dtypes, CPU); else 1-D float32 CUDA only


VARIANTS = (
    Variant("sum_atomic_naive", "rung 1: one fp64 atomicAdd per element into a single cell", False, False),
    Variant("sum_smem_tree", "rung 2: shared-memory tree per block, one atomic per block", False, False),
    Variant("sum_warp_shuffle", "rung 3: warp-shuffle reduce, per-warp results in smem, one atomic per block",
            False, False),
    Variant("sum_grid_stride", "rung 4: device-sized grid, registers first (grid-stride), one atomic per block",
            False, False),
    Variant("sum_two_pass", "rung 5: fixed grid of per-block partials, then a second one-block kernel",
            True, False),
    Variant("sum_vec4", "rung 6: rung 4 with 16-byte float4 loads", False, False),
    Variant("sum_last_block", "rung 7: float4 single pass, last block (integer ticket) combines partials",
            False, False),
    Variant("sum_cub", "rung 8: cub::DeviceReduce::Sum, float accumulation (the library choice)", False, False),
    Variant("sum", "redux.sum: torch.sum semantics; a grid-stride read whose \"grid\" is a shape-fixed chunk "
            "count, fp64 accumulation, 16-byte loads, single pass with last-block finish, no memset", True, True),
)

# torch.sum is scored beside VARIANTS as the baseline; it is not a redux op.
BASELINE = "torch.sum"


def by_name(name):
    for v in VARIANTS:
        if v.name == name:
            return v
    raise KeyError(f"no redux variant named {name!r}; known: {[v.name for v in VARIANTS]}")
