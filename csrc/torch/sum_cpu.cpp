// CPU implementation of redux::sum: plan, then fan fixed-size work items out
// with at::parallel_for. Work items and the order their partials combine in
// are fixed by the shape, so the result does not depend on the thread count.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <vector>

#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

// Work pieces per parallel_for call: `pieces` > 0 forces their number.
int64_t grain_for(int64_t items, int64_t min_grain, int64_t pieces) {
  if (pieces > 0) return std::max<int64_t>(1, (items + pieces - 1) / pieces);
  return std::max<int64_t>(1, min_grain);
}

void run_rows(const SumPlan &p, const char *x, void *y, int64_t pieces) {
  const int64_t outer = p.shape.outer, n = p.shape.n;
  const int64_t elem = p.input.element_size();
  if (n <= REDUX_CPU_CHUNK) {
    at::parallel_for(0, outer, grain_for(outer, REDUX_CPU_CHUNK / std::max<int64_t>(n, 1), pieces),
                     [&](int64_t b, int64_t e) {
                       check_status(kOp, redux_cpu_sum_rows(x, y, b, e, n, p.in_t, p.out_t));
                     });
    return;
  }
  // Long rows: fixed chunks of REDUX_CPU_CHUNK, partials combined in order.
  const int64_t chunks = (n + REDUX_CPU_CHUNK - 1) / REDUX_CPU_CHUNK;
  std::vector<redux_cpu_acc> accs(outer * chunks);
  at::parallel_for(0, outer * chunks, grain_for(outer * chunks, 1, pieces), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t row = k / chunks, c = k % chunks;
      const int64_t begin = c * REDUX_CPU_CHUNK;
      const int64_t count = std::min<int64_t>(REDUX_CPU_CHUNK, n - begin);
      check_status(kOp, redux_cpu_sum_partial(x + (row * n + begin) * elem, count, p.in_t, p.out_t, &accs[k]));
    }
  });
  at::parallel_for(0, outer, grain_for(outer, 64, pieces), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row)
      check_status(kOp, redux_cpu_sum_combine(&accs[row * chunks], chunks, p.out_t, y, row));
  });
}

void run_cols(const SumPlan &p, const char *x, void *y, int64_t pieces) {
  const int64_t blocks = (p.shape.inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK;
  const int64_t items = p.shape.outer * blocks;
  const int64_t per_item = p.shape.n * std::min<int64_t>(p.shape.inner, REDUX_CPU_COL_BLOCK);
  at::parallel_for(0, items, grain_for(items, REDUX_CPU_CHUNK / std::max<int64_t>(per_item, 1), pieces),
                   [&](int64_t b, int64_t e) {
                     check_status(kOp, redux_cpu_sum_cols(x, y, p.shape, b, e, p.in_t, p.out_t));
                   });
}

at::Tensor sum_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, int64_t pieces) {
  TORCH_CHECK(pieces >= 0, kOp, ": argument 'grid' must be >= 0, got ", pieces);
  const SumPlan plan = make_sum_plan(kOp, self, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;
  const char *x = static_cast<const char *>(plan.input.const_data_ptr());
  void *y = kernel_out.mutable_data_ptr();
  if (plan.family == REDUX_COLS) run_cols(plan, x, y, pieces);
  else run_rows(plan, x, y, pieces);
  finish_outputs(plan, result, kernel_out);
  return result;
}

at::Tensor sum_cpu(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<at::ScalarType> dtype) {
  return sum_impl(self, dim, keepdim, dtype, 0);
}

at::Tensor sum_grid_cpu(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<at::ScalarType> dtype, int64_t grid) {
  return sum_impl(self, dim, keepdim, dtype, grid);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("sum", &redux_shim::sum_cpu);
  m.impl("_sum_grid", &redux_shim::sum_grid_cpu);
}
