// CPU registrations of the CUDA-only ops: a clear error instead of the
// dispatcher's "could not run" message.
#include <torch/library.h>

#include "ladder.h"

namespace redux_shim {
namespace {

template <int I>
at::Tensor ladder_cpu(const at::Tensor &x) {
  TORCH_CHECK(false, "redux.", kLadderOps[I].name, ": argument 'x' is on ", x.device(),
              "; this ladder rung has only a CUDA kernel (1-D float32 CUDA tensors). "
              "Use torch.ops.redux.sum for CPU tensors.");
}

at::Tensor read_probe_cpu(const at::Tensor &x, bool /*evict_first*/) {
  TORCH_CHECK(false, "redux._read_probe: argument 'x' must be a CUDA tensor, got ", x.device());
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  using namespace redux_shim;
  static_assert(std::size(kLadderOps) == 8, "register every rung below");
  m.impl(kLadderOps[0].name, &ladder_cpu<0>);
  m.impl(kLadderOps[1].name, &ladder_cpu<1>);
  m.impl(kLadderOps[2].name, &ladder_cpu<2>);
  m.impl(kLadderOps[3].name, &ladder_cpu<3>);
  m.impl(kLadderOps[4].name, &ladder_cpu<4>);
  m.impl(kLadderOps[5].name, &ladder_cpu<5>);
  m.impl(kLadderOps[6].name, &ladder_cpu<6>);
  m.impl(kLadderOps[7].name, &ladder_cpu<7>);
  m.impl("_read_probe", &read_probe_cpu);
}
