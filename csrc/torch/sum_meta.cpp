// Meta (fake tensor) kernels of redux::sum, redux::_sum_grid, redux::_sum_of and _sum_of_each: the result's
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

at::Tensor sum_of_meta(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, c10::string_view of,
                       std::optional<at::ScalarType> dtype, int64_t grid) {
  TORCH_CHECK(grid >= 0, kSumOfOp, ": argument 'grid' must be >= 0, got ", grid);
  const SumOfSpec s = sum_of_spec(self, of, dim, dtype);
  return at::empty_symint(result_shape<c10::SymInt>(self.sym_sizes(), s.spec.reduced, keepdim),
                          self.options().dtype(s.spec.out_dtype));
}

at::Tensor sum_of_each_meta(at::TensorList xs, c10::string_view of, at::ScalarType dtype) {
  check_sum_of_each(xs, of, dtype);
  return at::empty({(int64_t)xs.size()}, xs[0].options().dtype(dtype));
}

at::Tensor one_pass_mean_meta(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, int64_t grid) {
  TORCH_CHECK(grid >= 0, "redux._one_pass_mean: argument 'grid' must be >= 0, got ", grid);
  const SumSpec spec = one_pass_mean_spec(self, dim);
  return at::empty_symint(result_shape<c10::SymInt>(self.sym_sizes(), spec.reduced, keepdim),
                          self.options().dtype(spec.out_dtype));
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("sum", &redux_shim::sum_meta);
  m.impl("_sum_grid", &redux_shim::sum_grid_meta);
  m.impl("_sum_of", &redux_shim::sum_of_meta);
  m.impl("_sum_of_each", &redux_shim::sum_of_each_meta);
  m.impl("_one_pass_mean", &redux_shim::one_pass_mean_meta);
}
