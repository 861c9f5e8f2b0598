// redux::_exp_rows (exp_rows.cpp, exp_rows_cuda.cpp): softmax, log_softmax
// or logsumexp along the last dim in one kernel per backend (redux.h's
// exponential sums of rows), called by the composites of exp_sums.cpp;
// redux::_exp_rows_backward: the first two's backward (the model switch's).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "redux/redux.h"

namespace redux_shim {

constexpr const char *kExpRowsOp = "redux._exp_rows";
// The longest row the composites give a row kernel (redux::_exp_rows,
// redux::_moment_rows): a row is one block's (CUDA) or one thread's (CPU)
// work, so longer ones go through redux::sum's trees. The choice depends on the shape alone, so the bits
// do too. Python reads it through redux._C.exp_rows_max_n().
constexpr int64_t kExpRowsMaxN = 1 << 16;

// True where x's `reduced` dims are its last one and a row kernel computes
// the op: a dtype it reads (float32, float16, bfloat16), rows of up to
// kExpRowsMaxN, a device it runs on (the CPU; CUDA and meta tensors too
// when on_cuda), and no gradient recorded through the call (a call below
// autograd, as the switch's, records none).
bool takes_row_kernel(const at::Tensor &x, const std::vector<int64_t> &reduced, bool on_cuda);

// The checked arguments of a call: the rows, their length and the kernels' dtype.
struct ExpRows {
  at::Tensor input;  // contiguous
  int64_t rows, n;
  redux_dtype dtype;
  redux_exp_op op;
};
ExpRows exp_rows_args(const at::Tensor &x, int64_t op);
// The result: x's shape (softmax, log_softmax) or less its last dim (logsumexp).
at::Tensor exp_rows_result(const ExpRows &a, const at::Tensor &x);

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
