// redux::_nll_loss_forward: aten::nll_loss_forward's outputs (the loss and
// the total weight) for the model switch, whose Python entry has already
// given torch's argument errors (redux/switch.py). The picked
// log-probabilities, times the weights, in the mean's wide dtype (fp64 for
// float32); the loss terms negated (exact), -0 where a target is ignored
// (where, not a zero weight: an ignored inf would give nan); their sum and
// the total weight by redux::sum; 0 - sum (the sum starts from +0, so the
// loss is never -0 where torch's is +0); one division for "mean"; one
// rounding to x's dtype. CompositeImplicitAutograd on ATen ops and
// redux::sum: a traced call decomposes into the ops an eager call runs, so
// compiled code has the eager bits; one C++ call instead of a dozen Python
// ones.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include <tuple>

#include "plan.h"

namespace redux_shim {
namespace {

std::tuple<at::Tensor, at::Tensor> nll_loss_forward_impl(const at::Tensor &x, const at::Tensor &target,
                                                         const std::optional<at::Tensor> &weight, int64_t reduction,
                                                         c10::SymInt ignore_index) {
  const at::ScalarType wide = mean_sum_dtype(x.scalar_type());
  const at::Tensor valid = target.ne(c10::Scalar(ignore_index));
  const at::Tensor safe = at::where(valid, target, c10::Scalar(0));
  const at::Tensor picked = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1).to(wide);
  at::Tensor w;
  if (weight.has_value() && weight->defined())
    w = at::where(valid, weight->index({safe}).to(wide), c10::Scalar(0.0));
  const at::Tensor terms = at::where(valid, w.defined() ? picked.mul(w) : picked, c10::Scalar(-0.0));
  if (x.dim() == 1) {  // one sample: torch's total weight is its weight, whatever the reduction
    if (!w.defined()) w = valid.to(wide);
    const at::Tensor loss = reduction == at::Reduction::Mean ? terms.div(w.neg()) : terms.neg();
    return {loss.to(x.scalar_type()), w.to(x.scalar_type())};
  }
  if (reduction == at::Reduction::None) return {terms.neg().to(x.scalar_type()), at::zeros({}, x.options())};
  const at::Tensor total_weight = w.defined() ? sum_op().call(w, std::nullopt, false, std::nullopt)
                                              : sum_op().call(valid, std::nullopt, false, wide);
  at::Tensor out = at::rsub(sum_op().call(terms, std::nullopt, false, std::nullopt), c10::Scalar(0.0));
  if (reduction == at::Reduction::Mean) out = out.div(total_weight);
  return {out.to(x.scalar_type()), total_weight.to(x.scalar_type())};
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) {
  m.impl("_nll_loss_forward", &redux_shim::nll_loss_forward_impl);
}
