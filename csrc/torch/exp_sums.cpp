// redux::logsumexp, redux::softmax, redux::log_softmax: torch's signatures
// and semantics on redux's sums. Over trailing dims of a float32, float16
// or bfloat16 tensor where no gradient is being recorded: redux::_exp_rows
// (fp64 inside), one kernel, or for rows longer than kRowKernelMaxN
// (row_kernels.h) its pieces' parts combined by a second and for softmax and
// log_softmax applied by a third. logsumexp over other consecutive dims:
// the maxima by redux::amax, then redux::_centered_cols (the fp64 sums
// of exp(x - max), log and shift in the kernel); softmax and log_softmax
// along another dim: the maxima, then redux::_exp_cols.
// Otherwise the composite: the shift is redux::amax (exact, its bits the
// values'), detached: the functions do not depend on
// it, so neither do their gradients. exp(x - max) is formed in the mean's
// wide dtype (fp64 for float32/float64, fp32 for float16 and bfloat16) and
// summed by redux::sum in that dtype; one rounding to the result dtype.
// CompositeImplicitAutograd: autograd, Meta and torch.compile come from
// redux::sum, the kernels' ops and torch's elementwise ops.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DefaultDtype.h>
#include <torch/library.h>

#include <vector>

#include "centered_cols.h"
#include "exp_rows.h"
#include "extremes.h"
#include "plan.h"

namespace redux_shim {
namespace {

// A dtype the op computes in: floating and summed by redux, else an error naming `what`.
void check_floating(const char *op, at::ScalarType t, const char *what) {
  TORCH_CHECK(!at::isComplexType(t), op, ": argument '", what, "' is complex (", t,
              "), which redux's sums do not take");
  TORCH_CHECK(at::isFloatingType(t) && to_redux(t).has_value(), op, ": argument '", what, "' has dtype ", t,
              ", which is not supported (expected float32, float64, float16 or bfloat16)");
}

// The per-slice maximum over `dims`, kept as size-1 dims, detached, in the wide dtype.
at::Tensor shift(const at::Tensor &x, at::IntArrayRef dims, at::ScalarType wide) {
  return extreme_op(REDUX_MAX).call(x.detach(), dims, true).to(wide);
}

at::Tensor exp_rows(const at::Tensor &x, redux_exp_op op) {
  static const auto handle = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("redux::_exp_rows", "")
                                 .typed<at::Tensor(const at::Tensor &, int64_t)>();
  return handle.call(x, (int64_t)op);
}

at::Tensor logsumexp_impl(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  constexpr const char *op = "redux.logsumexp";
  TORCH_CHECK(self.defined(), op, ": argument 'self' is an undefined tensor");
  // Integer and bool inputs: torch.logsumexp's result is the default floating dtype. Not the
  // 16-64-bit unsigned ones: torch's CUDA conversions do not all take them.
  const at::ScalarType t = self.scalar_type();
  const bool integral = at::isIntegralType(t, true) && is_supported_input(t) && t != at::kUInt16 &&
                        t != at::kUInt32 && t != at::kUInt64;
  if (!integral) check_floating(op, t, "self");
  const at::Tensor x = integral ? self.to(c10::get_default_dtype_as_scalartype()) : self;
  const at::ScalarType wide = mean_sum_dtype(x.scalar_type());
  const std::vector<int64_t> reduced = reduced_dims(op, x, dim);
  if (x.sym_numel() == 0)  // nothing to take a maximum of: log(sum(exp)) as torch does, -inf for empty sums
    return sum_op().call(x.to(wide).exp(), dim, keepdim, std::nullopt).log().to(x.scalar_type());
  if (takes_row_op(x, reduced))
    return reduced_shape(exp_rows(as_rows(x, reduced), REDUX_EXP_LOGSUMEXP), reduced, keepdim);
  if (takes_col_op(x, reduced)) {  // the maxima as centers: the kernel shifts by finite ones only
    const at::Tensor maxima = as_col_centers(shift(x, reduced, at::kDouble), x, reduced);
    return cols_reduced_shape(centered_cols_op(as_cols(x, reduced), maxima, REDUX_CENTERED_EXPS), x, reduced, keepdim);
  }
  // Non-finite maxima shift by 0, as torch's: the result is then +-inf or nan as the values make it.
  at::Tensor m = shift(x, reduced, wide);
  m = m.masked_fill(m.isfinite().logical_not(), 0);
  const at::Tensor sums = sum_op().call(shifted_wide(x, m).exp_(), dim, keepdim, std::nullopt);
  return sums.log().add(keepdim ? m : m.squeeze(reduced)).to(x.scalar_type());
}

// softmax (log_form false) or log_softmax along `dim`.
at::Tensor softmax_of(const char *op, const at::Tensor &self, int64_t dim, std::optional<at::ScalarType> dtype,
                      bool log_form) {
  TORCH_CHECK(self.defined(), op, ": argument 'self' is an undefined tensor");
  // the dtype is checked before any conversion: a cast to some dtypes (float8, sub-byte) fails in torch's kernels
  check_floating(op, dtype.value_or(self.scalar_type()), dtype.has_value() ? "dtype" : "self");
  TORCH_CHECK(is_supported_input(self.scalar_type()), op, ": argument 'self' has dtype ", self.scalar_type(),
              ", which redux does not read (expected a floating, integer or bool tensor)");
  const at::Tensor x = dtype.has_value() ? self.to(*dtype) : self;
  const std::vector<int64_t> reduced = reduced_dims(op, x, std::vector<int64_t>{dim});
  if (x.sym_numel() == 0) return x.clone();
  const redux_exp_op form = log_form ? REDUX_EXP_LOG_SOFTMAX : REDUX_EXP_SOFTMAX;
  if (takes_row_op(x, reduced)) return exp_rows(x, form);
  if (takes_col_op(x, reduced)) {
    const at::Tensor maxima = as_col_centers(shift(x, reduced, at::kDouble), x, reduced);
    return exp_cols_op(as_cols(x, reduced), maxima, form).view_symint(x.sym_sizes());
  }
  const at::ScalarType wide = mean_sum_dtype(x.scalar_type());
  // Not shifted by 0 where the maximum is infinite: torch's answer there is nan, and so is this one.
  const at::Tensor shifted = shifted_wide(x, shift(x, reduced, wide));
  const at::Tensor exps = shifted.exp();
  const at::Tensor sums = sum_op().call(exps, reduced, true, std::nullopt);
  const at::Tensor y = log_form ? shifted.sub(sums.log()) : exps.div(sums);
  return y.to(x.scalar_type());
}

at::Tensor softmax_impl(const at::Tensor &self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return softmax_of("redux.softmax", self, dim, dtype, false);
}

at::Tensor log_softmax_impl(const at::Tensor &self, int64_t dim, std::optional<at::ScalarType> dtype) {
  return softmax_of("redux.log_softmax", self, dim, dtype, true);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) {
  m.impl("logsumexp", &redux_shim::logsumexp_impl);
  m.impl("softmax", &redux_shim::softmax_impl);
  m.impl("log_softmax", &redux_shim::log_softmax_impl);
}
