// Sums of inputs that are not dense, in pieces (pieces.h).
#include "pieces.h"

#include <algorithm>
#include <cstdlib>

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux.sum";

int64_t product(at::IntArrayRef sizes, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d) p *= sizes[d];
  return p;
}

// Views of t whose dims [d, d_end) cover the row-major flat range [b, e) of
// those dims, each a rectangular block, with the offset of its first
// element in the range: at most 2 (d_end - d) + 1 of them.
void range_blocks(const at::Tensor &t, int64_t d, int64_t d_end, int64_t b, int64_t e, int64_t offset,
                  std::vector<std::pair<at::Tensor, int64_t>> &out) {
  if (b >= e) return;
  const int64_t inner = product(t.sizes(), d + 1, d_end);
  if (d == d_end || (b == 0 && e == t.size(d) * inner)) {
    out.emplace_back(t, offset);
    return;
  }
  int64_t first = b / inner;
  const int64_t last = (e - 1) / inner;
  if (first == last) {
    range_blocks(t.narrow(d, first, 1), d + 1, d_end, b - first * inner, e - first * inner, offset, out);
    return;
  }
  if (b % inner != 0) {  // the partial first index
    range_blocks(t.narrow(d, first, 1), d + 1, d_end, b - first * inner, inner, offset, out);
    offset += (first + 1) * inner - b;
    ++first;
  }
  const int64_t whole_end = e % inner != 0 ? last : last + 1;
  if (whole_end > first) {
    out.emplace_back(t.narrow(d, first, whole_end - first), offset);
    offset += (whole_end - first) * inner;
  }
  if (e % inner != 0)  // the partial last index
    range_blocks(t.narrow(d, last, 1), d + 1, d_end, 0, e - last * inner, offset, out);
}

// The input's dims in the kernels' order, without size-1 dims, cut into the
// three groups of the plan's shape: [0, n_begin) outer, [n_begin, n_end) n,
// [n_end, dim) inner.
struct Grouped {
  at::Tensor t;
  int64_t n_begin = 0, n_end = 0;
};

Grouped grouped_input(const SumPlan &plan) {
  at::Tensor t = plan.input;
  std::vector<bool> reduced = plan.reduced;
  if (!plan.input_perm.empty()) {
    t = t.permute(plan.input_perm);
    std::vector<bool> permuted;
    for (int64_t d : plan.input_perm) permuted.push_back(plan.reduced[d]);
    reduced = permuted;
  }
  std::vector<int64_t> keep;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) keep.push_back(d);
  Grouped g;
  std::vector<int64_t> sizes, strides;
  int64_t k = 0;
  for (int64_t d : keep) {
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
    if (!reduced[d] && k == g.n_begin) ++g.n_begin;  // leading kept dims: outer
    if (reduced[d]) g.n_end = k + 1;
    ++k;
  }
  if (g.n_end < g.n_begin) g.n_end = g.n_begin;
  g.t = t.as_strided(sizes, strides);
  const int64_t dims = (int64_t)sizes.size();
  TORCH_CHECK(product(sizes, 0, g.n_begin) * product(sizes, g.n_begin, g.n_end) * product(sizes, g.n_end, dims) ==
                      plan.shape.outer * plan.shape.n * plan.shape.inner &&
                  product(sizes, g.n_begin, g.n_end) == plan.shape.n,
              kOp, ": internal: the input's groups do not match the plan's shape");
  return g;
}

// Copies the box [o0, o1) x [r0, r1) x whole inner of the grouped input into
// the dense [o1 - o0, r1 - r0, inner] buffer (converting the dtype).
void copy_box(const Grouped &g, int64_t o0, int64_t o1, int64_t r0, int64_t r1, at::Tensor &buffer) {
  std::vector<std::pair<at::Tensor, int64_t>> outers, rows;
  range_blocks(g.t, 0, g.n_begin, o0, o1, 0, outers);
  for (const auto &[vo, off_o] : outers) {
    rows.clear();
    range_blocks(vo, g.n_begin, g.n_end, r0, r1, 0, rows);
    for (const auto &[v, off_r] : rows) {
      at::Tensor dst = buffer.narrow(0, off_o, product(v.sizes(), 0, g.n_begin))
                           .narrow(1, off_r, product(v.sizes(), g.n_begin, g.n_end))
                           .view(v.sizes());
      dst.copy_(v);
    }
  }
}

}  // namespace

