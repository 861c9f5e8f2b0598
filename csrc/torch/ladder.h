// The ladder rungs as torch ops: op name <-> C API rung, expanded from the
// variants table (include/redux/variants.h), and the one registration loop
// every backend uses.
#pragma once

#include <torch/library.h>

#include <iterator>
#include <utility>

#include "redux/redux.h"

namespace redux_shim {

struct LadderOp {
  const char *name;
  redux_rung rung;
};

inline constexpr LadderOp kLadderOps[] = {
#define REDUX_LADDER_OP(RUNG, ID, NAME, DETERMINISTIC, IDEA) {#NAME, REDUX_RUNG_##ID},
    REDUX_LADDER_RUNGS(REDUX_LADDER_OP)
#undef REDUX_LADDER_OP
};
inline constexpr size_t kLadderCount = std::size(kLadderOps);

// The one argument check of every rung's op (CUDA and Meta kernels).
void check_ladder_input(const char *name, const at::Tensor &x);

// Registers Kernel<I> as the implementation of rung I's op, for every rung.
template <template <size_t> class Kernel, size_t... I>
void register_ladder(torch::Library &m, std::index_sequence<I...>) {
  (m.impl(kLadderOps[I].name, &Kernel<I>::run), ...);
}
template <template <size_t> class Kernel>
void register_ladder(torch::Library &m) {
  register_ladder<Kernel>(m, std::make_index_sequence<kLadderCount>{});
}

}  // namespace redux_shim
