// The binding of the exported competition submission (python -m leaderboard
// export): custom_kernel((data, output)) is one call of submission_sum. Not part
// of redux._C; the export carries it inline after the full family's sources
// and csrc/torch/stream_buffers_cuda.cpp, so it runs exactly the extension's
// kernel with the extension's per-stream buffers (stream_buffers.h): the counter
// words stay zeroed per stream (no memset per call), the partials live in
// the stream's workspace (no allocation per call), and a graph capture gets
// its own, like the extension's own contest entry (csrc/torch/competition.cpp).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include "binding_args.h"

#include "families.h"
#include "stream_buffers.h"

// The sum of x into out (one float32 element on x's device), returned as a
// 0-dim view of out. (Not view({}): braces pick view(ScalarType).)
torch::Tensor submission_sum(torch::Tensor x, torch::Tensor out) {
  check_submission_args(x, out);
  const c10::cuda::CUDAGuard guard(x.device());
  if (x.numel() == 0) return out.zero_().view(c10::IntArrayRef{});
  if (!x.is_contiguous()) x = x.contiguous();
  const redux_shape shape{1, x.numel(), 1};
  cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  const redux_shim::StreamBuffers buffers = redux_shim::stream_buffers(x.get_device(), stream);
  const size_t ws_bytes = redux::chunks_workspace_bytes(shape, REDUX_F32, REDUX_F32, REDUX_FULL,
                                                        buffers.counters ? buffers.counters_len : 0);
  torch::Tensor held;
  void *ws = redux_shim::call_workspace(buffers, ws_bytes, x.device(), &held);
  const redux_status st = redux::launch_chunks(REDUX_SUM_OF_VALUES, x.data_ptr(), out.data_ptr(), ws, ws_bytes,
                                               buffers.counters, buffers.counters_len, shape, REDUX_F32, REDUX_F32,
                                               0, stream, REDUX_FULL);
  TORCH_CHECK(st == REDUX_OK, "custom_kernel: redux's launch failed: ", redux_status_string(st));
  return out.view(c10::IntArrayRef{});
}
