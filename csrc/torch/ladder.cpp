// CPU and Meta registrations of the CUDA-only ladder rungs: on the CPU a
// clear error instead of the dispatcher's "could not run" message; on Meta
// (fake tensors, torch.compile) the same argument check and a 0-dim result.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "ladder.h"

namespace redux_shim {

// The one argument check of every rung (CUDA and Meta).
void check_ladder_input(const char *name, const at::Tensor &x) {
  TORCH_CHECK(x.dim() == 1 && x.scalar_type() == at::kFloat, "redux.", name,
              ": argument 'x' must be a 1-D float32 tensor (this ladder rung handles nothing else; "
              "torch.ops.redux.sum does), got ", x.dim(), "-D ", x.scalar_type());
}

namespace {

template <size_t I>
struct LadderCpu {
  static at::Tensor run(const at::Tensor &x) {
    TORCH_CHECK(false, "redux.", kLadderOps[I].name, ": argument 'x' is on ", x.device(),
                "; this ladder rung has only a CUDA kernel (1-D float32 CUDA tensors). "
                "Use torch.ops.redux.sum for CPU tensors.");
  }
};

template <size_t I>
struct LadderMeta {
  static at::Tensor run(const at::Tensor &x) {
    check_ladder_input(kLadderOps[I].name, x);
    return at::empty({}, x.options());
  }
};

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) { redux_shim::register_ladder<redux_shim::LadderCpu>(m); }
TORCH_LIBRARY_IMPL(redux, Meta, m) { redux_shim::register_ladder<redux_shim::LadderMeta>(m); }
