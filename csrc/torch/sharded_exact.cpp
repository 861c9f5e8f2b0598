// redux._sum_shards: the exact sum of a tensor cut along dim 0 over the ranks
// of a process group, given every rank's number of rows: this rank's unit
// partials, one all-gather (the process group's own, stream-ordered and
// graph-capturable on NCCL), the one-device finish. No host sync.
// Index arithmetic and byte copies only: the kernels (through the sharded
// ops of sharded.cpp / sharded_cuda.cpp) do every addition.
#include <c10/util/accumulate.h>
#include <torch/csrc/distributed/c10d/GroupRegistry.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/library.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sharded.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux._sum_shards";


// The sharded ops of this device's backend, called directly: the
// dispatcher's layers cost more host time than the launch.
at::Tensor unit_partials(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1) {
#ifdef REDUX_WITH_CUDA
  if (view.is_cuda()) return unit_partials_cuda(view, layout, u0, u1);
#endif
  return unit_partials_cpu(view, layout, u0, u1);
}

at::Tensor from_partials(const at::Tensor &partials, at::IntArrayRef layout) {
#ifdef REDUX_WITH_CUDA
  if (partials.is_cuda()) return from_partials_cuda(partials, layout);
#endif
  return from_partials_cpu(partials, layout);
}

// Runs the process group's all-gather of `in` into `out` (world times its
// bytes), calling its backend for `device` directly: the dispatcher's and
// the process group's layers cost more host time than the launch.
// Synchronous, as dist.all_reduce's default: NCCL then runs on the current
// stream (no side stream, event or host block; graph-capturable).
void all_gather_into(at::Tensor &out, at::Tensor &in, const std::string &group, c10::Device device) {
  c10d::AllgatherOptions options;
  options.asyncOp = false;
  const auto work = c10d::resolve_process_group(group)->getBackend(device.type())->_allgather_base(out, in, options);
  if (work) work->wait();  // a synchronous NCCL collective may return no work
}

// Every rank's `bytes` (1-D uint8 of one length on every rank), in rank
// order: [world, length].
at::Tensor all_gather(const at::Tensor &bytes, int64_t world, const std::string &group) {
  at::Tensor in = bytes;
  at::Tensor out = at::empty({world * bytes.numel()}, bytes.options());
  all_gather_into(out, in, group, bytes.device());
  return out.view({world, bytes.numel()});
}

// A buffer of `length` bytes on `comm` whose front holds the tensors'
// bytes, one after another; `t` itself (no copy) where it is all of it.
at::Tensor send_buffer(const std::vector<at::Tensor> &parts, int64_t length, c10::Device comm) {
  if (parts.size() == 1 && parts[0].is_contiguous() && parts[0].device() == comm &&
      parts[0].numel() * parts[0].element_size() == length)
    return parts[0].view({-1}).view(at::kByte);
  at::Tensor buffer = at::empty({length}, at::TensorOptions().dtype(at::kByte).device(comm));
  int64_t at = 0;
  for (const at::Tensor &t : parts) {
    const int64_t n = t.numel() * t.element_size();
    if (n == 0) continue;
    buffer.narrow(0, at, n).view(t.scalar_type()).view(t.sizes()).copy_(t);
    at += n;
  }
  return buffer;
}

// Bytes `[from, from + count * row)` of gathered row `r` as `count` rows of
// `rest` elements of `dtype`, on `device`.
at::Tensor rows_of(const at::Tensor &gathered, int64_t r, int64_t from, int64_t count, at::IntArrayRef rest,
                   at::ScalarType dtype, c10::Device device) {
  std::vector<int64_t> shape{count};
  shape.insert(shape.end(), rest.begin(), rest.end());
  const int64_t row_bytes = c10::multiply_integers(rest) * c10::elementSize(dtype);
  return gathered[r].narrow(0, from, count * row_bytes).view(dtype).view(shape).to(device);
}

// Rows of dim 0, `lengths[r]` on rank r, gathered in rank order and joined.
at::Tensor gather_rows(const at::Tensor &t, const std::vector<int64_t> &lengths, const std::string &group,
                       c10::Device comm) {
  const int64_t world = (int64_t)lengths.size();
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const at::IntArrayRef rest = t.sizes().slice(1);
  const int64_t row_bytes = c10::multiply_integers(rest) * t.element_size();
  const at::Tensor gathered = all_gather(send_buffer({t}, longest * row_bytes, comm), world, group);
  std::vector<at::Tensor> parts;
  for (int64_t r = 0; r < world; ++r)
    parts.push_back(rows_of(gathered, r, 0, lengths[r], rest, t.scalar_type(), t.device()));
  return at::cat(parts);
}

