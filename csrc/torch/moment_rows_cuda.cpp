// redux::_moment_rows and redux::_sum_squares_rows on CUDA: one C API call
// on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <tuple>

#include "moment_rows.h"
#include "plan.h"

namespace redux_shim {
namespace {

void run_cuda(const char *op, const MomentRows &a, double divisor, bool root) {
  if (a.rows == 0) return;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.input.device().index()).stream();
  const bool centered = a.mean.defined();
  check_status(op, redux_cuda_moment_rows(a.input.const_data_ptr(), a.m2.mutable_data_ptr(),
                                          centered ? a.mean.mutable_data_ptr() : nullptr, a.rows, a.n, a.dtype, a.out,
                                          divisor, centered, root, stream));
}

std::tuple<at::Tensor, at::Tensor> moment_rows_cuda(const at::Tensor &x, double divisor, bool root,
                                                    std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(x.device());
  const MomentRows a = moment_rows_args(kMomentRowsOp, x, dtype, true);
  run_cuda(kMomentRowsOp, a, divisor, root);
  return {a.m2, a.mean};
}

at::Tensor sum_squares_rows_cuda(const at::Tensor &x, double divisor, bool root, std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(x.device());
  const MomentRows a = moment_rows_args(kSumSquaresRowsOp, x, dtype, false);
  run_cuda(kSumSquaresRowsOp, a, divisor, root);
  return a.m2;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_moment_rows", &redux_shim::moment_rows_cuda);
  m.impl("_sum_squares_rows", &redux_shim::sum_squares_rows_cuda);
}
