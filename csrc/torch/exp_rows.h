// redux::_exp_rows (exp_rows.cpp, exp_rows_cuda.cpp): softmax, log_softmax
// or logsumexp along the last dim in one kernel per backend (redux.h's
// exponential sums of rows), called by the composites of exp_sums.cpp;
// redux::_exp_rows_apply: the first two from rows' given parts (long rows);
// redux::_exp_rows_backward: the first two's backward (the model switch's).
#pragma once

#include <ATen/ATen.h>

#include "redux/redux.h"
#include "row_kernels.h"

namespace redux_shim {

constexpr const char *kExpRowsOp = "redux._exp_rows";
// The checked arguments of a call: the rows, their length and the kernels' dtype.
struct ExpRows {
  at::Tensor input;  // contiguous
  int64_t rows, n;
  redux_dtype dtype;
  redux_exp_op op;
};
// The checks name `name`, the op called.
ExpRows exp_rows_args(const at::Tensor &x, int64_t op, const char *name = kExpRowsOp);
// The result: x's shape (softmax, log_softmax), less its last dim (logsumexp), or that dim
// replaced by a row's fp64 maximum and sum of exponentials (parts).
at::Tensor exp_rows_result(const ExpRows &a, const at::Tensor &x);

constexpr const char *kExpRowsApplyOp = "redux._exp_rows_apply";
// redux::_exp_rows_apply's: softmax or log_softmax of x's rows from the fp64 [..., 2] parts
// (each row's maximum and sum of exponentials) given for them, on x's device.
struct ExpRowsApply {
  ExpRows rows;
  at::Tensor parts;  // contiguous
};
ExpRowsApply exp_rows_apply_args(const at::Tensor &x, const at::Tensor &parts, int64_t op);

constexpr const char *kExpRowsBackwardOp = "redux._exp_rows_backward";
// The backward's: grad and out of one shape and dtype (the rows: out's).
struct ExpRowsBackward {
  at::Tensor grad, out;  // contiguous
  int64_t rows, n;
  redux_dtype dtype;
  redux_exp_op op;
};
ExpRowsBackward exp_rows_backward_args(const at::Tensor &grad, const at::Tensor &out, int64_t op);

}  // namespace redux_shim
