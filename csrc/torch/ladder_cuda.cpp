// CUDA registrations of the ladder rungs and the read probe.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "ladder.h"
#include "plan.h"

namespace redux_shim {
namespace {

template <int I>
at::Tensor ladder_cuda(const at::Tensor &x) {
  const LadderOp &op = kLadderOps[I];
  TORCH_CHECK(x.dim() == 1 && x.scalar_type() == at::kFloat, "redux.", op.name,
              ": argument 'x' must be a 1-D float32 tensor (this ladder rung handles nothing else; "
              "torch.ops.redux.sum does), got ", x.dim(), "-D ", x.scalar_type());
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

at::Tensor read_probe_cuda(const at::Tensor &x, bool evict_first) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.is_contiguous() && x.numel() >= 4,
              "redux._read_probe: argument 'x' must be a contiguous float32 tensor of >= 4 elements");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16 == 0,
              "redux._read_probe: argument 'x' must start at a 16-byte aligned address");
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor sink = at::empty({redux_cuda_read_probe_blocks()}, x.options());
  check_status("redux._read_probe", redux_cuda_read_probe(x.const_data_ptr<float>(), x.numel(),
                                                          sink.mutable_data_ptr<float>(), evict_first ? 1 : 0,
                                                          at::cuda::getCurrentCUDAStream().stream()));
  return sink;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  using namespace redux_shim;
  static_assert(std::size(kLadderOps) == 8, "register every rung below");
  m.impl(kLadderOps[0].name, &ladder_cuda<0>);
  m.impl(kLadderOps[1].name, &ladder_cuda<1>);
  m.impl(kLadderOps[2].name, &ladder_cuda<2>);
  m.impl(kLadderOps[3].name, &ladder_cuda<3>);
  m.impl(kLadderOps[4].name, &ladder_cuda<4>);
  m.impl(kLadderOps[5].name, &ladder_cuda<5>);
  m.impl(kLadderOps[6].name, &ladder_cuda<6>);
  m.impl(kLadderOps[7].name, &ladder_cuda<7>);
  m.impl("_read_probe", &read_probe_cuda);
}
