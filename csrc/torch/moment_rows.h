// redux::_moment_rows, redux::_sum_squares_rows and _sum_squares_each (moment_rows.cpp,
// moment_rows_cuda.cpp): the variance (or standard deviation) and the mean,
// or the sum of squares over a divisor (or its root), along the last dim in
// one kernel per backend (redux.h's moments of rows), called by the
// composites of var.cpp and norms.cpp and by the model switch.
#pragma once

#include <ATen/ATen.h>

#include <optional>

#include "redux/redux.h"

namespace redux_shim {

constexpr const char *kMomentRowsOp = "redux._moment_rows";
constexpr const char *kSumSquaresRowsOp = "redux._sum_squares_rows";
constexpr const char *kSumSquaresEachOp = "redux._sum_squares_each";

// The checked arguments of a call: the rows, their length, the kernels'
// input and output dtypes, and the results (x's shape less its last dim;
// mean undefined where not centered).
struct MomentRows {
  at::Tensor input;  // contiguous
  int64_t rows, n;
  redux_dtype dtype, out;
  at::Tensor m2, mean;
};
MomentRows moment_rows_args(const char *op, const at::Tensor &x, std::optional<at::ScalarType> dtype, bool centered);

// The checked arguments of _sum_squares_each's xs[i]: one row of all its
// elements, the result 0-dim.
MomentRows sum_squares_each_args(const at::Tensor &x, size_t i);

}  // namespace redux_shim
