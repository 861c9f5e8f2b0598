// redux::mean: torch.mean on redux's sum. The sum runs in a wider dtype
// (fp64 for float32/float64 results, fp32 for float16/bfloat16) through
// redux::sum, so the same kernels and the same reduction tree: the mean's
// bits inherit the sum's guarantees. torch's div and cast finish it on the
// outputs (one rounding to the result dtype). CompositeImplicitAutograd:
// autograd, Meta and torch.compile come from redux::sum, div and to.
#include <torch/library.h>

#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.mean";

at::Tensor mean_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.defined(), kOp, ": argument 'self' is an undefined tensor");
  // torch.mean's dtype rule: the result is `dtype`, else self's dtype, and
  // must be floating point (complex is torch's, not redux's).
  const at::ScalarType out = dtype.value_or(self.scalar_type());
  const bool floating = to_redux(out).has_value() && at::isFloatingType(out);
  TORCH_CHECK(floating, kOp, ": argument '", dtype.has_value() ? "dtype" : "self", "' has dtype ",
              out, ", which is not supported (expected float32, float64, float16 or bfloat16; like torch.mean, "
              "the mean of integers needs a floating-point 'dtype')");
  const at::Tensor total = sum_op().call(self, dim, keepdim, mean_sum_dtype(out));
  c10::SymInt count = 1;
  for (int64_t d : reduced_dims(kOp, self, dim)) count = count * self.sym_size(d);
  // 0 elements: 0 / 0 = nan, as torch.mean gives.
  return total.div(c10::Scalar(count)).to(out);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) { m.impl("mean", &redux_shim::mean_impl); }
