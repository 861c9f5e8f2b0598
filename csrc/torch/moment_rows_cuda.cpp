// redux::_moment_rows, redux::_sum_squares_rows and _sum_squares_each on
// CUDA: one C API call on the current stream (_sum_squares_each: one per
// dtype of its list).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "moment_rows.h"
#include "plan.h"
#include "row_kernels.h"

namespace redux_shim {
namespace {

void run_cuda(const char *op, const MomentRows &a, double divisor, bool root) {
  if (a.rows == 0) return;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(a.input.device().index()).stream();
  const bool centered = a.mean.defined();
  if (centered && cut_into_pieces(a.n)) {  // the pieces' fp64 moments, then each row's combined
    const at::Tensor pieces_m2 = row_pieces_buffer(a.input, a.rows, a.n, 1);
    const at::Tensor pieces_mean = row_pieces_buffer(a.input, a.rows, a.n, 1);
    double *pm2 = pieces_m2.mutable_data_ptr<double>(), *pmean = pieces_mean.mutable_data_ptr<double>();
    check_status(op, redux_cuda_moment_row_pieces(a.input.const_data_ptr(), pm2, pmean, a.rows, a.n, a.dtype, stream));
    check_status(op, redux_cuda_moment_rows_combine(pm2, pmean, a.m2.mutable_data_ptr(), a.mean.mutable_data_ptr(),
                                                    a.rows, a.n, a.out, divisor, root, stream));
    return;
  }
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
  TORCH_CHECK(!xs.empty() && xs[0].defined(), kSumSquaresEachOp, ": argument 'xs[0]' is an undefined tensor");
  const c10::cuda::CUDAGuard guard(xs[0].device());
  std::vector<MomentRows> rows;
  rows.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    TORCH_CHECK(!xs[i].defined() || xs[i].device() == xs[0].device(), kSumSquaresEachOp, ": argument 'xs[", i,
                "]' is on ", xs[i].device(), " where xs[0] is on ", xs[0].device());
    rows.push_back(sum_squares_each_args(xs[i], i));
  }
  // One C API call per dtype: each launches once per width.
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(xs[0].device().index()).stream();
  std::vector<const void *> in;
  std::vector<int64_t> n;
  std::vector<void *> out;
  for (const at::ScalarType dtype : kRowKernelDtypes) {
    const redux_dtype t = *to_redux(dtype);
    in.clear();
    n.clear();
    out.clear();
    for (const MomentRows &a : rows) {
      if (a.dtype != t) continue;
      in.push_back(a.input.const_data_ptr());
      n.push_back(a.n);
      out.push_back(a.m2.mutable_data_ptr());
    }
    if (!in.empty())
      check_status(kSumSquaresEachOp, redux_cuda_sum_squares_each(in.data(), n.data(), out.data(),
                                                                  (int64_t)in.size(), t, divisor, root, stream));
  }
  std::vector<at::Tensor> results;
  results.reserve(rows.size());
  for (const MomentRows &a : rows) results.push_back(a.m2);
  return results;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_moment_rows", &redux_shim::moment_rows_cuda);
  m.impl("_sum_squares_rows", &redux_shim::sum_squares_rows_cuda);
  m.impl("_sum_squares_each", &redux_shim::sum_squares_each_cuda);
}
