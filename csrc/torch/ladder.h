// The ladder rungs as torch ops: op name <-> C API rung. Descriptions and
// determinism are in redux/variants.py (the one table of variants); a test
// holds the two lists together.
#pragma once

#include "redux/redux.h"

namespace redux_shim {

struct LadderOp {
  const char *name;
  redux_rung rung;
};

inline constexpr LadderOp kLadderOps[] = {
    {"sum_atomic_naive", REDUX_RUNG_ATOMIC_NAIVE}, {"sum_smem_tree", REDUX_RUNG_SMEM_TREE},
    {"sum_warp_shuffle", REDUX_RUNG_WARP_SHUFFLE}, {"sum_grid_stride", REDUX_RUNG_GRID_STRIDE},
    {"sum_two_pass", REDUX_RUNG_TWO_PASS},         {"sum_vec4", REDUX_RUNG_VEC4},
    {"sum_last_block", REDUX_RUNG_LAST_BLOCK},     {"sum_cub", REDUX_RUNG_CUB},
};

}  // namespace redux_shim
