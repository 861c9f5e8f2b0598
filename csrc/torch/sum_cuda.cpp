// CUDA implementation of redux::sum and redux::_sum_of (a mapped reduction on
// the same trees): plan, the current stream's own ticket
// counters and workspace (stream_buffers.h; a workspace too large for it, or a
// graph capture, gets one from the caching allocator on the stream: never a
// global buffer, concurrent streams and captures each get their own), then
// one C API call.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <cmath>

#include "pieces.h"
#include "plan.h"
#include "stream_buffers.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

// One C API call for a dense plan, on the current stream of `device`.
void run_plan(const SumPlan &plan, const at::Device &device, const at::Tensor &kernel_out, int64_t grid) {
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index()).stream();
  StreamBuffers buffers;
  size_t ws_bytes = redux_cuda_sum_workspace_bytes(plan.family, plan.shape, plan.in_t, plan.out_t);
  if (ws_bytes > 0) {
    buffers = stream_buffers(device.index(), stream);
    // Beside this stream's counters (none in a graph capture): no counter room.
    if (buffers.counters)
      ws_bytes = redux_cuda_sum_workspace_bytes_beside(plan.family, plan.shape, plan.in_t, plan.out_t,
                                                       buffers.counters_len);
  }
  at::Tensor held;
  void *ws = call_workspace(buffers, ws_bytes, device, &held);
  check_status(kOp, redux_cuda_reduce(plan.reduction, plan.family, plan.input.const_data_ptr(),
                                      kernel_out.mutable_data_ptr(), ws, ws_bytes, buffers.counters,
                                      buffers.counters_len, plan.shape, plan.in_t, plan.out_t, (int)grid, stream));
}

at::Tensor sum_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, int64_t grid) {
  TORCH_CHECK(grid >= 0 && grid <= INT32_MAX, kOp, ": argument 'grid' must be in [0, 2^31), got ", grid);
  const c10::cuda::CUDAGuard guard(self.device());
  const SumPlan plan = plan_sum(kOp, self, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;
  if (plan.pieces) {
    sum_in_pieces(plan, result, PieceBackend{kCudaTree, sum_impl, unit_partials_cuda, from_partials_cuda}, grid);
    return result;
  }
  run_plan(plan, self.device(), kernel_out, grid);
  finish_outputs(plan, result, kernel_out);
  return result;
}

at::Tensor sum_of_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, c10::string_view of,
                       std::optional<at::ScalarType> dtype, int64_t grid) {
  TORCH_CHECK(grid >= 0 && grid <= INT32_MAX, kSumOfOp, ": argument 'grid' must be in [0, 2^31), got ", grid);
  const c10::cuda::CUDAGuard guard(self.device());
  const SumPlan plan = plan_sum_of(self, of, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;
  run_plan(plan, self.device(), kernel_out, grid);
  finish_outputs(plan, result, kernel_out);
  return result;
}

// As sum_of_cpu's list form: each tensor's own plan and kernel, its result
// written into its slot.
at::Tensor sum_of_each_cuda(at::TensorList xs, c10::string_view of, at::ScalarType dtype) {
  const std::vector<SumPlan> plans = plan_sum_of_each(xs, of, dtype);
  const c10::cuda::CUDAGuard guard(xs[0].device());
  at::Tensor out = at::empty({(int64_t)plans.size()}, xs[0].options().dtype(dtype));
  for (size_t i = 0; i < plans.size(); ++i) {
    at::Tensor slot = out.select(0, (int64_t)i);
    if (plans[i].trivial) slot.zero_();  // no elements: +0, as _sum_of's
    else run_plan(plans[i], xs[0].device(), slot, 0);
  }
  return out;
}

at::Tensor sum_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  return sum_impl(self, dim, keepdim, dtype, 0);
}

at::Tensor sum_grid_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, int64_t grid) {
  return sum_impl(self, dim, keepdim, dtype, grid);
}

at::Tensor one_pass_mean_cuda(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, int64_t grid) {
  TORCH_CHECK(grid >= 0 && grid <= INT32_MAX, "redux._one_pass_mean: argument 'grid' must be in [0, 2^31), got ",
              grid);
  const c10::cuda::CUDAGuard guard(self.device());
  const SumPlan plan = plan_one_pass_mean(self, dim, keepdim);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return self.numel() == 0 ? result.fill_(NAN) : result;  // 0 / 0, as torch.mean
  run_plan(plan, self.device(), kernel_out, grid);
  finish_outputs(plan, result, kernel_out);
  return result;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("sum", &redux_shim::sum_cuda);
  m.impl("_sum_grid", &redux_shim::sum_grid_cuda);
  m.impl("_sum_of", &redux_shim::sum_of_cuda);
  m.impl("_sum_of_each", &redux_shim::sum_of_each_cuda);
  m.impl("_one_pass_mean", &redux_shim::one_pass_mean_cuda);
}
