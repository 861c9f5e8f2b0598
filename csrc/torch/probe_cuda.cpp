// The read-bandwidth probe as the internal op redux::_read_probe (schema in
// ops.cpp): a harness facility (include/redux/probe.h), not a sum.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "plan.h"
#include "redux/probe.h"

namespace redux_shim {
namespace {

at::Tensor read_probe_cuda(const at::Tensor &x, bool evict_first, c10::string_view pattern) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.is_contiguous() && x.numel() >= 4,
              "redux._read_probe: argument 'x' must be a contiguous float32 tensor of >= 4 elements");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16 == 0,
              "redux._read_probe: argument 'x' must start at a 16-byte aligned address");
  TORCH_CHECK(pattern == "grid-stride" || pattern == "pieces",
              "redux._read_probe: argument 'pattern' must be 'grid-stride' or 'pieces', got '", pattern, "'");
  const int p = pattern == "pieces" ? REDUX_PROBE_PIECES : REDUX_PROBE_GRID_STRIDE;
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor sink = at::empty({redux_cuda_read_probe_sink_len(x.numel(), p)}, x.options());
  check_status("redux._read_probe", redux_cuda_read_probe(x.const_data_ptr<float>(), x.numel(),
                                                          sink.mutable_data_ptr<float>(), evict_first ? 1 : 0, p,
                                                          at::cuda::getCurrentCUDAStream().stream()));
  return sink;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) { m.impl("_read_probe", &redux_shim::read_probe_cuda); }
