// redux::_centered_cols on CUDA: one C API call (two launches) on the
// current stream, its chunk sums in a buffer of the caching allocator.
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
               redux_cuda_centered_cols(a.op, a.input.const_data_ptr(), a.center.const_data_ptr<double>(),
                                        partials.mutable_data_ptr<double>(), a.result.mutable_data_ptr(), s, a.dtype,
                                        divisor, root, stream));
  return a.result;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) { m.impl("_centered_cols", &redux_shim::centered_cols_cuda); }
