#include "plan.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

namespace redux_shim {

std::optional<redux_dtype> to_redux(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return REDUX_F32;
    case at::kDouble: return REDUX_F64;
    case at::kHalf: return REDUX_F16;
    case at::kBFloat16: return REDUX_BF16;
    case at::kLong: return REDUX_I64;
    default: return std::nullopt;
  }
}

bool is_supported_input(at::ScalarType t) {
  return std::find(std::begin(kReadDtypes), std::end(kReadDtypes), t) != std::end(kReadDtypes);
}

std::vector<int64_t> reduced_dims(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim) {
  const int64_t ndim = self.dim();
  std::vector<int64_t> dims;
  if (!dim.has_value() || dim->empty()) {
    for (int64_t d = 0; d < ndim; ++d) dims.push_back(d);
    return dims;
  }
  const int64_t bound = std::max<int64_t>(ndim, 1);  // a 0-dim tensor accepts dim 0 and -1
  std::vector<bool> seen(bound, false);
  for (int64_t d : *dim) {
    TORCH_CHECK_INDEX(d >= -bound && d < bound, op, ": argument 'dim' has ", d, ", out of range for a tensor of ", ndim,
                " dimension(s) (expected in [", -bound, ", ", bound - 1, "])");
    const int64_t w = d < 0 ? d + bound : d;
    TORCH_CHECK(!seen[w], op, ": argument 'dim' lists dimension ", w, " more than once");
    seen[w] = true;
    if (ndim > 0) dims.push_back(w);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

SumSpec sum_spec(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                 std::optional<at::ScalarType> dtype) {
  TORCH_CHECK(self.defined(), op, ": argument 'self' is an undefined tensor");
  TORCH_CHECK(self.layout() == at::kStrided, op, ": argument 'self' must be a dense (strided) tensor, got layout ",
              self.layout());
  TORCH_CHECK(is_supported_input(self.scalar_type()), op, ": argument 'self' has dtype ",
              self.scalar_type(),
              ", which is not supported (expected float32, float64, float16, bfloat16, an integer "
              "type or bool)");
  SumSpec spec;
  // torch.sum's dtype rule: an explicit dtype wins; integers and bool sum
  // to int64; floating types keep their dtype.
  if (dtype.has_value()) {
    TORCH_CHECK(to_redux(*dtype).has_value(), op, ": argument 'dtype' is ", *dtype,
                ", which is not supported (expected float32, float64, float16, bfloat16 or int64)");
    spec.out_dtype = *dtype;
  } else {
    spec.out_dtype = at::isIntegralType(self.scalar_type(), true) ? at::kLong : self.scalar_type();
  }
  spec.reduced.assign(std::max<int64_t>(self.dim(), 0), false);
  for (int64_t d : reduced_dims(op, self, dim)) spec.reduced[d] = true;
  return spec;
}

namespace {

// The kernel writes the kept dims in memory order (`order`: dims of size > 1
// by decreasing stride); when that is not their logical order, says how to
// view its buffer to copy it into the result.
void set_output_layout(const at::Tensor &x, const std::vector<int64_t> &order, const std::vector<bool> &reduced,
                       SumPlan &plan) {
  std::vector<int64_t> kept;
  for (int64_t d : order)
    if (!reduced[d]) kept.push_back(d);
  if (std::is_sorted(kept.begin(), kept.end())) return;
  plan.permuted_output = true;
  for (int64_t d : kept) plan.kernel_shape.push_back(x.size(d));
  std::vector<int64_t> pos(kept.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::sort(pos.begin(), pos.end(), [&](int64_t a, int64_t b) { return kept[a] < kept[b]; });
  plan.kernel_perm = pos;
}

// Collapses a dense x to the family, 3-D shape and output layout of `plan`
// (sets family, shape, permuted_output, kernel_shape/perm); returns what the
// kernel reads: x itself, or a permuted copy when kept and reduced dims
// interleave in memory.
at::Tensor collapse_to_family(at::Tensor x, const std::vector<bool> &reduced, SumPlan &plan) {
  const int64_t ndim = x.dim();
  // Dims of size > 1 in memory order (decreasing stride).
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; ++d)
    if (x.size(d) > 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return x.stride(a) > x.stride(b); });

  // Merge neighbours with the same role: dense, so they are adjacent in memory.
  struct Group { bool reduced; int64_t size; };
  std::vector<Group> groups;
  for (int64_t d : order) {
    if (!groups.empty() && groups.back().reduced == reduced[d]) groups.back().size *= x.size(d);
    else groups.push_back({(bool)reduced[d], x.size(d)});
  }

  // A reduction that keeps dims (even all of size 1) is a rows problem: one
  // row x[i:i+1] of a batch then takes the tree its row takes in the batch.
  const bool keeps_dims = std::find(reduced.begin(), reduced.end(), false) != reduced.end();
  const size_t g = groups.size();
  if (g == 0) {
    plan.family = REDUX_FULL; plan.shape = {1, 1, 1};
  } else if (g == 1 && groups[0].reduced) {
    plan.family = keeps_dims ? REDUX_ROWS : REDUX_FULL; plan.shape = {1, groups[0].size, 1};
  } else if (g == 1) {
    plan.family = REDUX_ROWS; plan.shape = {groups[0].size, 1, 1};
  } else if (g == 2 && !groups[0].reduced) {
    plan.family = REDUX_ROWS; plan.shape = {groups[0].size, groups[1].size, 1};
  } else if (g == 2) {
    plan.family = REDUX_COLS; plan.shape = {1, groups[0].size, groups[1].size};
  } else if (g == 3 && !groups[0].reduced) {
    plan.family = REDUX_COLS; plan.shape = {groups[0].size, groups[1].size, groups[2].size};
  } else {
    // Interleaved kept and reduced groups: gather kept dims first, then
    // reduced ones (a copy by torch), and reduce rows.
    std::vector<int64_t> perm;
    int64_t outer = 1, n = 1;
    for (int64_t d = 0; d < ndim; ++d)
      if (!reduced[d]) { perm.push_back(d); outer *= x.size(d); }
    for (int64_t d = 0; d < ndim; ++d)
      if (reduced[d]) { perm.push_back(d); n *= x.size(d); }
    plan.family = REDUX_ROWS;
    plan.shape = {outer, n, 1};
    plan.input_perm = perm;
    return x.permute(perm).contiguous();
  }

  set_output_layout(x, order, reduced, plan);
  return x;
}

}  // namespace

at::ScalarType scalar_type_of(redux_dtype t) {
  switch (t) {
    case REDUX_F32: return at::kFloat;
    case REDUX_F64: return at::kDouble;
    case REDUX_F16: return at::kHalf;
    case REDUX_BF16: return at::kBFloat16;
    case REDUX_I64: return at::kLong;
  }
  TORCH_CHECK(false, "redux: unknown dtype code ", (int)t);
}

namespace {
// The plan once the arguments are checked (the spec): one sum_spec per call.
SumPlan plan_from_spec(const SumSpec &spec, const at::Tensor &self, bool keepdim) {
  SumPlan plan;
  plan.out_dtype = spec.out_dtype;
  plan.result_shape = result_shape<int64_t>(self.sizes(), spec.reduced, keepdim);

  // The kernel reads one of its own dtypes; other inputs are converted by
  // torch first (this is torch.sum's own rule: the sum runs in `dtype`).
  const auto self_t = to_redux(self.scalar_type());
  const auto out_kernel_t = to_redux(plan.out_dtype);  // sum_spec admits only dtypes that have one
  TORCH_CHECK(out_kernel_t.has_value(), "redux.sum: internal: no kernel dtype for the result dtype ", plan.out_dtype);
  const redux_dtype out_t = *out_kernel_t;
  const bool convert = !self_t.has_value() || !redux_dtype_pair_supported(*self_t, out_t);
  plan.in_t = convert ? out_t : *self_t;
  plan.out_t = out_t;

  const int64_t out_numel = std::accumulate(plan.result_shape.begin(), plan.result_shape.end(),
                                            int64_t{1}, std::multiplies<int64_t>());
  if (self.numel() == 0 || out_numel == 0) {
    plan.trivial = true;  // sums of nothing are zero; or there is no output at all
    plan.input = self;
    return plan;
  }
  // Dense layouts (contiguous, transposed, channels_last, ...) are read in
  // memory order without a copy. Any other (expanded, overlapping, stepped)
  // is read in pieces (pieces.h) and planned as its dense copy would be.
  if (!self.is_non_overlapping_and_dense()) {
    plan.pieces = true;
    plan.input = self;
    plan.reduced = spec.reduced;
    const at::Tensor dense = at::empty(self.sizes(), self.options().dtype(scalar_type_of(plan.in_t)).device(at::kMeta));
    collapse_to_family(dense, spec.reduced, plan);
    return plan;
  }
  const at::Tensor x = convert ? self.to(plan.out_dtype) : self;
  plan.input = collapse_to_family(x, spec.reduced, plan);
  return plan;
}
}  // namespace

SumPlan plan_sum(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                 bool keepdim, std::optional<at::ScalarType> dtype) {
  const SumSpec spec = sum_spec(op, self, dim, dtype);  // argument errors first, as torch.sum
  TORCH_CHECK(self.device().is_cpu() || self.device().is_cuda(), op,
              ": argument 'self' must be on a CPU or CUDA device, got ", self.device());
  return plan_from_spec(spec, self, keepdim);
}

SumPlan plan_sum_any_device(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                            bool keepdim, std::optional<at::ScalarType> dtype) {
  return plan_from_spec(sum_spec(op, self, dim, dtype), self, keepdim);
}

SumOfSpec sum_of_spec(const at::Tensor &self, c10::string_view of, at::OptionalIntArrayRef dim,
                      std::optional<at::ScalarType> dtype, const char *op) {
  std::optional<redux_reduction> r;
  std::string names;
#define REDUX_NAMED(VALUE, NAME)                  \
  if (of == NAME) r = VALUE;                      \
  names += names.empty() ? "'" NAME "'" : ", '" NAME "'";
  REDUX_MAPPED_REDUCTIONS(REDUX_NAMED)
#undef REDUX_NAMED
  TORCH_CHECK(r.has_value(), op, ": argument 'of' is '", of, "'; expected one of ", names);
  TORCH_CHECK(self.defined(), op, ": argument 'self' is an undefined tensor");
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(at::isFloatingType(t) && to_redux(t).has_value(), op, ": argument 'self' has dtype ", t,
              "; expected float32, float64, float16 or bfloat16");
  SumSpec spec = sum_spec(op, self, dim, dtype);
  // The kernel reads self's dtype, or the result's where the pair has no kernel (plan_from_spec).
  const redux_dtype out_t = *to_redux(spec.out_dtype);
  const redux_dtype in_t = redux_dtype_pair_supported(*to_redux(t), out_t) ? *to_redux(t) : out_t;
  TORCH_CHECK(redux_reduction_supported(*r, in_t, out_t), op, ": argument 'dtype' is ", spec.out_dtype,
              " for a ", t, " self; the sum of '", of,
              "' accumulates in fp64: dtype=torch.float64 for float32 and float64, torch.float32 for float16 and "
              "bfloat16");
  return {*r, std::move(spec)};
}

SumPlan plan_sum_of(const at::Tensor &self, c10::string_view of, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype) {
  const SumOfSpec s = sum_of_spec(self, of, dim, dtype);
  TORCH_CHECK(self.device().is_cpu() || self.device().is_cuda(), kSumOfOp,
              ": argument 'self' must be on a CPU or CUDA device, got ", self.device());
  // The pieces path runs the sharded sums, which are sums: read a dense copy.
  const at::Tensor x = self.is_non_overlapping_and_dense() ? self : self.contiguous();
  SumPlan plan = plan_from_spec(s.spec, x, keepdim);
  plan.reduction = s.reduction;
  return plan;
}

void check_sum_of_each(at::TensorList xs, c10::string_view of, at::ScalarType dtype) {
  constexpr const char *op = "redux._sum_of_each";
  TORCH_CHECK(!xs.empty(), op, ": argument 'xs' is empty");
  for (size_t i = 0; i < xs.size(); ++i) {
    const at::Tensor &x = xs[i];
    TORCH_CHECK(x.defined(), op, ": argument 'xs[", i, "]' is an undefined tensor");
    TORCH_CHECK(x.device() == xs[0].device(), op, ": argument 'xs[", i, "]' is on ", x.device(), " where xs[0] is on ",
                xs[0].device());
    TORCH_CHECK(at::isFloatingType(x.scalar_type()) && to_redux(x.scalar_type()).has_value(), op, ": argument 'xs[", i,
                "]' has dtype ", x.scalar_type(), "; expected float32, float64, float16 or bfloat16");
    sum_of_spec(x, of, std::nullopt, dtype, op);  // of and the (dtype, result) pair
  }
}

std::vector<SumPlan> plan_sum_of_each(at::TensorList xs, c10::string_view of, at::ScalarType dtype) {
  check_sum_of_each(xs, of, dtype);
  std::vector<SumPlan> plans;
  plans.reserve(xs.size());
  for (const at::Tensor &x : xs) plans.push_back(plan_sum_of(x, of, std::nullopt, false, dtype));
  return plans;
}

namespace {
constexpr const char *kOnePassMean = "redux._one_pass_mean";
}  // namespace

SumSpec one_pass_mean_spec(const at::Tensor &self, at::OptionalIntArrayRef dim) {
  TORCH_CHECK(self.defined(), kOnePassMean, ": argument 'self' is an undefined tensor");
  const at::ScalarType t = self.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kDouble, kOnePassMean, ": argument 'self' has dtype ", t,
              "; expected float32 or float64 (REDUX_MEAN_PAIRS)");
  return sum_spec(kOnePassMean, self, dim, std::nullopt);
}

