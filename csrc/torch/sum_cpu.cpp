// CPU implementation of redux::sum and redux::_sum_of (a mapped reduction
// on the same trees): the shim's plan, then the C plan's work
// items fanned out with at::parallel_for. What each item adds and the order
// partials combine in are decided by the C kernels (redux_cpu_sum_plan), so
// the result does not depend on the thread count.
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "pieces.h"
#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

// Items per parallel_for piece: `pieces` > 0 forces the number of pieces
// (scheduling only: the C plan fixes what each item adds).
int64_t grain_for(int64_t items, int64_t min_grain, int64_t pieces) {
  if (pieces > 0) return std::max<int64_t>(1, (items + pieces - 1) / pieces);
  return std::max<int64_t>(1, min_grain);
}

// Fans the C plan's work items, then its finish items, out to torch's threads.
void run_plan(const SumPlan &p, const void *x, void *y, int64_t pieces) {
  const redux_cpu_plan cp = redux_cpu_reduce_plan(p.reduction, p.family, p.shape, p.in_t);
  std::vector<redux_cpu_acc> partials(cp.partials);
  // Only a trial call reads the clock (redux_cpu_prefetch_report).
  const auto start = cp.prefetch_trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  at::parallel_for(0, cp.items, grain_for(cp.items, cp.item_grain, pieces), [&](int64_t b, int64_t e) {
    check_status(kOp, redux_cpu_sum_items(&cp, p.family, p.shape, x, y, partials.data(), b, e, p.in_t, p.out_t));
  });
  if (cp.prefetch_trial) {  // one of the calls that measure the prefetch form
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    redux_cpu_prefetch_report(&cp, p.out_t, static_cast<int64_t>(p.input.nbytes()), ns.count());
  }
  if (cp.finishes == 0) return;
  at::parallel_for(0, cp.finishes, grain_for(cp.finishes, cp.finish_grain, pieces), [&](int64_t b, int64_t e) {
    check_status(kOp, redux_cpu_sum_finish(&cp, p.family, p.shape, partials.data(), y, b, e, p.out_t));
  });
}

at::Tensor sum_impl(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, int64_t pieces) {
  TORCH_CHECK(pieces >= 0, kOp, ": argument 'grid' must be >= 0, got ", pieces);
  const SumPlan plan = plan_sum(kOp, self, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;
  if (plan.pieces) {
    sum_in_pieces(plan, result, PieceBackend{kCpuTree, sum_impl, unit_partials_cpu, from_partials_cpu}, pieces);
    return result;
  }
  run_plan(plan, plan.input.const_data_ptr(), kernel_out.mutable_data_ptr(), pieces);
  finish_outputs(plan, result, kernel_out);
  return result;
}

at::Tensor sum_of_cpu(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, c10::string_view of,
                      std::optional<at::ScalarType> dtype, int64_t pieces) {
  TORCH_CHECK(pieces >= 0, kSumOfOp, ": argument 'grid' must be >= 0, got ", pieces);
  const SumPlan plan = plan_sum_of(self, of, dim, keepdim, dtype);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return result;
  run_plan(plan, plan.input.const_data_ptr(), kernel_out.mutable_data_ptr(), pieces);
  finish_outputs(plan, result, kernel_out);
  return result;
}

// Each tensor's sum into its slot of one result: the plan and the bits of
// its own _sum_of call, one op call for the list.
at::Tensor sum_of_each_cpu(at::TensorList xs, c10::string_view of, at::ScalarType dtype) {
  const std::vector<SumPlan> plans = plan_sum_of_each(xs, of, dtype);
  at::Tensor out = at::empty({(int64_t)plans.size()}, xs[0].options().dtype(dtype));
  for (size_t i = 0; i < plans.size(); ++i) {
    at::Tensor slot = out.select(0, (int64_t)i);
    if (plans[i].trivial) slot.zero_();  // no elements: +0, as _sum_of's
    else run_plan(plans[i], plans[i].input.const_data_ptr(), slot.mutable_data_ptr(), 0);
  }
  return out;
}

at::Tensor one_pass_mean_cpu(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, int64_t pieces) {
  TORCH_CHECK(pieces >= 0, "redux._one_pass_mean: argument 'grid' must be >= 0, got ", pieces);
  const SumPlan plan = plan_one_pass_mean(self, dim, keepdim);
  auto [result, kernel_out] = allocate_outputs(plan);
  if (plan.trivial) return self.numel() == 0 ? result.fill_(NAN) : result;  // 0 / 0, as torch.mean
  run_plan(plan, plan.input.const_data_ptr(), kernel_out.mutable_data_ptr(), pieces);
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
  m.impl("_sum_of", &redux_shim::sum_of_cpu);
  m.impl("_sum_of_each", &redux_shim::sum_of_each_cpu);
  m.impl("_one_pass_mean", &redux_shim::one_pass_mean_cpu);
}
