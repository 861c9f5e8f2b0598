// Sums of inputs that are not dense (expanded, overlapping, sliced with a
// step): the kernels read dense memory, so the input is copied in pieces
// of bounded size into a dense buffer, never whole. Index arithmetic and
// copies only: the backend's kernels add.
#pragma once

#include <ATen/ATen.h>

#include "plan.h"
#include "sharded.h"

namespace redux_shim {

// A backend's entries the pieces are summed with.
struct PieceBackend {
  ShardBackend tree;
  // The backend's redux::_sum_grid on a dense tensor.
  at::Tensor (*sum)(const at::Tensor &, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>, int64_t);
  // The backend's _sum_unit_partials and _sum_from_partials.
  at::Tensor (*unit_partials)(const at::Tensor &, at::IntArrayRef, int64_t, int64_t);
  at::Tensor (*from_partials)(const at::Tensor &, at::IntArrayRef);
};

// Bytes of one piece: REDUX_PIECE_BYTES if set (tests make pieces small),
// else 32 MiB.
int64_t piece_bytes();

// Writes the sum of plan.input (plan.pieces) into `result`. A problem of
// several units is summed unit range by unit range through the sharded
// sums' partials: the bits of the dense input's sum. A problem of one unit
// is summed a block of whole slices at a time, each block as its own
// problem: for rows (batch-invariant) again the dense input's bits.
// Extra memory: one piece (at least one unit of n of one slice), the
// partials of the slices in flight, and their outputs.
// grid: as _sum_grid's, for the blocks of one-unit problems.
void sum_in_pieces(const SumPlan &plan, at::Tensor &result, const PieceBackend &backend, int64_t grid);

}  // namespace redux_shim