// The n-ranges of rank r outside the units it holds whole, cut at unit
// boundaries (at most one piece of a unit per rank).
struct RankUnits {
  int64_t a, b;    // its n-range
  int64_t u0, u1;  // the units wholly inside it
  std::vector<std::pair<int64_t, int64_t>> pieces;
  int64_t piece_rows() const {
    int64_t rows = 0;
    for (const auto &[lo, hi] : pieces) rows += hi - lo;
    return rows;
  }
};

RankUnits rank_units(int64_t a, int64_t b, int64_t unit, int64_t units, int64_t n) {
  RankUnits r{a, b, (a + unit - 1) / unit, b == n ? units : b / unit, {}};
  r.u1 = std::max(r.u0, r.u1);
  std::vector<std::pair<int64_t, int64_t>> outside;
  if (r.u0 == r.u1) outside.emplace_back(a, b);
  else outside = {{a, r.u0 * unit}, {std::min(r.u1 * unit, n), b}};
  for (auto [lo, hi] : outside)
    while (lo < hi) {
      const int64_t end = std::min(hi, (lo / unit + 1) * unit);
      r.pieces.emplace_back(lo, end);
      lo = end;
    }
  return r;
}

// True when the gathered bytes, rank after rank, are already every unit's
// partials in unit order: no rank holds a piece of a unit, and every rank
// before the last that holds units fills its `longest` bytes with them.
bool whole_units_in_place(const std::vector<RankUnits> &ranks, int64_t longest, int64_t unit_bytes) {
  int64_t last = -1;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].pieces.empty()) return false;
    if (ranks[r].u1 > ranks[r].u0) last = (int64_t)r;
  }
  for (int64_t r = 0; r < last; ++r)
    if ((ranks[r].u1 - ranks[r].u0) * unit_bytes != longest) return false;
  return last >= 0;
}

// How the ranks' rows cut the units: each rank's n-range, units and
// pieces, and the bytes every rank sends in the all-gather (the most any
// rank has, 16-byte aligned so that every rank's partials start aligned).
struct Cut {
  std::vector<RankUnits> ranks;
  int64_t longest = 0;
};

Cut cut_of(at::IntArrayRef layout, const std::vector<int64_t> &lengths) {
  const int64_t outer = layout[kOuter], n = layout[kN], inner = layout[kInner], unit = layout[kUnit],
                units = layout[kUnits], acc = layout[kAccBytes], per = layout[kPerIndex];
  const int64_t elem = (int64_t)c10::elementSize(scalar_type_of((redux_dtype)layout[kInType]));
  Cut cut;
  int64_t first = 0;
  for (const int64_t rows : lengths) {
    cut.ranks.push_back(rank_units(first * per, (first + rows) * per, unit, units, n));
    first += rows;
    const RankUnits &k = cut.ranks.back();
    cut.longest = std::max(cut.longest, outer * inner * ((k.u1 - k.u0) * acc + k.piece_rows() * elem));
  }
  cut.longest = (cut.longest + 15) / 16 * 16;
  return cut;
}

