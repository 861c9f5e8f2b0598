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
// works too. Forward mode: the output's tangent is the same sum of the
// input's tangent.
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <memory>
#include <string>
#include <vector>

#include "autograd_node.h"
#include "plan.h"

namespace redux_shim {
namespace {

using torch::autograd::variable_list;

using SumGridFn = at::Tensor(const at::Tensor &, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>,
                             int64_t);

// The backward of a sum, a graph node written as torch's generated ones are
// (not a torch::autograd::Function: functorch's transforms, torch.func.grad,
// vjp and jacrev, refuse C++ autograd Functions).
struct SumBackward final : torch::autograd::Node {
  std::vector<int64_t> sizes;  // the input's
  std::vector<int64_t> dims;   // the reduced dims, ascending
  bool keepdim = false;
  at::ScalarType dtype = at::kFloat;  // the input's

  variable_list apply(variable_list &&grads) override {
    at::Tensor grad = grads[0];
    if (!grad.defined()) return {at::Tensor()};
    if (!keepdim)
      for (int64_t d : dims) grad = grad.unsqueeze(d);
    grad = grad.expand(sizes);
    return {grad.scalar_type() == dtype ? grad : grad.to(dtype)};
  }
  std::string name() const override { return "redux::SumBackward"; }
};

// Reverse mode: a SumBackward node when self requires grad (none in the
// common inference case). Forward mode: a sum is linear, so the output's
// tangent is the same op on self's tangent (through the dispatcher, so
// nested transforms see it). `call(x)` is the op on x, dispatched from the
// current key set.
template <class Call>
at::Tensor sum_with_grad(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, Call call) {
  if (self.unsafeGetTensorImpl()->autograd_meta() == nullptr) {  // no grad, no tangent: the common case
    at::AutoDispatchBelowADInplaceOrView below;
    return call(self);
  }
  at::Tensor out;
  if (!at::GradMode::is_enabled() || !self.requires_grad()) {
    at::AutoDispatchBelowADInplaceOrView below;
    out = call(self);
  } else {
    auto node = make_node<SumBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(self));
    node->sizes = self.sizes().vec();
    node->dims = reduced_dims("redux.sum", self, dim);
    node->keepdim = keepdim;
    node->dtype = self.scalar_type();
    {
      at::AutoDispatchBelowADInplaceOrView below;
      out = call(self);
    }
    // An integer `dtype` gives an output that carries no gradient.
    if (torch::autograd::isDifferentiableType(out.scalar_type())) torch::autograd::set_history(out, node);
  }
  if (torch::autograd::isFwGradDefined(self) && torch::autograd::isDifferentiableType(out.scalar_type()))
    out._set_fw_grad(call(self._fw_grad(/*level=*/0)), /*level=*/0, /*is_inplace_op=*/false);
  return out;
}

at::Tensor sum_autograd(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype) {
  return sum_with_grad(self, dim, keepdim, [&](const at::Tensor &x) { return sum_op().call(x, dim, keepdim, dtype); });
}

at::Tensor sum_grid_autograd(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                             std::optional<at::ScalarType> dtype, int64_t grid) {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_grid", "").typed<SumGridFn>();
  return sum_with_grad(self, dim, keepdim,
                       [&](const at::Tensor &x) { return op.call(x, dim, keepdim, dtype, grid); });
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, Autograd, m) {
  m.impl("sum", &redux_shim::sum_autograd);
  m.impl("_sum_grid", &redux_shim::sum_grid_autograd);
}
