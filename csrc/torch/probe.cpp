// The read-bandwidth probe on the CPU: a clear error (it measures a GPU).
#include <torch/library.h>

namespace redux_shim {
namespace {

at::Tensor read_probe_cpu(const at::Tensor &x, bool /*evict_first*/, c10::string_view /*pattern*/) {
  TORCH_CHECK(false, "redux._read_probe: argument 'x' must be a CUDA tensor, got ", x.device());
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) { m.impl("_read_probe", &redux_shim::read_probe_cpu); }
