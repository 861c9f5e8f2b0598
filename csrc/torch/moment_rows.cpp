// redux::_moment_rows(x, divisor, root, dtype) -> (var or std, mean) and
// redux::_sum_squares_rows(x, divisor, root, dtype) along the last dim, and
// redux::_sum_squares_each(xs, divisor, root) (each tensor one row), on the
// CPU and on meta tensors: the checks and shapes shared with the CUDA kernel
// (moment_rows.h), the rows fanned out by run_cpu_rows (row_kernels.h), the
// tensors of a list over the threads.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <tuple>
#include <vector>

#include "moment_rows.h"
#include "plan.h"
#include "row_kernels.h"

namespace redux_shim {

namespace {

// The result dtype: x's unless float64 is asked for.
at::ScalarType checked_dtype(const char *op, const at::Tensor &x, std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(x.defined(), op, ": argument 'x' is an undefined tensor");
  TORCH_CHECK(x.dim() >= 1, op, ": argument 'x' is 0-dim: there is no last dim to reduce");
  const at::ScalarType t = x.scalar_type();
  TORCH_CHECK(row_kernel_reads(t), op, ": argument 'x' has dtype ", t, ", which is not supported (expected ",
              kRowKernelDtypeNames, ")");
  const at::ScalarType out = dtype.value_or(t);
  TORCH_CHECK(out == t || out == at::kDouble, op, ": argument 'dtype' is ", out, " (expected x's dtype, ", t,
              ", or float64)");
  return out;
}

at::Tensor result(const at::Tensor &x, at::ScalarType out) {
  return at::empty_symint(x.sym_sizes().slice(0, x.dim() - 1), x.options().dtype(out));
}

}  // namespace

MomentRows moment_rows_args(const char *op, const at::Tensor &x, std::optional<at::ScalarType> dtype, bool centered) {
  const at::ScalarType out = checked_dtype(op, x, dtype);
  TORCH_CHECK(x.size(-1) > 0, op, ": argument 'x' has an empty last dim");
  const int64_t n = x.size(-1);
  return MomentRows{x.contiguous(), x.numel() / n, n, *to_redux(x.scalar_type()), *to_redux(out), result(x, out),
                    centered ? result(x, out) : at::Tensor()};
}

namespace {

// _sum_squares_each's checks of xs[i], on every backend.
void check_each(const at::Tensor &x, size_t i) {
  const std::string arg = "xs[" + std::to_string(i) + "]";
  TORCH_CHECK(x.defined(), kSumSquaresEachOp, ": argument '", arg, "' is an undefined tensor");
  TORCH_CHECK(row_kernel_reads(x.scalar_type()), kSumSquaresEachOp, ": argument '", arg, "' has dtype ",
              x.scalar_type(), ", which is not supported (expected ", kRowKernelDtypeNames, ")");
  TORCH_CHECK(x.sym_numel().sym_gt(0).guard_bool(__FILE__, __LINE__), kSumSquaresEachOp, ": argument '", arg,
              "' has no elements");
}

}  // namespace

MomentRows sum_squares_each_args(const at::Tensor &x, size_t i) {
  check_each(x, i);
  const redux_dtype t = *to_redux(x.scalar_type());
  return MomentRows{x.contiguous(), 1, x.numel(), t, t, at::empty({}, x.options()), at::Tensor()};
}

namespace {

// Centered rows cut into pieces (cut_into_pieces): the pieces' fp64 moments
// over the threads, then each row's pieces combined.
void run_cpu_pieces(const MomentRows &a, double divisor, bool root) {
  const at::Tensor pieces_m2 = row_pieces_buffer(a.input, a.rows, a.n, 1);
  const at::Tensor pieces_mean = row_pieces_buffer(a.input, a.rows, a.n, 1);
  const void *px = a.input.const_data_ptr();
  double *pm2 = pieces_m2.mutable_data_ptr<double>(), *pmean = pieces_mean.mutable_data_ptr<double>();
  run_cpu_rows(kMomentRowsOp, pieces_m2.numel(), redux_row_piece(a.n), [&](int64_t begin, int64_t end) {
    return redux_cpu_moment_row_pieces(px, pm2, pmean, begin, end, a.n, a.dtype);
  });
  void *m2 = a.m2.mutable_data_ptr(), *mean = a.mean.mutable_data_ptr();
  run_cpu_rows(kMomentRowsOp, a.rows, redux_row_pieces(a.n), [&](int64_t begin, int64_t end) {
    return redux_cpu_moment_rows_combine(pm2, pmean, m2, mean, begin, end, a.n, a.out, divisor, root);
  });
}

void run_cpu(const MomentRows &a, double divisor, bool root) {
  if (a.rows == 0) return;
  if (a.mean.defined() && cut_into_pieces(a.n)) return run_cpu_pieces(a, divisor, root);
  const void *px = a.input.const_data_ptr();
  void *pm2 = a.m2.mutable_data_ptr(), *pmean = a.mean.defined() ? a.mean.mutable_data_ptr() : nullptr;
  const int centered = a.mean.defined();
  run_cpu_rows(centered ? kMomentRowsOp : kSumSquaresRowsOp, a.rows, a.n, [&](int64_t begin, int64_t end) {
    return redux_cpu_moment_rows(px, pm2, pmean, begin, end, a.n, a.dtype, a.out, divisor, centered, root);
  });
}

std::tuple<at::Tensor, at::Tensor> moment_rows_cpu(const at::Tensor &x, double divisor, bool root,
                                                   std::optional<at::ScalarType> dtype) {
  const MomentRows a = moment_rows_args(kMomentRowsOp, x, dtype, true);
  run_cpu(a, divisor, root);
  return {a.m2, a.mean};
}

at::Tensor sum_squares_rows_cpu(const at::Tensor &x, double divisor, bool root, std::optional<at::ScalarType> dtype) {
  const MomentRows a = moment_rows_args(kSumSquaresRowsOp, x, dtype, false);
  run_cpu(a, divisor, root);
  return a.m2;
}

std::vector<at::Tensor> sum_squares_each_cpu(at::TensorList xs, double divisor, bool root) {
  std::vector<MomentRows> rows;
  rows.reserve(xs.size());
  int64_t elements = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    TORCH_CHECK(!xs[i].defined() || xs[i].device().is_cpu(), kSumSquaresEachOp, ": argument 'xs[", i,
                "]' is on ", xs[i].device(), " where xs[0] is on the CPU");
    rows.push_back(sum_squares_each_args(xs[i], i));
    elements += rows.back().n;
  }
  // The tensors spread over torch's threads, ~kCpuPieceElements a piece;
  // each is one call's on one thread, as alone, so the bits stay its own.
  const int64_t count = (int64_t)rows.size();
  std::atomic<int> failed{REDUX_OK};
  at::parallel_for(0, count, std::max<int64_t>(1, count * kCpuPieceElements / std::max<int64_t>(elements, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end; ++i) {
                       const MomentRows &a = rows[i];
                       const redux_status s =
                           redux_cpu_moment_rows(a.input.const_data_ptr(), a.m2.mutable_data_ptr(), nullptr, 0, 1,
                                                 a.n, a.dtype, a.out, divisor, 0, root);
                       if (s != REDUX_OK) failed.store(s);
                     }
                   });
  check_status(kSumSquaresEachOp, (redux_status)failed.load());
  std::vector<at::Tensor> out;
  out.reserve(rows.size());
  for (const MomentRows &a : rows) out.push_back(a.m2);
  return out;
}

std::vector<at::Tensor> sum_squares_each_meta(at::TensorList xs, double, bool) {
  std::vector<at::Tensor> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    check_each(xs[i], i);
    out.push_back(at::empty({}, xs[i].options()));
  }
  return out;
}

std::tuple<at::Tensor, at::Tensor> moment_rows_meta(const at::Tensor &x, double, bool,
                                                    std::optional<at::ScalarType> dtype) {
  const at::ScalarType out = checked_dtype(kMomentRowsOp, x, dtype);
  return {result(x, out), result(x, out)};
}

at::Tensor sum_squares_rows_meta(const at::Tensor &x, double, bool, std::optional<at::ScalarType> dtype) {
  return result(x, checked_dtype(kSumSquaresRowsOp, x, dtype));
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("_moment_rows", &redux_shim::moment_rows_cpu);
  m.impl("_sum_squares_rows", &redux_shim::sum_squares_rows_cpu);
  m.impl("_sum_squares_each", &redux_shim::sum_squares_each_cpu);
}
TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("_moment_rows", &redux_shim::moment_rows_meta);
  m.impl("_sum_squares_rows", &redux_shim::sum_squares_rows_meta);
  m.impl("_sum_squares_each", &redux_shim::sum_squares_each_meta);
}
