// redux::_centered_cols and redux::_exp_cols on CUDA: one C API call each
// (two launches, three) on the current stream, the chunk sums (and the
// columns' factors) in buffers of the caching allocator.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "centered_cols.h"
#include "plan.h"

namespace redux_shim {
namespace {

at::Tensor centered_cols_cuda(const at::Tensor &x, const at::Tensor &center, int64_t op, double divisor, bool root) {
  const CenteredCols a = centered_cols_args(x, center, op);  // first: a CPU 'x' is named, not the guard's
  const c10::cuda::CUDAGuard guard(x.device());
  const redux_shape s = a.shape;
  const at::Tensor partials =
      at::empty({s.outer * redux_centered_cols_chunks(s, a.dtype) * s.inner}, x.options().dtype(at::kDouble));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
  check_status(kCenteredColsOp,
               redux_cuda_centered_cols((redux_centered)a.op, a.input.const_data_ptr(), a.center.const_data_ptr<double>(),
                                        partials.mutable_data_ptr<double>(), a.result.mutable_data_ptr(), s, a.dtype,
                                        divisor, root, stream));
  return a.result;
}

at::Tensor exp_cols_cuda(const at::Tensor &x, const at::Tensor &center, int64_t op) {
  const CenteredCols a = exp_cols_args(x, center, op);
  const c10::cuda::CUDAGuard guard(x.device());
  const redux_shape s = a.shape;
  const at::TensorOptions wide = x.options().dtype(at::kDouble);
  const at::Tensor partials = at::empty({s.outer * redux_centered_cols_chunks(s, a.dtype) * s.inner}, wide);
  const at::Tensor by = at::empty({s.outer * s.inner}, wide);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
  check_status(kExpColsOp, redux_cuda_exp_cols((redux_exp_op)a.op, a.input.const_data_ptr(),
                                               a.center.const_data_ptr<double>(), partials.mutable_data_ptr<double>(),
                                               by.mutable_data_ptr<double>(), a.result.mutable_data_ptr(), s, a.dtype,
                                               stream));
  return a.result;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_centered_cols", &redux_shim::centered_cols_cuda);
  m.impl("_exp_cols", &redux_shim::exp_cols_cuda);
}
