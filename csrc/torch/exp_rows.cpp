// redux::_exp_rows and _exp_rows_apply on the CPU and on meta tensors: the checks and shapes
// shared with the CUDA kernel (exp_rows.h), the rows fanned out by
// run_cpu_rows (row_kernels.h).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>

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

ExpRows exp_rows_args(const at::Tensor &x, int64_t op, const char *name) {
  TORCH_CHECK(x.defined(), name, ": argument 'x' is an undefined tensor");
  check_op(op);
  TORCH_CHECK(x.dim() >= 1, name, ": argument 'x' is 0-dim: there is no last dim to reduce");
  const at::ScalarType t = x.scalar_type();
  TORCH_CHECK(row_kernel_reads(t), name, ": argument 'x' has dtype ", t, ", which is not supported (expected ",
              kRowKernelDtypeNames, ")");
  TORCH_CHECK(x.size(-1) > 0, name, ": argument 'x' has an empty last dim");
  const int64_t n = x.size(-1);
  return ExpRows{x.contiguous(), x.numel() / n, n, *to_redux(t), (redux_exp_op)op};
}

at::Tensor exp_rows_result(const ExpRows &a, const at::Tensor &x) {
  return at::empty(exp_rows_shape(x.sizes(), a.op), x.options().dtype(exp_rows_dtype(x, a.op)));
}

namespace {

void check_apply_op(int64_t op) {
  TORCH_CHECK(op == REDUX_EXP_SOFTMAX || op == REDUX_EXP_LOG_SOFTMAX, kExpRowsApplyOp,
              ": argument 'op' must be 0 (softmax) or 1 (log_softmax), got ", op);
}

// parts: fp64, x's leading dims and 2, on x's device.
void check_parts(const at::Tensor &x, const at::Tensor &parts) {
  constexpr const char *o = kExpRowsApplyOp;
  TORCH_CHECK(parts.defined(), o, ": argument 'parts' is an undefined tensor");
  TORCH_CHECK(parts.scalar_type() == at::kDouble, o, ": argument 'parts' has dtype ", parts.scalar_type(),
              "; expected float64");
  TORCH_CHECK(parts.device() == x.device(), o, ": argument 'parts' is on ", parts.device(), " where 'x' is on ",
              x.device());
  auto want = x.sym_sizes().vec();
  want.back() = 2;
  TORCH_CHECK(parts.sym_sizes() == c10::SymIntArrayRef(want), o, ": argument 'parts' has shape ", parts.sym_sizes(),
              "; expected ", c10::SymIntArrayRef(want), " (x's leading dims, then a maximum and a sum)");
}

}  // namespace

ExpRowsApply exp_rows_apply_args(const at::Tensor &x, const at::Tensor &parts, int64_t op) {
  TORCH_CHECK(x.defined(), kExpRowsApplyOp, ": argument 'x' is an undefined tensor");
  check_apply_op(op);
  TORCH_CHECK(x.dim() >= 1, kExpRowsApplyOp, ": argument 'x' is 0-dim: there is no last dim to reduce");
  check_parts(x, parts);
  return ExpRowsApply{exp_rows_args(x, op, kExpRowsApplyOp), parts.contiguous()};
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

// Element by element, so the rows are cut into spans of at most kApplySpan elements, one kernel
// call each (a span is a row of its own to the kernel): long rows spread over the threads.
constexpr int64_t kApplySpan = 65536;

// The softmax form a.op of a.input's rows from their fp64 parts, into y.
void apply_cpu(const ExpRows &a, const double *given, at::Tensor &y) {
  const int64_t n = a.n, spans = (n + kApplySpan - 1) / kApplySpan;
  const auto *in = static_cast<const char *>(a.input.const_data_ptr());
  auto *out = static_cast<char *>(y.mutable_data_ptr());
  const int64_t size = a.input.element_size();
  std::atomic<int> failed{REDUX_OK};
  at::parallel_for(0, a.rows * spans, std::max<int64_t>(1, kCpuPieceElements / std::min(n, kApplySpan)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t k = begin; k < end; ++k) {
                       const int64_t row = k / spans, start = (k % spans) * kApplySpan;
                       const int64_t at = (row * n + start) * size;
                       const redux_status st = redux_cpu_exp_rows_apply(
                           a.op, in + at, given + 2 * row, out + at, 0, 1, std::min(kApplySpan, n - start), a.dtype);
                       if (st != REDUX_OK) failed.store(st);
                     }
                   });
  check_status(kExpRowsApplyOp, (redux_status)failed.load());
}

// Rows cut into pieces (cut_into_pieces): the pieces' parts over the threads, each row's
// combined (into y for logsumexp and parts, else into the rows' parts, then applied).
void exp_rows_pieces_cpu(const ExpRows &a, at::Tensor &y) {
  const at::Tensor pieces = row_pieces_buffer(a.input, a.rows, a.n, 2);
  const void *in = a.input.const_data_ptr();
  double *parts = pieces.mutable_data_ptr<double>();
  run_cpu_rows(kExpRowsOp, pieces.numel() / 2, redux_row_piece(a.n), [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_row_pieces(in, parts, begin, end, a.n, a.dtype);
  });
  const bool reduces = a.op == REDUX_EXP_LOGSUMEXP || a.op == REDUX_EXP_PARTS;
  const at::Tensor rows_parts = reduces ? y : at::empty({a.rows, 2}, pieces.options());
  void *combined = rows_parts.mutable_data_ptr();
  const redux_exp_op combine = reduces ? a.op : REDUX_EXP_PARTS;
  run_cpu_rows(kExpRowsOp, a.rows, redux_row_pieces(a.n), [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_rows_combine(combine, parts, combined, begin, end, a.n, a.dtype);
  });
  if (!reduces) apply_cpu(a, rows_parts.const_data_ptr<double>(), y);
}

at::Tensor exp_rows_cpu(const at::Tensor &x, int64_t op) {
  const ExpRows a = exp_rows_args(x, op);
  at::Tensor y = exp_rows_result(a, x);
  if (a.rows == 0) return y;
  if (cut_into_pieces(a.n)) {
    exp_rows_pieces_cpu(a, y);
    return y;
  }
  const void *in = a.input.const_data_ptr();
  void *out = y.mutable_data_ptr();
  run_cpu_rows(kExpRowsOp, a.rows, a.n, [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_rows(a.op, in, out, begin, end, a.n, a.dtype);
  });
  return y;
}

at::Tensor exp_rows_apply_cpu(const at::Tensor &x, const at::Tensor &parts, int64_t op) {
  const ExpRowsApply a = exp_rows_apply_args(x, parts, op);
  at::Tensor y = at::empty(x.sizes(), x.options());
  apply_cpu(a.rows, a.parts.const_data_ptr<double>(), y);
  return y;
}

at::Tensor exp_rows_apply_meta(const at::Tensor &x, const at::Tensor &parts, int64_t op) {
  check_apply_op(op);
  TORCH_CHECK(x.dim() >= 1, kExpRowsApplyOp, ": argument 'x' is 0-dim: there is no last dim to reduce");
  check_parts(x, parts);
  return at::empty_symint(x.sym_sizes(), x.options());
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
  m.impl("_exp_rows_apply", &redux_shim::exp_rows_apply_cpu);
  m.impl("_exp_rows_backward", &redux_shim::exp_rows_backward_cpu);
}
TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("_exp_rows", &redux_shim::exp_rows_meta);
  m.impl("_exp_rows_apply", &redux_shim::exp_rows_apply_meta);
  m.impl("_exp_rows_backward", &redux_shim::exp_rows_backward_meta);
}
