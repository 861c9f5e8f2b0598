// redux::_moment_rows, redux::_sum_squares_rows and _sum_squares_each on
// CUDA: one C API call (a tensor) on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

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

std::vector<at::Tensor> sum_squares_each_cuda(at::TensorList xs, double divisor, bool root) {
  std::vector<at::Tensor> out;
  out.reserve(xs.size());
  TORCH_CHECK(!xs.empty() && xs[0].defined(), kSumSquaresEachOp, ": argument 'xs[0]' is an undefined tensor");
  const c10::cuda::CUDAGuard guard(xs[0].device());
  for (size_t i = 0; i < xs.size(); ++i) {
    TORCH_CHECK(!xs[i].defined() || xs[i].device() == xs[0].device(), kSumSquaresEachOp, ": argument 'xs[", i,
                "]' is on ", xs[i].device(), " where xs[0] is on ", xs[0].device());
    const MomentRows a = sum_squares_each_args(xs[i], i);
    run_cuda(kSumSquaresEachOp, a, divisor, root);
    out.push_back(a.m2);
  }
  return out;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_moment_rows", &redux_shim::moment_rows_cuda);
  m.impl("_sum_squares_rows", &redux_shim::sum_squares_rows_cuda);
  m.impl("_sum_squares_each", &redux_shim::sum_squares_each_cuda);
}
