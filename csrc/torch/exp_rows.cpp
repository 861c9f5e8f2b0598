// redux::_exp_rows on the CPU and on meta tensors: the checks and shapes
// shared with the CUDA kernel (exp_rows.h), the rows fanned out by
// run_cpu_rows (row_kernels.h).
#include <torch/library.h>

#include "exp_rows.h"
#include "plan.h"

namespace redux_shim {

namespace {

// The result's shape for x's (real or symbolic) sizes: x's (softmax, log_softmax), less the last
// dim (logsumexp), or that dim replaced by the two parts.
template <typename Size>
std::vector<Size> exp_rows_shape(c10::ArrayRef<Size> sizes, redux_exp_op op) {
  std::vector<Size> shape(sizes.begin(), sizes.end());
  if (op == REDUX_EXP_LOGSUMEXP) shape.pop_back();
  if (op == REDUX_EXP_PARTS) shape.back() = 2;
  return shape;
}

// The parts are fp64; every other result has x's dtype.
at::ScalarType exp_rows_dtype(const at::Tensor &x, redux_exp_op op) {
  return op == REDUX_EXP_PARTS ? at::kDouble : x.scalar_type();
}

// The checks the real and meta kernels share.
void check_op(int64_t op) {
  TORCH_CHECK(op == REDUX_EXP_SOFTMAX || op == REDUX_EXP_LOG_SOFTMAX || op == REDUX_EXP_LOGSUMEXP ||
                  op == REDUX_EXP_PARTS,
              kExpRowsOp, ": argument 'op' must be 0 (softmax), 1 (log_softmax), 2 (logsumexp) or 3 (parts), got ",
              op);
}

void check_backward_op(int64_t op) {
  TORCH_CHECK(op == REDUX_EXP_SOFTMAX || op == REDUX_EXP_LOG_SOFTMAX, kExpRowsBackwardOp,
              ": argument 'op' must be 0 (softmax) or 1 (log_softmax), got ", op);
}

void check_rows(const at::Tensor &x) {
  TORCH_CHECK(x.dim() >= 1, kExpRowsOp, ": argument 'x' is 0-dim: there is no last dim to reduce");
}

}  // namespace

ExpRows exp_rows_args(const at::Tensor &x, int64_t op) {
  TORCH_CHECK(x.defined(), kExpRowsOp, ": argument 'x' is an undefined tensor");
  check_op(op);
  check_rows(x);
  const at::ScalarType t = x.scalar_type();
  TORCH_CHECK(row_kernel_reads(t), kExpRowsOp, ": argument 'x' has dtype ", t, ", which is not supported (expected ",
              kRowKernelDtypeNames, ")");
  TORCH_CHECK(x.size(-1) > 0, kExpRowsOp, ": argument 'x' has an empty last dim");
  const int64_t n = x.size(-1);
  return ExpRows{x.contiguous(), x.numel() / n, n, *to_redux(t), (redux_exp_op)op};
}

at::Tensor exp_rows_result(const ExpRows &a, const at::Tensor &x) {
  return at::empty(exp_rows_shape(x.sizes(), a.op), x.options().dtype(exp_rows_dtype(x, a.op)));
}

ExpRowsBackward exp_rows_backward_args(const at::Tensor &grad, const at::Tensor &out, int64_t op) {
  constexpr const char *o = kExpRowsBackwardOp;
  TORCH_CHECK(grad.defined() && out.defined(), o, ": arguments 'grad' and 'out' must be defined tensors");
  check_backward_op(op);
  TORCH_CHECK(out.dim() >= 1, o, ": argument 'out' is 0-dim: there is no last dim");
  TORCH_CHECK(grad.sizes() == out.sizes(), o, ": argument 'grad' has shape ", grad.sizes(), " where 'out' has ",
              out.sizes());
  TORCH_CHECK(grad.scalar_type() == out.scalar_type(), o, ": argument 'grad' has dtype ", grad.scalar_type(),
              " where 'out' has ", out.scalar_type());
  TORCH_CHECK(grad.device() == out.device(), o, ": argument 'grad' is on ", grad.device(), " where 'out' is on ",
              out.device());
  const at::ScalarType t = out.scalar_type();
  TORCH_CHECK(row_kernel_reads(t), o, ": argument 'out' has dtype ", t, ", which is not supported (expected ",
              kRowKernelDtypeNames, ")");
  TORCH_CHECK(out.size(-1) > 0, o, ": argument 'out' has an empty last dim");
  const int64_t n = out.size(-1);
  return ExpRowsBackward{grad.contiguous(), out.contiguous(), out.numel() / n, n, *to_redux(t), (redux_exp_op)op};
}

namespace {

at::Tensor exp_rows_backward_cpu(const at::Tensor &grad, const at::Tensor &out, int64_t op) {
  const ExpRowsBackward a = exp_rows_backward_args(grad, out, op);
  at::Tensor dx = at::empty(out.sizes(), out.options());
  const void *g = a.grad.const_data_ptr(), *y = a.out.const_data_ptr();
  void *d = dx.mutable_data_ptr();
  run_cpu_rows(kExpRowsBackwardOp, a.rows, a.n, [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_rows_backward(a.op, g, y, d, begin, end, a.n, a.dtype);
  });
  return dx;
}

at::Tensor exp_rows_backward_meta(const at::Tensor &grad, const at::Tensor &out, int64_t op) {
  check_backward_op(op);
  return at::empty_symint(out.sym_sizes(), out.options());
}

at::Tensor exp_rows_cpu(const at::Tensor &x, int64_t op) {
  const ExpRows a = exp_rows_args(x, op);
  at::Tensor y = exp_rows_result(a, x);
  const void *in = a.input.const_data_ptr();
  void *out = y.mutable_data_ptr();
  run_cpu_rows(kExpRowsOp, a.rows, a.n, [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_rows(a.op, in, out, begin, end, a.n, a.dtype);
  });
  return y;
}

at::Tensor exp_rows_meta(const at::Tensor &x, int64_t op) {
  check_op(op);
  check_rows(x);
  return at::empty_symint(exp_rows_shape(x.sym_sizes(), (redux_exp_op)op),
                          x.options().dtype(exp_rows_dtype(x, (redux_exp_op)op)));
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("_exp_rows", &redux_shim::exp_rows_cpu);
  m.impl("_exp_rows_backward", &redux_shim::exp_rows_backward_cpu);
}
TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("_exp_rows", &redux_shim::exp_rows_meta);
  m.impl("_exp_rows_backward", &redux_shim::exp_rows_backward_meta);
}
