// redux::amax, redux::amin and redux::_extreme_abs on CUDA: one C API call on the current stream,
// its workspace (the segments' extremes, when there are any) from torch's
// caching allocator.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "extremes.h"

namespace redux_shim {
namespace {

at::Tensor extreme_cuda(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  const c10::cuda::CUDAGuard guard(self.device());
  ExtremeCall call = extreme_call(op, self, dim, keepdim);
  if (!call.run) return call.result;
  const size_t ws_bytes = redux_cuda_extreme_workspace_bytes(call.plan.shape, call.t);
  at::Tensor ws;
  if (ws_bytes > 0) ws = at::empty({(int64_t)ws_bytes}, self.options().dtype(at::kByte));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(self.device().index()).stream();
  check_status(extreme_name(op),
               redux_cuda_extreme(op, call.plan.input.const_data_ptr(), call.kernel_out.mutable_data_ptr(),
                                  ws_bytes > 0 ? ws.mutable_data_ptr() : nullptr, ws_bytes, call.plan.shape, call.t,
                                  0, stream));
  return extreme_result(call, self);
}

at::Tensor amax_cuda(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_cuda(REDUX_MAX, self, dim, keepdim);
}
at::Tensor amin_cuda(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_cuda(REDUX_MIN, self, dim, keepdim);
}
at::Tensor extreme_abs_cuda(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, bool largest) {
  return extreme_cuda(largest ? REDUX_MAX_ABS : REDUX_MIN_ABS, self, dim, keepdim);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("amax", &redux_shim::amax_cuda);
  m.impl("amin", &redux_shim::amin_cuda);
  m.impl("_extreme_abs", &redux_shim::extreme_abs_cuda);
}
