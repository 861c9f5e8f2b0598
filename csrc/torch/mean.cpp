// redux::mean: torch.mean on redux's sum. The sum runs in a wider dtype
// (fp64 for float32/float64 results, fp32 for float16/bfloat16) through
// redux::sum, so the same kernels and the same reduction tree: the mean's
// bits inherit the sum's guarantees. torch's div and cast finish it on the
// outputs (one rounding to the result dtype; eager on CUDA with no gradient
// recorded, one div that writes the result dtype). Eager, a float32 or
// float64 mean into its own dtype with no gradient recorded is one kernel,
// redux::_one_pass_mean, with the same bits (the division in the tree's
// finish, as torch's div computes it on each device); traced, transformed
// and DTensor calls keep the composite. Composite-
// ImplicitAutograd: autograd, Meta and torch.compile come from those ops.
#include <ATen/ScalarOps.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/library.h>

#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.mean";

// A plain tensor outside any tracing, transform or subclass (fake tensors,
// DTensor, functionalization, dispatch modes, vmap, functorch's grad):
// there an out= op is fine (traced graphs must stay functional), and so is
// an op that only plain tensors have rules for (DTensor shards redux::sum).
bool plain_eager(const at::Tensor &t) {
  const c10::DispatchKeySet traced({c10::DispatchKey::Python, c10::DispatchKey::Functionalize,
                                    c10::DispatchKey::FuncTorchBatched, c10::DispatchKey::BatchedNestedTensor,
                                    c10::DispatchKey::FuncTorchGradWrapper});
  return !t.key_set().has_any(traced) && c10::impl::TorchDispatchModeTLS::stack_len() == 0;
}

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
  const at::ScalarType t = self.scalar_type();
  if ((t == at::kFloat || t == at::kDouble) && out == t && plain_eager(self) && !gradient_recorded(self)) {
    static const auto one_pass = c10::Dispatcher::singleton()
                                     .findSchemaOrThrow("redux::_one_pass_mean", "")
                                     .typed<at::Tensor(const at::Tensor &, at::OptionalIntArrayRef, bool, int64_t)>();
    return one_pass.call(self, dim, keepdim, 0);
  }
  const at::Tensor total = sum_op().call(self, dim, keepdim, mean_sum_dtype(out));
  c10::SymInt count = 1;
  for (int64_t d : reduced_dims(kOp, self, dim)) count = count * self.sym_size(d);
  // 0 elements: 0 / 0 = nan, as torch.mean gives.
  if (!total.is_cuda() || !plain_eager(total) || gradient_recorded(self) || count.is_symbolic())
    return total.div(c10::Scalar(count)).to(out);
  // Eager on CUDA, no gradient: one division kernel that writes the result
  // dtype, not a division and a cast, with the count as div.Scalar passes
  // it (a wrapped number): the same roundings, the quotient's, the cast's.
  at::Tensor result = at::empty_like(total, total.options().dtype(out));
  return at::div_out(result, total, at::native::wrapped_scalar_tensor(c10::Scalar(count.as_int_unchecked())));
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) { m.impl("mean", &redux_shim::mean_impl); }
