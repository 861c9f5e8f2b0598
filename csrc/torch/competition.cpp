// Redux's own answer to the competition (task.h): custom_kernel writes the
// sum straight into the preallocated output with redux's full-reduction
// kernel (CUDA) and returns it as a 0-dim view. Registered as the internal
// op redux::_competition_custom_kernel so the evaluator can call it.
#include <torch/library.h>

#include "../../task.h"
#include "plan.h"

#ifdef REDUX_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "stream_buffers.h"
#endif

// output viewed as shape []. (Not view({}): braces pick view(ScalarType).)
static at::Tensor as_scalar(const at::Tensor &output) { return output.view(c10::IntArrayRef{}); }

output_t custom_kernel(input_t data) {
  auto &[x, output] = data;
  TORCH_CHECK(x.dim() == 1 && x.scalar_type() == at::kFloat && x.is_contiguous(),
              "custom_kernel: argument 'data' must hold a contiguous 1-D float32 tensor");
  TORCH_CHECK(output.numel() == 1 && output.scalar_type() == at::kFloat && output.device() == x.device(),
              "custom_kernel: the output of 'data' must be a float32 tensor of one element on the input's device");
#ifdef REDUX_WITH_CUDA
  if (x.is_cuda() && x.numel() > 0) {
    const c10::cuda::CUDAGuard guard(x.device());
    const redux_shape shape{1, x.numel(), 1};
    cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    const redux_shim::StreamBuffers buffers = redux_shim::stream_buffers(x.get_device(), stream);
    const size_t ws_bytes = redux_cuda_sum_workspace_bytes_beside(REDUX_FULL, shape, REDUX_F32, REDUX_F32,
                                                                  buffers.counters ? buffers.counters_len : 0);
    at::Tensor held;
    void *ws = redux_shim::call_workspace(buffers, ws_bytes, x.device(), &held);
    redux_shim::check_status("custom_kernel",
                             redux_cuda_sum(REDUX_FULL, x.const_data_ptr(), output.mutable_data_ptr(), ws, ws_bytes,
                                            buffers.counters, buffers.counters_len, shape, REDUX_F32, REDUX_F32, 0,
                                            stream));
    return as_scalar(output);
  }
#endif
  // CPU (or empty) input: redux's CPU path, then into the output.
  as_scalar(output).copy_(redux_shim::sum_op().call(x, std::nullopt, false, std::nullopt));
  return as_scalar(output);
}

namespace {
at::Tensor competition_custom_kernel(const at::Tensor &data, const at::Tensor &output) {
  return custom_kernel({data, output});
}
}  // namespace

TORCH_LIBRARY_IMPL(redux, CompositeExplicitAutograd, m) {
  m.impl("_competition_custom_kernel", &competition_custom_kernel);
}
