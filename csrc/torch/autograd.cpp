// Autograd for redux::sum and redux::_sum_grid, in C++.
//
// Why not torch.library.register_autograd (Python), the usual way for a custom op:
// measured on the H200, the Python autograd wrapper runs on every call and
// cost ~6 us of host time per call (12.7 us vs torch.sum's 6.9 us in a
// back-to-back loop), which the competition's timing (events around the
// Python call) charges in full. A C++ Autograd kernel keeps the eager path
// in C++. The gradient of a sum is the incoming gradient broadcast back to
// the input's shape (reduced dims re-inserted when keepdim=False), in the
// input's dtype; built from differentiable torch ops, so double backward
// works too.
#include <torch/autograd.h>
#include <torch/library.h>

#include <vector>

#include "plan.h"

namespace redux_shim {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

using SumGridFn = at::Tensor(const at::Tensor &, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>,
                             int64_t);

void save_for_backward(AutogradContext *ctx, const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim) {
  ctx->saved_data["sizes"] = self.sizes().vec();
  ctx->saved_data["dims"] = reduced_dims("redux.sum", self, dim);
  ctx->saved_data["keepdim"] = keepdim;
  ctx->saved_data["dtype"] = self.scalar_type();
}

at::Tensor broadcast_grad(AutogradContext *ctx, at::Tensor grad) {
  if (!ctx->saved_data["keepdim"].toBool())
    for (int64_t d : ctx->saved_data["dims"].toIntVector()) grad = grad.unsqueeze(d);  // ascending
  grad = grad.expand(ctx->saved_data["sizes"].toIntVector());
  const auto dtype = ctx->saved_data["dtype"].toScalarType();
  return grad.scalar_type() == dtype ? grad : grad.to(dtype);
}

class SumFunction : public torch::autograd::Function<SumFunction> {
 public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
    save_for_backward(ctx, self, dim, keepdim);
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("redux::sum", "").typed<SumFn>();
    return op.call(self, dim, keepdim, dtype);
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    return {broadcast_grad(ctx, grads[0]), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

class SumGridFunction : public torch::autograd::Function<SumGridFunction> {
 public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype, int64_t grid) {
    save_for_backward(ctx, self, dim, keepdim);
    at::AutoDispatchBelowADInplaceOrView below;
    static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_grid", "").typed<SumGridFn>();
    return op.call(self, dim, keepdim, dtype, grid);
  }
  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    return {broadcast_grad(ctx, grads[0]), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// No gradient wanted (the common inference case): skip building a node.
bool needs_grad(const at::Tensor &self) { return at::GradMode::is_enabled() && self.requires_grad(); }

at::Tensor sum_autograd(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  if (needs_grad(self)) return SumFunction::apply(self, dim, keepdim, dtype);
  at::AutoDispatchBelowADInplaceOrView below;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("redux::sum", "").typed<SumFn>();
  return op.call(self, dim, keepdim, dtype);
}

at::Tensor sum_grid_autograd(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                             std::optional<at::ScalarType> dtype, int64_t grid) {
  if (needs_grad(self)) return SumGridFunction::apply(self, dim, keepdim, dtype, grid);
  at::AutoDispatchBelowADInplaceOrView below;
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_grid", "").typed<SumGridFn>();
  return op.call(self, dim, keepdim, dtype, grid);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, Autograd, m) {
  m.impl("sum", &redux_shim::sum_autograd);
  m.impl("_sum_grid", &redux_shim::sum_grid_autograd);
}
