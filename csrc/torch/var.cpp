// redux::var, redux::std, redux::var_mean: torch.var's semantics in two
// passes, where no gradient is recorded on float32 / float16 / bfloat16:
// over trailing dims redux::_moment_rows on the CPU and CUDA (fp64 sums;
// moment_rows*.cpp), one kernel, or for rows longer than kRowKernelMaxN
// its pieces' moments combined by a second; over other consecutive dims
// the mean (below), then redux::_centered_cols: the squared
// deviations from it summed in fp64, divided and rounded in the kernel.
// Otherwise on redux::sum: the mean is the sum in the mean's wide dtype
// (fp64 for float32/float64, fp32 for float16/bfloat16) divided once, as
// redux::mean computes it; the deviations from it are formed in the wide
// dtype and their squares summed by redux::sum in that dtype; one division
// by max(0, N - correction), one rounding to the result dtype (fp64
// deviations where no gradient is recorded: squared in redux::_sum_of's
// read, the same bits). Complex
// inputs: the variances of the real and imaginary parts, added (torch's
// definition). CompositeImplicitAutograd: autograd, Meta and torch.compile
// come from redux::sum, the kernels' ops and torch's elementwise ops.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <vector>

#include "centered_cols.h"
#include "plan.h"
#include "powers.h"
#include "row_kernels.h"

namespace redux_shim {
namespace {

using MomentRowsFn = std::tuple<at::Tensor, at::Tensor>(const at::Tensor &, double, bool,
                                                         std::optional<at::ScalarType>);

const c10::TypedOperatorHandle<MomentRowsFn> &moment_rows_op() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::_moment_rows", "").typed<MomentRowsFn>();
  return handle;
}

// (variance, mean) of a real floating tensor; the mean keeps the reduced
// dims when keepdim. Without want_mean the mean may be left undefined (var
// and std: one rounding of it fewer to launch).
std::tuple<at::Tensor, at::Tensor> real_var_mean(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar> &correction, bool keepdim,
                                                 bool want_sqrt, bool want_mean) {
  const at::ScalarType out = self.scalar_type();
  const at::ScalarType wide = mean_sum_dtype(out);
  const std::vector<int64_t> reduced = reduced_dims(op, self, dim);
  c10::SymInt count = 1;
  for (int64_t d : reduced) count = count * self.sym_size(d);
  // torch's divisor: max(0, N - correction), correction 1 by default; 0 for
  // an empty reduction, whose variance torch makes NaN whatever the
  // correction. N as a number: under torch.compile this specializes on it.
  const double n = (double)count.guard_int(__FILE__, __LINE__);
  const double divisor = n == 0 ? 0.0 : std::max(0.0, n - correction.value_or(at::Scalar(1)).toDouble());
  if (takes_row_op(self, reduced)) {
    const auto [var, mean] = moment_rows_op().call(as_rows(self, reduced), divisor, want_sqrt, std::nullopt);
    return {reduced_shape(var, reduced, keepdim), reduced_shape(mean, reduced, keepdim)};
  }
  const at::Tensor mean = sum_op().call(self, dim, true, wide).div(c10::Scalar(count));
  if (takes_col_op(self, reduced)) {
    const at::Tensor var = centered_cols_op(as_cols(self, reduced), as_col_centers(mean.to(at::kDouble), self, reduced),
                                            REDUX_CENTERED_SQUARES, divisor, want_sqrt);
    const at::Tensor m = !want_mean ? at::Tensor() : keepdim ? mean : mean.squeeze(reduced);
    return {cols_reduced_shape(var, self, reduced, keepdim), want_mean ? m.to(out) : m};
  }
  const at::Tensor deviation = shifted_wide(self, mean);
  // fp64 deviations and no gradient: their squares summed in the read (the
  // same products and tree as summing deviation * deviation, one pass less)
  const at::Tensor squares = wide == at::kDouble && !gradient_recorded(self)
                                 ? sum_of_op().call(deviation, dim, keepdim, "square", wide, 0)
                                 : sum_op().call(deviation.mul(deviation), dim, keepdim, std::nullopt);
  at::Tensor var = squares.div(divisor);
  if (want_sqrt) var = power_at_zero(var, 0.5);  // torch's std gradient where std is 0: 0
  const at::Tensor m = keepdim ? mean : mean.squeeze(reduced);
  return {var.to(out), m.to(out)};
}

std::tuple<at::Tensor, at::Tensor> var_mean_of(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                                               const std::optional<at::Scalar> &correction, bool keepdim,
                                               bool want_sqrt, bool want_mean) {
  TORCH_CHECK(self.defined(), op, ": argument 'self' is an undefined tensor");
  if (self.is_complex()) {
    // a listed few, as everywhere in redux: a complex dtype torch adds later is refused until it is listed
    TORCH_CHECK(self.scalar_type() == at::kComplexFloat || self.scalar_type() == at::kComplexDouble, op,
                ": argument 'self' has dtype ", self.scalar_type(),
                ", which is not supported (expected complex64 or complex128, as torch.var's CPU kernels)");
    const auto [var_re, mean_re] = real_var_mean(op, at::real(self), dim, correction, keepdim, false, want_mean);
    const auto [var_im, mean_im] = real_var_mean(op, at::imag(self), dim, correction, keepdim, false, want_mean);
    const at::Tensor var = var_re.add(var_im);
    return {want_sqrt ? power_at_zero(var, 0.5) : var, want_mean ? at::complex(mean_re, mean_im) : at::Tensor()};
  }
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) && to_redux(t).has_value(), op, ": argument 'self' has dtype ", t,
              ", which is not supported (expected float32, float64, float16, bfloat16 or a complex dtype of them; "
              "like torch.var, integers are refused)");
  return real_var_mean(op, self, dim, correction, keepdim, want_sqrt, want_mean);
}

at::Tensor var_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar> &correction,
                    bool keepdim) {
  return std::get<0>(var_mean_of("redux.var", self, dim, correction, keepdim, false, false));
}

at::Tensor std_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar> &correction,
                    bool keepdim) {
  return std::get<0>(var_mean_of("redux.std", self, dim, correction, keepdim, true, false));
}

std::tuple<at::Tensor, at::Tensor> var_mean_impl(const at::Tensor &self, at::OptionalIntArrayRef dim,
                                                 const std::optional<at::Scalar> &correction, bool keepdim) {
  return var_mean_of("redux.var_mean", self, dim, correction, keepdim, false, true);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) {
  m.impl("var", &redux_shim::var_impl);
  m.impl("std", &redux_shim::std_impl);
  m.impl("var_mean", &redux_shim::var_mean_impl);
}
