// redux::_centered_cols and redux::_exp_cols (centered_cols.cpp,
// centered_cols_cuda.cpp): a [outer, n, inner] tensor's column sums about
// given centers in one call per backend (redux.h's column sums about a
// center): the variance (or standard deviation) or the logsumexp over a dim
// that is not the last, or the softmax or log_softmax along it about the
// maxima, for the composites of var.cpp and exp_sums.cpp.
#pragma once

#include <ATen/ATen.h>

#include "redux/redux.h"

namespace redux_shim {

constexpr const char *kCenteredColsOp = "redux._centered_cols";
constexpr const char *kExpColsOp = "redux._exp_cols";

// The checked arguments of a call: x contiguous, its [outer, n, inner], the
// kernels' dtype and the result ([outer, inner], x's dtype; for _exp_cols
// x's shape, and `op` a redux_exp_op).
struct CenteredCols {
  at::Tensor input, center;
  redux_shape shape;
  redux_dtype dtype;
  int op;
  at::Tensor result;
};
CenteredCols centered_cols_args(const at::Tensor &x, const at::Tensor &center, int64_t op);
CenteredCols exp_cols_args(const at::Tensor &x, const at::Tensor &center, int64_t op);

// redux::_centered_cols(x, center, op, divisor, root), called through the
// dispatcher (the composites: autograd, vmap and fake tensors apply).
at::Tensor centered_cols_op(const at::Tensor &x, const at::Tensor &center, redux_centered op, double divisor = 1.0,
                            bool root = false);
// redux::_exp_cols(x, center, op), the same way.
at::Tensor exp_cols_op(const at::Tensor &x, const at::Tensor &center, redux_exp_op op);

}  // namespace redux_shim
