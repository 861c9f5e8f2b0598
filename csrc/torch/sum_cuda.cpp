// CUDA implementation of redux::sum: plan, per-call workspace from the
// caching allocator on the current stream (never a global buffer: concurrent
// streams and graph captures each get their own), the stream's own ticket
// counters (tickets.h), then one C API call.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "plan.h"
#include "tickets.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

at::Tensor sum_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, int64_t grid) {
  TORCH_CHECK(grid >= 0 && grid <= INT32_MAX, kOp, ": argument 'grid' must be in [0, 2^31), got ", grid);
  const c10::cuda::CUDAGuard guard(self.device());
  const SumPlan plan = make_sum_plan(kOp, self, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;

  const size_t ws_bytes = redux_cuda_sum_workspace_bytes(plan.family, plan.shape, plan.in_t, plan.out_t);
  at::Tensor workspace;
  if (ws_bytes > 0)
    workspace = at::empty({(int64_t)ws_bytes}, plan.input.options().dtype(at::kByte));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(self.device().index()).stream();
  StreamCounters counters;
  if (redux_cuda_sum_counters(plan.family, plan.shape, plan.in_t, plan.out_t) > 0)
    counters = stream_counters(self.device().index(), stream);
  check_status(kOp, redux_cuda_sum(plan.family, plan.input.const_data_ptr(), kernel_out.mutable_data_ptr(),
                                   ws_bytes ? workspace.mutable_data_ptr() : nullptr, ws_bytes, counters.ptr,
                                   counters.len, plan.shape, plan.in_t, plan.out_t, (int)grid, stream));
  finish_outputs(plan, result, kernel_out);
  return result;
}

at::Tensor sum_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return sum_impl(self, dim, keepdim, dtype, 0);
}

at::Tensor sum_grid_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, int64_t grid) {
  return sum_impl(self, dim, keepdim, dtype, grid);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("sum", &redux_shim::sum_cuda);
  m.impl("_sum_grid", &redux_shim::sum_grid_cuda);
}