int64_t piece_bytes() {
  const char *env = std::getenv("REDUX_PIECE_BYTES");
  if (env == nullptr || *env == '\0') return int64_t{32} << 20;
  char *end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  TORCH_CHECK(*end == '\0' && v >= 1, kOp, ": REDUX_PIECE_BYTES must be a positive number of bytes, got '", env,
              "'");
  return v;
}

void sum_in_pieces(const SumPlan &plan, at::Tensor &result, const PieceBackend &backend, int64_t grid) {
  const Grouped g = grouped_input(plan);
  const redux_shape s = plan.shape;
  const at::ScalarType in = scalar_type_of(plan.in_t);
  const int64_t budget = std::max<int64_t>(1, piece_bytes() / redux_dtype_size(plan.in_t));  // elements
  const auto opts = plan.input.options().dtype(in);
  at::Tensor out = result.view({s.outer, s.inner});
  const int64_t slice = s.n * s.inner;
  const int64_t unit = backend.tree.unit(plan.family, s, plan.in_t);
  const int64_t units = (s.n + unit - 1) / unit;

  if (units < 2) {
    // Blocks of whole slices, each summed as its own problem.
    const int64_t block = std::clamp<int64_t>(budget / slice, 1, s.outer);
    const bool full = plan.family == REDUX_FULL;
    const std::vector<int64_t> over_n{1};
    for (int64_t o0 = 0; o0 < s.outer; o0 += block) {
      const int64_t o1 = std::min(s.outer, o0 + block);
      at::Tensor buffer = at::empty({o1 - o0, s.n, s.inner}, opts);
      copy_box(g, o0, o1, 0, s.n, buffer);
      at::Tensor y = backend.sum(buffer, full ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(over_n), false,
                                 plan.out_dtype, grid);
      out.narrow(0, o0, o1 - o0).copy_(y.view({o1 - o0, s.inner}));
    }
    return;
  }

  // Several units: the sharded sums' partials, unit range by unit range.
  std::vector<int64_t> layout(kLayoutFields, 0);
  layout[kFamily] = plan.family;
  layout[kOuter] = s.outer;
  layout[kN] = s.n;
  layout[kInner] = s.inner;
  layout[kUnit] = unit;
  layout[kUnits] = units;
  layout[kAccBytes] = (int64_t)backend.tree.acc_bytes(plan.in_t, plan.out_t);
  layout[kPerIndex] = 1;
  layout[kInType] = plan.in_t;
  layout[kOutType] = plan.out_t;
  const int64_t block = std::clamp<int64_t>(budget / slice, 1, s.outer);
  const int64_t units_per_piece = block > 1 ? units : std::clamp<int64_t>(budget / (unit * s.inner), 1, units);
  for (int64_t o0 = 0; o0 < s.outer; o0 += block) {
    const int64_t o1 = std::min(s.outer, o0 + block);
    at::Tensor partials;  // [slices, units, inner, acc bytes]
    for (int64_t u0 = 0; u0 < units; u0 += units_per_piece) {
      const int64_t u1 = std::min(units, u0 + units_per_piece);
      const int64_t r0 = u0 * unit, r1 = std::min(s.n, u1 * unit);
      at::Tensor buffer = at::empty({o1 - o0, r1 - r0, s.inner}, opts);
      copy_box(g, o0, o1, r0, r1, buffer);
      at::Tensor piece = backend.unit_partials(buffer, layout, u0, u1);
      if (u0 == 0 && u1 == units) {
        partials = piece;  // one piece: its partials are all of them
        break;
      }
      if (!partials.defined()) partials = at::empty({o1 - o0, units, s.inner, layout[kAccBytes]}, piece.options());
      partials.narrow(1, u0, u1 - u0).copy_(piece);
    }
    out.narrow(0, o0, o1 - o0).copy_(backend.from_partials(partials, layout));
  }
}

}  // namespace redux_shim
