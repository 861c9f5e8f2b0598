// Sharded sums, the backend-independent part and the CPU kernels' ops:
//   _sum_sharding(x, global_sizes, dim, dtype) -> (view, layout)
//   _sum_unit_partials(view, layout, unit_begin, unit_end) -> partials (uint8)
//   _sum_from_partials(partials, layout) -> outputs [outer held, inner]
// redux/distributed.py cuts, gathers and finishes with them (see redux.h,
// "Sharded sums"). Index arithmetic only: the C kernels add.
#include <ATen/Parallel.h>
#include <c10/util/safe_numerics.h>
#include <torch/library.h>

#include "sharded.h"

namespace redux_shim {

namespace {
constexpr const char *kShardOp = "redux._sum_sharding";
}

ShardLayout shard_layout(const at::Tensor &x, at::IntArrayRef global_sizes, at::OptionalIntArrayRef dim,
                         std::optional<at::ScalarType> dtype, const ShardBackend &backend) {
  TORCH_CHECK(x.dim() >= 1, kShardOp, ": argument 'x' must have a dim 0 to be sharded on");
  TORCH_CHECK((int64_t)global_sizes.size() == x.dim(), kShardOp, ": argument 'global_sizes' has ",
              global_sizes.size(), " dims, the shard ", x.dim());
  for (int64_t d = 1; d < x.dim(); ++d)
    TORCH_CHECK(global_sizes[d] == x.size(d), kShardOp, ": the shard's size ", x.size(d), " of dim ", d,
                " differs from the whole tensor's ", global_sizes[d], " (only dim 0 may be sharded)");
  TORCH_CHECK(x.size(0) <= global_sizes[0], kShardOp, ": the shard has more of dim 0 than the whole tensor");
  const at::Tensor whole = at::empty(global_sizes, x.options().device(at::kMeta));
  const SumPlan plan = plan_sum_any_device("redux.distributed.sum", whole, dim, false, dtype);
  ShardLayout out{std::vector<int64_t>(kLayoutFields, 0), plan.input_perm};
  std::vector<int64_t> &layout = out.fields;
  layout[kInType] = plan.in_t;
  layout[kOutType] = plan.out_t;
  layout[kRole] = sum_spec(kShardOp, whole, dim, dtype).reduced[0] ? 0 : 1;
  if (plan.trivial) {
    layout[kFamily] = -1;
    return out;
  }
  const redux_shape s = plan.shape;
  layout[kFamily] = plan.family;
  layout[kOuter] = s.outer;
  layout[kN] = s.n;
  layout[kInner] = s.inner;
  layout[kUnit] = backend.unit(plan.family, s, plan.in_t);
  layout[kUnits] = (s.n + layout[kUnit] - 1) / layout[kUnit];
  layout[kAccBytes] = (int64_t)backend.acc_bytes(plan.in_t, plan.out_t);
  const int64_t role_size = layout[kRole] == 0 ? s.n : s.outer;
  TORCH_CHECK(role_size % global_sizes[0] == 0, kShardOp, ": internal: dim 0 does not lead its group");
  layout[kPerIndex] = role_size / global_sizes[0];
  return out;
}

at::Tensor shard_view(const at::Tensor &x, const ShardLayout &layout) {
  const std::vector<int64_t> &f = layout.fields;
  if (f[kFamily] < 0) return x;
  // The whole tensor's permutation, then the shard's dim-0 rows become rows
  // of n (role 0) or slices of outer (role 1).
  at::Tensor v = x.to(scalar_type_of((redux_dtype)f[kInType]));
  if (!layout.perm.empty()) v = v.permute(layout.perm);
  const int64_t held = x.size(0) * f[kPerIndex];
  return f[kRole] == 0 ? v.contiguous().reshape({f[kOuter], held, f[kInner]})
                       : v.contiguous().reshape({held, f[kN], f[kInner]});
}

std::tuple<at::Tensor, std::vector<int64_t>> sharding_impl(const at::Tensor &x, at::IntArrayRef global_sizes,
                                                            at::OptionalIntArrayRef dim,
                                                            std::optional<at::ScalarType> dtype,
                                                            const ShardBackend &backend) {
  ShardLayout layout = shard_layout(x, global_sizes, dim, dtype, backend);
  at::Tensor view = shard_view(x, layout);
  return {view, std::move(layout.fields)};
}

redux_shape checked_layout(const char *op, at::IntArrayRef layout, const ShardBackend &backend) {
  const char *what = ": argument 'layout' is not the layout of a sum of several units (from _sum_sharding): ";
  TORCH_CHECK((int64_t)layout.size() == kLayoutFields, op, what, "it has ", layout.size(), " fields, not ",
              (int64_t)kLayoutFields);
  const int64_t family = layout[kFamily], in = layout[kInType], out = layout[kOutType];
  TORCH_CHECK(family == REDUX_FULL || family == REDUX_ROWS || family == REDUX_COLS, op, what, "family ", family);
  TORCH_CHECK(in >= REDUX_F32 && in <= REDUX_I64 && out >= REDUX_F32 && out <= REDUX_I64 &&
                  redux_dtype_pair_supported((redux_dtype)in, (redux_dtype)out),
              op, what, "dtypes ", in, " -> ", out);
  const redux_shape s{layout[kOuter], layout[kN], layout[kInner]};
  int64_t elements = 0;
  TORCH_CHECK(s.outer >= 1 && s.n >= 1 && s.inner >= 1 && !c10::mul_overflows(s.outer, s.n, &elements) &&
                  !c10::mul_overflows(elements, s.inner, &elements),
              op, what, "shape [", s.outer, ", ", s.n, ", ", s.inner, "]");
  TORCH_CHECK((family != REDUX_FULL || (s.outer == 1 && s.inner == 1)) && (family != REDUX_ROWS || s.inner == 1),
              op, what, "shape [", s.outer, ", ", s.n, ", ", s.inner, "] for family ", family);
  // The tree's fields are the backend's own, never the caller's.
  const int64_t unit = backend.unit((redux_family)family, s, (redux_dtype)in);
  TORCH_CHECK(layout[kUnit] == unit && layout[kUnits] == (s.n + unit - 1) / unit && layout[kUnits] >= 2, op, what,
              "units of ", layout[kUnit], " x ", layout[kUnits], " (this backend's tree: ", unit, " x ",
              (s.n + unit - 1) / unit, ", and a sum of one unit has no partials)");
  TORCH_CHECK(layout[kAccBytes] == (int64_t)backend.acc_bytes((redux_dtype)in, (redux_dtype)out), op, what,
              "partials of ", layout[kAccBytes], " bytes");
  return s;
}

redux_shape checked_view(const char *op, const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1,
                         const ShardBackend &backend) {
  const redux_shape s = checked_layout(op, layout, backend);
  const at::ScalarType in = scalar_type_of((redux_dtype)layout[kInType]);
  TORCH_CHECK(u0 >= 0 && u0 < u1 && u1 <= layout[kUnits], op, ": units [", u0, ", ", u1,
              ") are not a range of the problem's ", layout[kUnits]);
  const int64_t rows = std::min(u1 * layout[kUnit], s.n) - u0 * layout[kUnit];
  TORCH_CHECK(view.dim() == 3 && view.size(1) == rows && view.size(2) == s.inner && view.size(0) >= 1 &&
                  view.size(0) <= s.outer && view.is_contiguous() && view.scalar_type() == in,
              op, ": argument 'view' must be a contiguous [outer, ", rows, ", ", s.inner, "] ", in,
              " tensor, got ", view.sizes(), " ", view.scalar_type());
  return s;
}

redux_shape checked_partials(const char *op, const at::Tensor &partials, at::IntArrayRef layout,
                             const ShardBackend &backend) {
  const redux_shape s = checked_layout(op, layout, backend);
  TORCH_CHECK(partials.dim() == 4 && partials.size(0) >= 1 && partials.size(0) <= s.outer &&
                  partials.size(1) == layout[kUnits] && partials.size(2) == s.inner &&
                  partials.size(3) == layout[kAccBytes] && partials.scalar_type() == at::kByte &&
                  partials.is_contiguous(),
              op, ": argument 'partials' must be contiguous uint8 [outer, ", layout[kUnits], ", ", s.inner, ", ",
              layout[kAccBytes], "], got ", partials.sizes());
  return s;
}

namespace {
int64_t cpu_unit(redux_family family, redux_shape s, redux_dtype) { return redux_cpu_sum_unit(family, s); }
size_t cpu_acc_bytes(redux_dtype, redux_dtype) { return sizeof(redux_cpu_acc); }
}  // namespace

const ShardBackend kCpuTree{cpu_unit, cpu_acc_bytes};

namespace {

std::tuple<at::Tensor, std::vector<int64_t>> sharding_cpu(const at::Tensor &x, at::IntArrayRef global_sizes,
                                                          at::OptionalIntArrayRef dim,
                                                          std::optional<at::ScalarType> dtype) {
  return sharding_impl(x, global_sizes, dim, dtype, kCpuTree);
}

constexpr const char *kPartialsOp = "redux._sum_unit_partials";
constexpr const char *kFinishOp = "redux._sum_from_partials";

}  // namespace

at::Tensor unit_partials_cpu(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1) {
  const redux_shape s = checked_view(kPartialsOp, view, layout, u0, u1, kCpuTree);
  const auto family = (redux_family)layout[kFamily];
  const auto in = (redux_dtype)layout[kInType], out = (redux_dtype)layout[kOutType];
  const int64_t k = u1 - u0, outer = view.size(0);
  at::Tensor partials = at::empty({outer, k, s.inner, (int64_t)sizeof(redux_cpu_acc)}, view.options().dtype(at::kByte));
  auto *acc = reinterpret_cast<redux_cpu_acc *>(partials.mutable_data_ptr());
  const int64_t items = outer * k * (family == REDUX_COLS ? (s.inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK : 1);
  at::parallel_for(0, items, 1, [&](int64_t b, int64_t e) {
    check_status(kPartialsOp, redux_cpu_sum_unit_partials(family, s, outer, view.const_data_ptr(), u0, u1, b, e, in,
                                                          out, acc));
  });
  return partials;
}

at::Tensor from_partials_cpu(const at::Tensor &partials, at::IntArrayRef layout) {
  const redux_shape s = checked_partials(kFinishOp, partials, layout, kCpuTree);
  const int64_t outer = partials.size(0);
  const auto out = (redux_dtype)layout[kOutType];
  at::Tensor y = at::empty({outer, s.inner}, partials.options().dtype(scalar_type_of(out)));
  const auto *acc = reinterpret_cast<const redux_cpu_acc *>(partials.const_data_ptr());
  at::parallel_for(0, outer * s.inner, 64, [&](int64_t b, int64_t e) {
    check_status(kFinishOp, redux_cpu_sum_from_partials((redux_family)layout[kFamily], s, outer, acc,
                                                        y.mutable_data_ptr(), b, e, out));
  });
  return y;
}

}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("_sum_sharding", &redux_shim::sharding_cpu);
  m.impl("_sum_unit_partials", &redux_shim::unit_partials_cpu);
  m.impl("_sum_from_partials", &redux_shim::from_partials_cpu);
}
