// redux::_centered_cols and redux::_exp_cols on the CPU and on meta tensors:
// the checks and the results' shapes shared with the CUDA kernels
// (centered_cols.h); the chunks, then the columns (or the columns' blocks),
// fanned out over torch's threads (run_cpu_rows).
#include "centered_cols.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "plan.h"
#include "row_kernels.h"

namespace redux_shim {
namespace {

// The checks both ops' real and meta kernels share (`o` names the op); x's sizes may be symbolic.
void check_args(const char *o, const at::Tensor &x, const at::Tensor &center) {
  TORCH_CHECK(x.defined(), o, ": argument 'x' is an undefined tensor");
  TORCH_CHECK(center.defined(), o, ": argument 'center' is an undefined tensor");
  TORCH_CHECK(x.dim() == 3, o, ": argument 'x' has ", x.dim(), " dims; expected 3 ([outer, n, inner])");
  TORCH_CHECK(row_kernel_reads(x.scalar_type()), o, ": argument 'x' has dtype ", x.scalar_type(),
              ", which is not supported (expected ", kRowKernelDtypeNames, ")");
  TORCH_CHECK(x.sym_numel().sym_gt(0).guard_bool(__FILE__, __LINE__), o, ": argument 'x' has no elements");
  TORCH_CHECK(center.scalar_type() == at::kDouble, o, ": argument 'center' has dtype ", center.scalar_type(),
              "; expected float64");
  TORCH_CHECK(center.device() == x.device(), o, ": argument 'center' is on ", center.device(), " where 'x' is on ",
              x.device());
  const c10::SymInt want[] = {x.sym_size(0), x.sym_size(2)};
  TORCH_CHECK(center.sym_sizes() == c10::SymIntArrayRef(want), o, ": argument 'center' has shape ",
              center.sym_sizes(), "; expected ", c10::SymIntArrayRef(want), " (x's outer and inner sizes)");
}

void check_centered_op(int64_t op) {
  TORCH_CHECK(op == REDUX_CENTERED_SQUARES || op == REDUX_CENTERED_EXPS, kCenteredColsOp,
              ": argument 'op' must be 0 (squares) or 1 (exponentials), got ", op);
}

void check_exp_op(int64_t op) {
  TORCH_CHECK(op == REDUX_EXP_SOFTMAX || op == REDUX_EXP_LOG_SOFTMAX, kExpColsOp,
              ": argument 'op' must be 0 (softmax) or 1 (log_softmax), got ", op);
}

at::Tensor result_like(const at::Tensor &x) {
  return at::empty_symint({x.sym_size(0), x.sym_size(2)}, x.options());
}

CenteredCols checked(const at::Tensor &x, const at::Tensor &center, int64_t op, at::Tensor result) {
  return CenteredCols{x.contiguous(), center.contiguous(), redux_shape{x.size(0), x.size(1), x.size(2)},
                      *to_redux(x.scalar_type()), (int)op, std::move(result)};
}

}  // namespace

CenteredCols centered_cols_args(const at::Tensor &x, const at::Tensor &center, int64_t op) {
  check_centered_op(op);
  check_args(kCenteredColsOp, x, center);
  return checked(x, center, op, result_like(x));
}

CenteredCols exp_cols_args(const at::Tensor &x, const at::Tensor &center, int64_t op) {
  check_exp_op(op);
  check_args(kExpColsOp, x, center);
  return checked(x, center, op, at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous)));
}

at::Tensor centered_cols_op(const at::Tensor &x, const at::Tensor &center, redux_centered op, double divisor,
                            bool root) {
  static const auto handle =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("redux::_centered_cols", "")
          .typed<at::Tensor(const at::Tensor &, const at::Tensor &, int64_t, double, bool)>();
  return handle.call(x, center, op, divisor, root);
}

at::Tensor exp_cols_op(const at::Tensor &x, const at::Tensor &center, redux_exp_op op) {
  static const auto handle = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("redux::_exp_cols", "")
                                 .typed<at::Tensor(const at::Tensor &, const at::Tensor &, int64_t)>();
  return handle.call(x, center, op);
}

namespace {

at::Tensor centered_cols_cpu(const at::Tensor &x, const at::Tensor &center, int64_t op, double divisor, bool root) {
  const CenteredCols a = centered_cols_args(x, center, op);
  const redux_shape s = a.shape;
  const int64_t chunks = redux_centered_cols_chunks(s, a.dtype);
  const at::Tensor partials = at::empty({s.outer * chunks * s.inner}, x.options().dtype(at::kDouble));
  const void *px = a.input.const_data_ptr();
  const double *pc = a.center.const_data_ptr<double>();
  double *pp = partials.mutable_data_ptr<double>();
  run_cpu_rows(kCenteredColsOp, s.outer * chunks, redux_centered_cols_chunk(s, a.dtype) * s.inner,
               [&](int64_t begin, int64_t end) {
                 return redux_cpu_centered_cols_chunks((redux_centered)a.op, px, pc, pp, s, a.dtype, begin, end);
               });
  void *py = a.result.mutable_data_ptr();
  run_cpu_rows(kCenteredColsOp, s.outer * s.inner, chunks, [&](int64_t begin, int64_t end) {
    return redux_cpu_centered_cols_finish((redux_centered)a.op, pp, pc, py, s, a.dtype, divisor, root, begin, end);
  });
  return a.result;
}

at::Tensor centered_cols_meta(const at::Tensor &x, const at::Tensor &center, int64_t op, double, bool) {
  check_centered_op(op);
  check_args(kCenteredColsOp, x, center);
  return result_like(x);
}

at::Tensor exp_cols_cpu(const at::Tensor &x, const at::Tensor &center, int64_t op) {
  const CenteredCols a = exp_cols_args(x, center, op);
  const redux_shape s = a.shape;
  const void *px = a.input.const_data_ptr();
  const double *pc = a.center.const_data_ptr<double>();
  void *py = a.result.mutable_data_ptr();
  run_cpu_rows(kExpColsOp, s.outer * s.inner, s.n, [&](int64_t begin, int64_t end) {
    return redux_cpu_exp_cols((redux_exp_op)a.op, px, pc, py, s, a.dtype, begin, end);
  });
  return a.result;
}

at::Tensor exp_cols_meta(const at::Tensor &x, const at::Tensor &center, int64_t op) {
  check_exp_op(op);
  check_args(kExpColsOp, x, center);
  return at::empty_symint(x.sym_sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("_centered_cols", &redux_shim::centered_cols_cpu);
  m.impl("_exp_cols", &redux_shim::exp_cols_cpu);
}
TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("_centered_cols", &redux_shim::centered_cols_meta);
  m.impl("_exp_cols", &redux_shim::exp_cols_meta);
}
