// redux::_pow_each (powers.cpp): x^p element by element, float32 or float64,
// with the same bits at every place in the buffer (redux.h, "Elementwise
// powers"); vector_norm's powers and roots for a general p.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "redux/redux.h"

namespace redux_shim {

// redux::_pow_each's typed dispatcher handle, looked up once.
using PowEachFn = at::Tensor(const at::Tensor &, double);
const c10::TypedOperatorHandle<PowEachFn> &pow_each_op();

// x^p for x >= 0 by redux::_pow_each (x^0.5 a correctly rounded sqrt, and
// opaque to torch.compile), with a zero gradient where x is 0, as torch's
// norm and std backward give there: not the nan of an infinite slope
// (p < 1) times a zero one. Without a gradient recorded, _pow_each alone.
at::Tensor power_at_zero(const at::Tensor &x, double exponent);

}  // namespace redux_shim
