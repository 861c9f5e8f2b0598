// redux::_exp_rows, _exp_rows_apply and _exp_rows_backward on CUDA: one C API call on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "exp_rows.h"
#include "plan.h"

namespace redux_shim {
namespace {

// Rows cut into pieces (cut_into_pieces): the pieces' parts, each row's combined (into y for
// logsumexp and parts, else into the rows' parts, then applied).
void exp_rows_pieces_cuda(const ExpRows &a, at::Tensor &y, cudaStream_t stream) {
  const at::Tensor pieces = row_pieces_buffer(a.input, a.rows, a.n, 2);
  double *parts = pieces.mutable_data_ptr<double>();
  check_status(kExpRowsOp, redux_cuda_exp_row_pieces(a.input.const_data_ptr(), parts, a.rows, a.n, a.dtype, stream));
  const bool reduces = a.op == REDUX_EXP_LOGSUMEXP || a.op == REDUX_EXP_PARTS;
  const at::Tensor rows_parts = reduces ? y : at::empty({a.rows, 2}, pieces.options());
  check_status(kExpRowsOp, redux_cuda_exp_rows_combine(reduces ? a.op : REDUX_EXP_PARTS, parts,
                                                       rows_parts.mutable_data_ptr(), a.rows, a.n, a.dtype, stream));
  if (!reduces)
    check_status(kExpRowsOp, redux_cuda_exp_rows_apply(a.op, a.input.const_data_ptr(), rows_parts.const_data_ptr<double>(),
                                                       y.mutable_data_ptr(), a.rows, a.n, a.dtype, stream));
}

at::Tensor exp_rows_cuda(const at::Tensor &x, int64_t op) {
  const c10::cuda::CUDAGuard guard(x.device());
  const ExpRows a = exp_rows_args(x, op);
  at::Tensor y = exp_rows_result(a, x);
  if (a.rows == 0) return y;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
  if (cut_into_pieces(a.n)) {
    exp_rows_pieces_cuda(a, y, stream);
    return y;
  }
  check_status(kExpRowsOp, redux_cuda_exp_rows(a.op, a.input.const_data_ptr(), y.mutable_data_ptr(), a.rows, a.n,
                                               a.dtype, stream));
  return y;
}

at::Tensor exp_rows_apply_cuda(const at::Tensor &x, const at::Tensor &parts, int64_t op) {
  const c10::cuda::CUDAGuard guard(x.device());
  const ExpRowsApply a = exp_rows_apply_args(x, parts, op);
  at::Tensor y = at::empty(x.sizes(), x.options());
  if (a.rows.rows == 0) return y;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
  check_status(kExpRowsApplyOp,
               redux_cuda_exp_rows_apply(a.rows.op, a.rows.input.const_data_ptr(), a.parts.const_data_ptr<double>(),
                                         y.mutable_data_ptr(), a.rows.rows, a.rows.n, a.rows.dtype, stream));
  return y;
}

at::Tensor exp_rows_backward_cuda(const at::Tensor &grad, const at::Tensor &out, int64_t op) {
  const c10::cuda::CUDAGuard guard(out.device());
  const ExpRowsBackward a = exp_rows_backward_args(grad, out, op);
  at::Tensor dx = at::empty(out.sizes(), out.options());
  if (a.rows == 0) return dx;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(out.device().index()).stream();
  check_status(kExpRowsBackwardOp, redux_cuda_exp_rows_backward(a.op, a.grad.const_data_ptr(), a.out.const_data_ptr(),
                                                                dx.mutable_data_ptr(), a.rows, a.n, a.dtype, stream));
  return dx;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_exp_rows", &redux_shim::exp_rows_cuda);
  m.impl("_exp_rows_apply", &redux_shim::exp_rows_apply_cuda);
  m.impl("_exp_rows_backward", &redux_shim::exp_rows_backward_cuda);
}
