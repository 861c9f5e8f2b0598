// The binding of an exported ladder rung (python -m leaderboard export --op
// NAME): custom_kernel((data, output)) is one call of submission_sum, which runs
// rung REDUX_EXPORT_RUNG (defined by the export before this file) through
// the C API, with a workspace from torch's caching allocator, as the
// extension's rung ops do (csrc/torch/ladder_cuda.cpp).
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include "binding_args.h"

#include "redux/redux.h"

torch::Tensor submission_sum(torch::Tensor x, torch::Tensor out) {
  check_submission_args(x, out);
  const c10::cuda::CUDAGuard guard(x.device());
  if (x.numel() == 0) return out.zero_().view(c10::IntArrayRef{});
  if (!x.is_contiguous() || reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 != 0) x = x.clone();
  const size_t ws_bytes = redux_cuda_ladder_workspace_bytes(REDUX_EXPORT_RUNG, x.numel());
  torch::Tensor ws = torch::empty({(int64_t)ws_bytes}, x.options().dtype(torch::kUInt8));
  const redux_status st = redux_cuda_ladder_sum(REDUX_EXPORT_RUNG, x.data_ptr<float>(), out.data_ptr<float>(),
                                                x.numel(), ws.data_ptr(), ws_bytes, 0,
                                                at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(st == REDUX_OK, "custom_kernel: redux's launch failed: ", redux_status_string(st));
  return out.view(c10::IntArrayRef{});
}
