// redux::vector_norm: torch.linalg.vector_norm's signature and semantics on
// redux::sum. |x| is formed in the mean's wide dtype (fp64 for float32 and
// float64 and their complex forms, fp32 for float16 and bfloat16); ord 1:
// sum |x|; 2: sqrt(sum |x|^2); 0: the count of nonzeros; +-inf: max / min
// |x| (exact in any order: redux::amax / amin of |x|, or where no gradient is
// recorded redux::_extreme_abs, one read); other p: (sum |x|^p)^(1/p), the
// power and the root by redux::_pow_each (the same bits at every place).
// One rounding to the result dtype. Where no gradient is recorded, a real
// input is read once: ord 2 over trailing dims of float32 / float16 /
// bfloat16 rows of up to kRowKernelMaxN by the row kernel
// redux::_sum_squares_rows (fp64 sums); other ord 1 and ord 2 reductions
// (any dims, longer rows, float64) by redux::_sum_of on redux::sum's trees
// (|x| or x * x mapped in fp64, no wide copy). CompositeImplicitAutograd:
// autograd, Meta and torch.compile come from those ops and torch's
// elementwise ops.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cmath>
#include <vector>

#include "extremes.h"
#include "plan.h"
#include "powers.h"
#include "row_kernels.h"

namespace redux_shim {
namespace {

constexpr const char *kNorm = "redux.vector_norm";

// The dtypes the norm reads and computes in: redux's floating sums, and complex64 / complex128.
bool norm_reads(at::ScalarType t) {
  return (at::isFloatingType(t) && to_redux(t).has_value()) || t == at::kComplexFloat || t == at::kComplexDouble;
}

using SumSquaresRows = at::Tensor(const at::Tensor &, double, bool, std::optional<at::ScalarType>);

// The largest (or, `largest` false, the smallest) |x| over the reduced dims.
at::Tensor extreme_of(const at::Tensor &magnitude, bool largest, const std::vector<int64_t> &reduced, bool keepdim) {
  return extreme_op(largest ? REDUX_MAX : REDUX_MIN).call(magnitude, reduced, keepdim);
}

const c10::TypedOperatorHandle<SumSquaresRows> &sum_squares_rows_op() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_squares_rows", "").typed<SumSquaresRows>();
  return handle;
}

// torch's checks of self, ord and dtype.
void check_args(const at::Tensor &self, const at::Scalar &ord, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.defined(), kNorm, ": argument 'self' is an undefined tensor");
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) || at::isComplexType(t), kNorm, ": argument 'self' has dtype ", t,
              "; expected a floating point or complex tensor, as torch.linalg.vector_norm");
  TORCH_CHECK(norm_reads(t), kNorm, ": argument 'self' has dtype ", t,
              ", which is not supported (expected float32, float64, float16, bfloat16, complex64 or complex128)");
  TORCH_CHECK(!ord.isComplex(), kNorm, ": argument 'ord' must be a real number, got a complex one");
  if (dtype.has_value()) {
    TORCH_CHECK(at::isFloatingType(*dtype) || at::isComplexType(*dtype), kNorm, ": argument 'dtype' is ", *dtype,
                "; expected a floating point or complex dtype");
    TORCH_CHECK(norm_reads(*dtype), kNorm, ": argument 'dtype' is ", *dtype,
                ", which is not supported (expected float32, float64, float16, bfloat16, complex64 or complex128)");
    TORCH_CHECK(at::isComplexType(*dtype) == at::isComplexType(t), kNorm, ": argument 'dtype' is ", *dtype,
                " for a ", at::isComplexType(t) ? "complex" : "real", " input; it must be ",
                at::isComplexType(t) ? "complex" : "real", " too");
    TORCH_CHECK(at::promoteTypes(t, *dtype) == *dtype, kNorm, ": argument 'self' has dtype ", t,
                ", which does not convert to argument 'dtype' (", *dtype, ") without narrowing");
  }
}

at::Tensor vector_norm_impl(const at::Tensor &self, const at::Scalar &ord, at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<at::ScalarType> dtype) {
  check_args(self, ord, dtype);
  const at::ScalarType t = self.scalar_type();
  const at::ScalarType out = at::toRealValueType(dtype.value_or(t));
  const at::Tensor x = dtype.has_value() ? self.to(*dtype) : self;
  const std::vector<int64_t> reduced = reduced_dims(kNorm, x, dim);
  const double p = ord.toDouble();
  if (p < 0 || std::isinf(p)) {  // no identity: an empty reduction has no answer
    if (!dim.has_value() || dim->empty()) {
      TORCH_CHECK(x.sym_numel() != 0, kNorm, ": cannot compute the ", p,
                  " norm of an empty tensor: the operation has no identity");
    } else {
      for (int64_t d : reduced)
        TORCH_CHECK(x.sym_size(d) != 0, kNorm, ": cannot compute the ", p, " norm over dim ", d,
                    ", which is empty: the operation has no identity");
    }
  }
  if (std::isinf(p) && !x.is_complex()) {  // |x| and its extremes are exact in x's own dtype: no wide copy
    if (!gradient_recorded(x)) return extreme_abs_op().call(x, reduced, keepdim, p > 0).to(out);  // one read
    return extreme_of(x.abs(), p > 0, reduced, keepdim).to(out);
  }
  if (p == 2 && !x.is_complex() && takes_row_kernel(x, reduced)) {
    return reduced_shape(sum_squares_rows_op().call(as_rows(x, reduced), 1.0, true, std::nullopt), reduced, keepdim);
  }
  const at::ScalarType wide = mean_sum_dtype(out);
  if ((p == 1 || p == 2) && !x.is_complex() && !gradient_recorded(x)) {  // one read, no wide copy
    const at::Tensor sum = sum_of_op().call(x, dim, keepdim, p == 1 ? "abs" : "square", wide, 0);
    // the root by _pow_each: torch's CPU sqrt is not always correctly rounded, and Inductor's differs
    return (p == 1 ? sum : pow_each_op().call(sum, 0.5)).to(out);
  }
  const at::Tensor magnitude = (x.is_complex() ? x.to(at::toComplexType(wide)) : x.to(wide)).abs();
  at::Tensor norm;
  if (std::isinf(p)) {
    norm = extreme_of(magnitude, p > 0, reduced, keepdim);
  } else if (p == 0) {
    norm = sum_op().call(magnitude.ne(0).to(wide), dim, keepdim, std::nullopt);
  } else if (p == 1) {
    norm = sum_op().call(magnitude, dim, keepdim, std::nullopt);
  } else if (p == 2) {
    norm = power_at_zero(sum_op().call(magnitude.mul(magnitude), dim, keepdim, std::nullopt), 0.5);
  } else {
    // below p = 1 the slope of |x|^p is infinite at 0, where torch's gradient is 0
    const at::Tensor powers = p < 1 ? power_at_zero(magnitude, p) : pow_each_op().call(magnitude, p);
    // p < 0: |0|^p is inf, the sum inf and its root 0, as torch's
    norm = power_at_zero(sum_op().call(powers, dim, keepdim, std::nullopt), 1.0 / p);
  }
  return norm.to(out);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CompositeImplicitAutograd, m) { m.impl("vector_norm", &redux_shim::vector_norm_impl); }
