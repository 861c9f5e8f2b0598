// Meta (fake tensor) kernels of redux::sum and redux::_sum_grid: the result's
// shape and dtype from the same plan code the real kernels use (plan.h), in
// symbolic sizes, so torch.compile and opcheck see exactly the real rules.
#include <torch/library.h>

#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

at::Tensor sum_meta(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  const SumSpec spec = sum_spec(kOp, self, dim, dtype);
  return at::empty_symint(result_shape<c10::SymInt>(self.sym_sizes(), spec.reduced, keepdim),
                          self.options().dtype(spec.out_dtype));
}

at::Tensor sum_grid_meta(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<at::ScalarType> dtype, int64_t grid) {
  TORCH_CHECK(grid >= 0, kOp, ": argument 'grid' must be >= 0, got ", grid);
  return sum_meta(self, dim, keepdim, dtype);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("sum", &redux_shim::sum_meta);
  m.impl("_sum_grid", &redux_shim::sum_grid_meta);
}
