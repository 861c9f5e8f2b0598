// When a composite takes a row kernel (row_kernels.h).
#include "row_kernels.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "plan.h"

namespace redux_shim {

bool row_kernel_reads(at::ScalarType t) {
  return std::find(std::begin(kRowKernelDtypes), std::end(kRowKernelDtypes), t) != std::end(kRowKernelDtypes);
}

namespace {

// A dtype the row and column kernels read, on a device they run on.
bool kernels_take(const at::Tensor &x) {
  const c10::DeviceType d = x.device().type();
  return row_kernel_reads(x.scalar_type()) &&
         (d == c10::DeviceType::CPU || d == c10::DeviceType::CUDA || d == c10::DeviceType::Meta);
}

// What both row paths need: the trailing dims in order, a dtype the row
// kernels read, a device they run on; n, the reduced elements.
bool row_layout(const at::Tensor &x, const std::vector<int64_t> &reduced, c10::SymInt &n) {
  const int64_t k = (int64_t)reduced.size();
  if (x.dim() == 0 || k == 0 || k > x.dim()) return false;
  for (int64_t i = 0; i < k; ++i)
    if (reduced[i] != x.dim() - k + i) return false;  // the trailing dims, in order
  if (!kernels_take(x)) return false;
  n = 1;
  for (int64_t dim : reduced) n = n * x.sym_size(dim);
  return true;
}

}  // namespace

bool takes_row_kernel(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  c10::SymInt n;
  if (!row_layout(x, reduced, n)) return false;
  if (!(n.sym_ge(1) & n.sym_le(kRowKernelMaxN)).guard_bool(__FILE__, __LINE__)) return false;
  return !gradient_recorded(x);
}

bool takes_row_op(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  c10::SymInt n;
  if (!row_layout(x, reduced, n)) return false;
  if (!n.sym_ge(1).guard_bool(__FILE__, __LINE__)) return false;
  return !gradient_recorded(x);
}

at::Tensor row_pieces_buffer(const at::Tensor &like, int64_t rows, int64_t n, int64_t per_piece) {
  return at::empty({rows * redux_row_pieces(n) * per_piece}, like.options().dtype(at::kDouble));
}

at::Tensor as_rows(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  return reduced.size() == 1 ? x : x.flatten(x.dim() - (int64_t)reduced.size());
}

at::Tensor reduced_shape(const at::Tensor &r, const std::vector<int64_t> &reduced, bool keepdim) {
  if (!keepdim) return r;
  at::Tensor kept = r;
  for (size_t i = 0; i < reduced.size(); ++i) kept = kept.unsqueeze(-1);
  return kept;
}

namespace {

// x's sizes before, in and after the reduced run of dims.
std::array<c10::SymInt, 3> cols_sizes(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  std::array<c10::SymInt, 3> s{1, 1, 1};
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int part = d < reduced.front() ? 0 : d <= reduced.back() ? 1 : 2;
    s[part] = s[part] * x.sym_size(d);
  }
  return s;
}

}  // namespace

bool takes_col_op(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  if (reduced.empty() || reduced.back() >= x.dim() - 1) return false;
  for (size_t i = 1; i < reduced.size(); ++i)
    if (reduced[i] != reduced[i - 1] + 1) return false;
  if (!kernels_take(x)) return false;
  if (!x.sym_numel().sym_ge(1).guard_bool(__FILE__, __LINE__)) return false;
  return !gradient_recorded(x);
}

at::Tensor as_cols(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  const auto s = cols_sizes(x, reduced);
  return x.reshape_symint(s);
}

at::Tensor as_col_centers(const at::Tensor &t, const at::Tensor &x, const std::vector<int64_t> &reduced) {
  const auto s = cols_sizes(x, reduced);
  return t.reshape_symint({s[0], s[2]});
}

at::Tensor cols_reduced_shape(const at::Tensor &r, const at::Tensor &x, const std::vector<int64_t> &reduced,
                              bool keepdim) {
  std::vector<c10::SymInt> shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool gone = d >= reduced.front() && d <= reduced.back();
    if (!gone) shape.push_back(x.sym_size(d));
    else if (keepdim) shape.push_back(1);
  }
  return r.view_symint(shape);
}

void run_cpu_rows(const char *op, int64_t rows, int64_t n,
                  const std::function<redux_status(int64_t begin, int64_t end)> &kernel) {
  std::atomic<int> failed{REDUX_OK};
  // a row's cost is its length
  at::parallel_for(0, rows, std::max<int64_t>(1, kCpuPieceElements / n), [&](int64_t begin, int64_t end) {
    const redux_status s = kernel(begin, end);
    if (s != REDUX_OK) failed.store(s);
  });
  check_status(op, (redux_status)failed.load());
}

at::Tensor shifted_wide(const at::Tensor &x, const at::Tensor &shift) {
  if (x.is_cuda() || x.scalar_type() == shift.scalar_type()) return x.sub(shift);
  return x.to(shift.scalar_type(), /*non_blocking=*/false, /*copy=*/true).sub_(shift);
}

}  // namespace redux_shim