// Reduced dim 0 sharded: every unit's partials in unit order, whole units
// from the rank that holds them, a unit cut by a rank boundary from its
// raw pieces (moved in the same all-gather), then the finish.
at::Tensor sum_cut_n(const at::Tensor &view, at::IntArrayRef layout, const Cut &cut, int64_t rank,
                     const std::string &group, c10::Device comm) {
  const std::vector<RankUnits> &ranks = cut.ranks;
  const int64_t longest = cut.longest;
  const int64_t world = (int64_t)ranks.size();
  const int64_t outer = layout[kOuter], n = layout[kN], inner = layout[kInner], unit = layout[kUnit],
                units = layout[kUnits], acc = layout[kAccBytes];
  const at::ScalarType in = scalar_type_of((redux_dtype)layout[kInType]);
  const int64_t elem = (int64_t)c10::elementSize(in);
  const RankUnits &me = ranks[rank];
  std::vector<at::Tensor> mine;
  if (me.u1 > me.u0)
    mine.push_back(unit_partials(view.narrow(1, me.u0 * unit - me.a, std::min(me.u1 * unit, n) - me.u0 * unit)
                                     .contiguous(),
                                 layout, me.u0, me.u1));
  for (const auto &[lo, hi] : me.pieces) mine.push_back(view.narrow(1, lo - me.a, hi - lo));
  const at::Tensor gathered = all_gather(send_buffer(mine, longest, comm), world, group);
  if (outer == 1 && whole_units_in_place(ranks, longest, inner * acc))  // rank order is unit order, no gaps
    return from_partials(gathered.view({-1}).narrow(0, 0, units * inner * acc).view({1, units, inner, acc})
                             .to(view.device()),
                         layout);

  // The units in order: runs of whole units, and each cut unit from its pieces.
  std::vector<at::Tensor> runs;
  std::vector<std::vector<at::Tensor>> cut_units(units);
  std::vector<int64_t> run_at(units, -1);
  for (int64_t r = 0; r < world; ++r) {
    const RankUnits &k = ranks[r];
    const int64_t part_bytes = outer * (k.u1 - k.u0) * inner * acc;
    if (k.u1 > k.u0) {
      run_at[k.u0] = (int64_t)runs.size();
      runs.push_back(rows_of(gathered, r, 0, outer, {k.u1 - k.u0, inner, acc}, at::kByte, view.device()));
    }
    int64_t at = part_bytes;
    for (const auto &[lo, hi] : k.pieces) {
      cut_units[lo / unit].push_back(rows_of(gathered, r, at, outer, {hi - lo, inner}, in, view.device()));
      at += outer * (hi - lo) * inner * elem;
    }
  }
  std::vector<at::Tensor> ordered;
  for (int64_t u = 0; u < units;) {
    if (run_at[u] >= 0) {
      const at::Tensor &run = runs[run_at[u]];
      ordered.push_back(run);
      u += run.size(1);
      continue;
    }
    TORCH_CHECK(!cut_units[u].empty(), kOp, ": internal: unit ", u, " is on no rank");
    ordered.push_back(unit_partials(at::cat(cut_units[u], 1), layout, u, u + 1));
    ++u;
  }
  return from_partials(ordered.size() == 1 ? ordered[0] : at::cat(ordered, 1), layout);
}

// What a call decides from sizes, dims and dtypes alone: the layout and
// the result's shape. Kept per (device, dtype, sizes of the whole tensor,
// dim, keepdim, dtype): a training step repeats a few of them, and
// planning costs more host time than the collective.
struct ShardsPlan {
  ShardLayout layout;
  std::vector<int64_t> shape;
};

