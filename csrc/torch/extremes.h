// redux::amax and redux::amin (extremes.cpp, extremes_cuda.cpp): torch.amax's
// and torch.amin's signatures and semantics on redux's extreme kernels
// (redux.h, "Extremes"); redux::_extreme_abs, the largest or smallest |x|.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "plan.h"
#include "redux/redux.h"

namespace redux_shim {

// The op's name in errors: "redux.amax", "redux.amin" or "redux._extreme_abs".
const char *extreme_name(redux_extreme op);

// redux::amax's and redux::amin's typed dispatcher handles (for the
// composites that take a maximum: vector_norm's inf norms, the exponential
// sums' shift), looked up once.
using ExtremeFn = at::Tensor(const at::Tensor &, at::IntArrayRef, bool);
const c10::TypedOperatorHandle<ExtremeFn> &extreme_op(redux_extreme op);
using ExtremeAbsFn = at::Tensor(const at::Tensor &, at::IntArrayRef, bool, bool);
const c10::TypedOperatorHandle<ExtremeAbsFn> &extreme_abs_op();

// A checked call: the plan of the kernel (its family, shape, and its input
// in the kernel's dtype: integers and bool as int64, exact) and the result
// in self's dtype. kernel_out is what the kernel writes (plan.out_dtype).
struct ExtremeCall {
  SumPlan plan;
  at::Tensor result, kernel_out;
  redux_dtype t;
  bool run = false;  // false: an empty result, nothing to compute
};
ExtremeCall extreme_call(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim);
// The result in self's dtype, once the kernel has filled kernel_out.
at::Tensor extreme_result(ExtremeCall &call, const at::Tensor &self);

}  // namespace redux_shim
