// redux::_pow_each: each element of a float32 or float64 tensor raised to a
// real exponent, with the same bits at every place in the buffer and any
// thread count (vector_norm's |x|^p and root for p other than 0, 1, 2 and
// +-inf). CPU: redux_cpu_pow_each over ranges fanned out to threads. CUDA:
// torch's pow, whose kernel gives every element the same code. Autograd in
// C++ below (torch's formula, p x^(p-1), on this op, so double backward and
// forward mode stay on it).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <atomic>
#include <limits>
#include <string>

#include "autograd_node.h"
#include "plan.h"
#include "powers.h"
#include "row_kernels.h"

namespace redux_shim {

const c10::TypedOperatorHandle<PowEachFn> &pow_each_op() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::_pow_each", "").typed<PowEachFn>();
  return handle;
}

at::Tensor power_at_zero(const at::Tensor &x, double exponent) {
  if (!gradient_recorded(x)) return pow_each_op().call(x, exponent);  // the same values: 0^p is 0 or inf
  const at::Tensor zero = x.eq(0);
  const at::Tensor safe = at::where(zero, at::ones_like(x), x);
  const at::Tensor power = pow_each_op().call(safe, exponent);
  return at::where(zero, at::full_like(x, exponent > 0 ? 0.0 : std::numeric_limits<double>::infinity()), power);
}

namespace {

constexpr const char *kPowEach = "redux._pow_each";

void check_self(const at::Tensor &self) {
  TORCH_CHECK(self.defined(), kPowEach, ": argument 'self' is an undefined tensor");
  TORCH_CHECK(self.scalar_type() == at::kFloat || self.scalar_type() == at::kDouble, kPowEach,
              ": argument 'self' has dtype ", self.scalar_type(), "; expected float32 or float64");
}

at::Tensor pow_each_cpu(const at::Tensor &self, double exponent) {
  check_self(self);
  const at::Tensor x = self.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  const redux_dtype t = *to_redux(x.scalar_type());
  const void *in = x.const_data_ptr();
  void *out = y.mutable_data_ptr();
  std::atomic<int> failed{REDUX_OK};
  at::parallel_for(0, x.numel(), kCpuPieceElements, [&](int64_t b, int64_t e) {
    const redux_status st = redux_cpu_pow_each(in, out, exponent, b, e, t);
    if (st != REDUX_OK) failed.store(st);
  });
  check_status(kPowEach, (redux_status)failed.load());
  return y;
}

at::Tensor pow_each_cuda(const at::Tensor &self, double exponent) {
  check_self(self);
  return at::pow(self.contiguous(), exponent);
}

at::Tensor pow_each_meta(const at::Tensor &self, double exponent) {
  check_self(self);
  return at::empty_symint(self.sym_sizes(), self.options());
}

using torch::autograd::variable_list;

// d/dx x^p = p x^(p-1) (0 for p = 0), through the op itself.
at::Tensor slope(const at::Tensor &x, double exponent) {
  if (exponent == 0) return at::zeros_like(x);
  return pow_each_op().call(x, exponent - 1).mul(exponent);
}

// The input is saved as torch's nodes save theirs (unpacked with its graph,
// so double backward reaches it; its version checked).
struct PowEachBackward final : torch::autograd::Node {
  torch::autograd::SavedVariable self;
  double exponent = 1;

  variable_list apply(variable_list &&grads) override {
    const at::Tensor &grad = grads[0];
    if (!grad.defined()) return {at::Tensor()};
    return {grad.mul(slope(self.unpack(), exponent))};
  }
  void release_variables() override { self.reset_data(); }
  std::string name() const override { return "redux::PowEachBackward"; }
};

at::Tensor pow_each_autograd(const at::Tensor &self, double exponent) {
  auto call = [&](const at::Tensor &x) {
    at::AutoDispatchBelowADInplaceOrView below;
    return pow_each_op().call(x, exponent);
  };
  if (self.unsafeGetTensorImpl()->autograd_meta() == nullptr) return call(self);
  at::Tensor out = call(self);
  if (at::GradMode::is_enabled() && self.requires_grad()) {
    auto node = make_node<PowEachBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(self));
    node->self = torch::autograd::SavedVariable(self, /*is_output=*/false);
    node->exponent = exponent;
    torch::autograd::set_history(out, node);
  }
  if (torch::autograd::isFwGradDefined(self)) {
    const at::Tensor t = self._fw_grad(/*level=*/0);
    out._set_fw_grad(t.mul(slope(self._fw_primal(/*level=*/0), exponent)), /*level=*/0, /*is_inplace_op=*/false);
  }
  return out;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) { m.impl("_pow_each", &redux_shim::pow_each_cpu); }
TORCH_LIBRARY_IMPL(redux, CUDA, m) { m.impl("_pow_each", &redux_shim::pow_each_cuda); }
TORCH_LIBRARY_IMPL(redux, Meta, m) { m.impl("_pow_each", &redux_shim::pow_each_meta); }
TORCH_LIBRARY_IMPL(redux, Autograd, m) { m.impl("_pow_each", &redux_shim::pow_each_autograd); }
