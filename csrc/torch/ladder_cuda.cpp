// CUDA registrations of the ladder rungs.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "ladder.h"
#include "plan.h"

namespace redux_shim {
namespace {

template <size_t I>
struct LadderCuda {
  static at::Tensor run(const at::Tensor &x) {
    const LadderOp &op = kLadderOps[I];
    check_ladder_input(op.name, x);
    const c10::cuda::CUDAGuard guard(x.device());
    at::Tensor in = x.contiguous();
    at::Tensor y = at::empty({}, x.options());
    if (in.numel() == 0) return y.zero_();
    const size_t ws_bytes = redux_cuda_ladder_workspace_bytes(op.rung, in.numel());
    at::Tensor ws = at::empty({(int64_t)ws_bytes}, x.options().dtype(at::kByte));
    if (op.rung == REDUX_RUNG_LAST_BLOCK && reinterpret_cast<uintptr_t>(in.const_data_ptr()) % 16 != 0)
      in = in.clone();  // this rung reads float4 only
    check_status(op.name, redux_cuda_ladder_sum(op.rung, in.const_data_ptr<float>(), y.mutable_data_ptr<float>(),
                                                in.numel(), ws.mutable_data_ptr(), ws_bytes, 0,
                                                at::cuda::getCurrentCUDAStream().stream()));
    return y;
  }
};

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) { redux_shim::register_ladder<redux_shim::LadderCuda>(m); }