SumPlan plan_one_pass_mean(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim) {
  const SumSpec spec = one_pass_mean_spec(self, dim);
  TORCH_CHECK(self.device().is_cpu() || self.device().is_cuda(), kOnePassMean,
              ": argument 'self' must be on a CPU or CUDA device, got ", self.device());
  const at::Tensor x = self.is_non_overlapping_and_dense() ? self : self.contiguous();
  SumPlan plan = plan_from_spec(spec, x, keepdim);
  plan.reduction = REDUX_MEAN_OF_VALUES;
  return plan;
}

std::pair<at::Tensor, at::Tensor> allocate_outputs(const SumPlan &plan) {
  auto opts = plan.input.options().dtype(plan.out_dtype);
  at::Tensor result = plan.trivial ? at::zeros(plan.result_shape, opts) : at::empty(plan.result_shape, opts);
  if (!plan.permuted_output) return {result, result};
  return {result, at::empty(plan.kernel_shape, opts)};
}

void finish_outputs(const SumPlan &plan, at::Tensor &result, const at::Tensor &kernel_out) {
  if (!plan.permuted_output) return;
  // result viewed without its keepdim 1s has the logical kept-dim order
  at::Tensor logical = kernel_out.permute(plan.kernel_perm);
  result.view(logical.sizes()).copy_(logical);
}

void check_status(const char *op, redux_status status) {
  TORCH_CHECK(status == REDUX_OK, op, ": kernel failed: ", redux_status_string(status));
}

const c10::TypedOperatorHandle<SumFn> &sum_op() {
  static const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow("redux::sum", "").typed<SumFn>();
  return handle;
}

const c10::TypedOperatorHandle<SumOfFn> &sum_of_op() {
  static const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_of", "").typed<SumOfFn>();
  return handle;
}

const c10::TypedOperatorHandle<SumFn> &mean_op() {
  static const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow("redux::mean", "").typed<SumFn>();
  return handle;
}

bool gradient_recorded(const at::Tensor &x) {
  const bool backward = at::GradMode::is_enabled() && x.requires_grad() &&
                        !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutogradFunctionality);
  return backward || torch::autograd::isFwGradDefined(x);
}

}  // namespace redux_shim