std::shared_ptr<const ShardsPlan> shards_plan(const at::Tensor &x, int64_t total, at::OptionalIntArrayRef dim,
                                              bool keepdim, std::optional<at::ScalarType> dtype) {
  std::vector<int64_t> key{(int64_t)x.device().type(), x.device().index(), (int64_t)x.scalar_type(),
                           dtype ? (int64_t)*dtype : -1, keepdim, dim.has_value(), total};
  key.insert(key.end(), x.sizes().begin() + 1, x.sizes().end());
  key.push_back(-1);  // sizes end here, dims follow
  if (dim) key.insert(key.end(), dim->begin(), dim->end());
  static std::mutex lock;
  static std::map<std::vector<int64_t>, std::shared_ptr<const ShardsPlan>> known;
  {
    const std::lock_guard<std::mutex> hold(lock);
    const auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  std::vector<int64_t> whole(x.sizes().begin(), x.sizes().end());
  whole[0] = total;
  const SumSpec spec = sum_spec(kOp, at::empty(whole, x.options().device(at::kMeta)), dim, dtype);
#ifdef REDUX_WITH_CUDA
  const ShardBackend &backend = x.is_cuda() ? kCudaTree : kCpuTree;
#else
  const ShardBackend &backend = kCpuTree;
#endif
  auto plan = std::make_shared<const ShardsPlan>(
      ShardsPlan{shard_layout(x, whole, dim, dtype, backend), result_shape<int64_t>(whole, spec.reduced, keepdim)});
  const std::lock_guard<std::mutex> hold(lock);
  if (known.size() >= 256) known.clear();
  known.emplace(std::move(key), plan);
  return plan;
}

#ifdef REDUX_WITH_CUDA
// sum_cut_n's case where the gathered bytes are every unit's partials in
// unit order (whole_units_in_place) of one problem (outer 1), on NCCL: this
// rank's partials go straight into its slot of the all-gather's output
// (NCCL's in-place all-gather) and the finish reads that output into the
// result. Two allocations, two launches, one collective, no views between.
at::Tensor sum_in_place_cuda(const at::Tensor &x, const ShardsPlan &plan, const Cut &cut, int64_t rank,
                             const std::string &group) {
  const at::IntArrayRef layout = plan.layout.fields;
  const int64_t world = (int64_t)cut.ranks.size(), longest = cut.longest;
  at::Tensor gathered = at::empty({world * longest}, x.options().dtype(at::kByte));
  const RankUnits &me = cut.ranks[rank];
  if (me.u1 > me.u0) {  // no pieces: its rows are exactly units [u0, u1)
    const bool as_is = x.scalar_type() == scalar_type_of((redux_dtype)layout[kInType]) &&
                       plan.layout.perm.empty() && x.is_contiguous();
    const at::Tensor view = as_is ? x : shard_view(x, plan.layout);
    unit_partials_into_cuda(view.const_data_ptr(), gathered.mutable_data_ptr<uint8_t>() + rank * longest, layout, 1,
                            me.u0, me.u1, x.device());
  }
  at::Tensor mine = gathered.narrow(0, rank * longest, longest);
  all_gather_into(gathered, mine, group, x.device());
  at::Tensor y = at::empty(plan.shape, x.options().dtype(scalar_type_of((redux_dtype)layout[kOutType])));
  from_partials_into_cuda(gathered.const_data_ptr(), y.mutable_data_ptr(), layout, 1, x.device());
  return y;
}
#endif

at::Tensor sum_shards(const at::Tensor &x, at::IntArrayRef lengths, int64_t rank, at::OptionalIntArrayRef dim,
                      bool keepdim, std::optional<at::ScalarType> dtype, c10::string_view group_name,
                      c10::Device comm) {
  const int64_t world = (int64_t)lengths.size();
  TORCH_CHECK(world >= 1 && rank >= 0 && rank < world, kOp, ": argument 'rank' ", rank, " is not a rank of ",
              world);
  TORCH_CHECK(x.dim() >= 1, kOp, ": argument 'x' is 0-dim: there is no dim 0 to be sharded on");
  std::vector<int64_t> rows(lengths.begin(), lengths.end());
  int64_t total = 0;
  for (int64_t r = 0; r < world; ++r) {
    TORCH_CHECK(rows[r] >= 0, kOp, ": argument 'lengths' has ", rows[r], " rows on rank ", r);
    total += rows[r];
  }
  TORCH_CHECK(rows[rank] == x.size(0), kOp, ": argument 'x' has ", x.size(0), " rows of dim 0 where 'lengths' says ",
              rows[rank], " for this rank");
  const std::shared_ptr<const ShardsPlan> plan = shards_plan(x, total, dim, keepdim, dtype);
  const std::vector<int64_t> &shape = plan->shape;
  const at::IntArrayRef layout = plan->layout.fields;
  const std::string group(group_name);
  if (layout[kFamily] < 0) {  // nothing to add: the whole tensor is empty
    std::vector<int64_t> whole(x.sizes().begin(), x.sizes().end());
    whole[0] = total;
    return sum_op().call(at::empty(whole, x.options()), dim, keepdim, dtype);
  }
  const bool kept0 = layout[kRole] == 1;
  if (!kept0 && layout[kUnits] >= 2) {  // reduced dim 0 cut into units
    const Cut cut = cut_of(layout, rows);
#ifdef REDUX_WITH_CUDA
    if (x.is_cuda() && comm == x.device() && layout[kOuter] == 1 &&
        whole_units_in_place(cut.ranks, cut.longest, layout[kInner] * layout[kAccBytes]))
      return sum_in_place_cuda(x, *plan, cut, rank, group);
#endif
    return sum_cut_n(shard_view(x, plan->layout), layout, cut, rank, group, comm).reshape(shape);
  }
  const at::Tensor view = shard_view(x, plan->layout);
  if (layout[kUnits] < 2) {
    if (kept0 && layout[kFamily] == REDUX_ROWS) {  // rows of a batch keep their one-device tree
      const std::vector<int64_t> over_n{1};
      const at::Tensor out = sum_op().call(view, over_n, false, dtype).reshape({-1, 1});
      std::vector<int64_t> slices;
      for (int64_t n : rows) slices.push_back(n * layout[kPerIndex]);
      return gather_rows(out, slices, group, comm).reshape(shape);
    }
    // one unit: the whole tensor on every rank, summed there
    return sum_op().call(gather_rows(x.contiguous(), rows, group, comm), dim, keepdim, dtype);
  }
  // dim 0 kept, several units: each rank's slices are whole problems, gather the outputs
  const at::Tensor out =
      view.size(0) > 0 ? from_partials(unit_partials(view, layout, 0, layout[kUnits]), layout)
                       : at::empty({0, layout[kInner]}, x.options().dtype(scalar_type_of((redux_dtype)layout[kOutType])));
  std::vector<int64_t> slices;
  for (int64_t n : rows) slices.push_back(n * layout[kPerIndex]);
  return gather_rows(out, slices, group, comm).reshape(shape);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) { m.impl("_sum_shards", &redux_shim::sum_shards); }
#ifdef REDUX_WITH_CUDA
TORCH_LIBRARY_IMPL(redux, CUDA, m) { m.impl("_sum_shards", &redux_shim::sum_shards); }
#endif
