/* Full reduction [n] -> [] and long rows [outer, n] -> [outer]:
 * one launch, single pass, deterministic last-block finish.
 *
 *   sum_chunks_kernel   Each row is cut into `chunks` chunks of `chunk`
 *                       elements (shape-only sizes). A work item is one
 *                       (row, chunk); blocks grid-stride over work items.
 *                       A block reads its chunk in tiles of
 *                       kBlock * VEC * kUnroll elements with 16-byte loads
 *                       (thread t takes vectors t, t + kBlock, ... of each
 *                       tile: the loads of a warp are contiguous), adds in
 *                       registers in a fixed order, reduces the block
 *                       (warp shuffle, then warps in order) and, when the row
 *                       has one chunk, writes the result. Otherwise it stores
 *                       its partial; the last block of the row (integer
 *                       ticket) combines the row's partials in chunk order.
 *   plan_chunks         the shape-only cut.
 *
 * Why it is deterministic: the chunk a value lands in, its thread, its
 * position in that thread's sequence and the trees above are functions of
 * (outer, n, dtype) only. Alignment only picks vector or scalar loads of the
 * same elements in the same order. The grid only schedules work items.
 */
#include "common.cuh"
#include "families.h"

namespace redux {

constexpr int kUnroll = 4;

family_plan plan_chunks(redux_shape s, redux_dtype in) {
  const int64_t tile = (int64_t)kBlock * kUnroll * (16 / elem_bytes(in));
  const int64_t tiles = ceil_div(s.n, tile);
  /* Tiles per chunk: enough that outer * chunks stays near kTargetItems. */
  int64_t per_chunk = ceil_div(s.outer * tiles, kTargetItems);
  if (per_chunk < 1) per_chunk = 1;
  family_plan p;
  p.chunk = per_chunk * tile;
  p.chunks = ceil_div(s.n, p.chunk);
  p.items = s.outer * p.chunks;
  p.segments = p.chunks > 1 ? s.outer : 0;
  p.partials = p.chunks > 1 ? p.items : 0;
  return p;
}

template <typename In, typename Out, bool ALIGNED>
__global__ void __launch_bounds__(kBlock)
sum_chunks_kernel(const In *__restrict__ x, Out *__restrict__ y, int64_t n,
                  int64_t chunk, int64_t chunks, int64_t items,
                  unsigned int *counters, typename sum_policy<In, Out>::acc_t *partials) {
  using P = sum_policy<In, Out>;
  using acc_t = typename P::acc_t;
  constexpr int VEC = vec_of<In>::value;
  __shared__ acc_t scratch[kBlock / 32];
  const int tid = threadIdx.x;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t row = item / chunks;
    const int64_t c = item - row * chunks;
    const In *base = x + row * n;
    const int64_t begin = c * chunk;
    const int64_t end = begin + chunk < n ? begin + chunk : n;

    acc_t acc = lane_sum_range<P, VEC, kUnroll, ALIGNED>(base, begin, end, tid, kBlock, P::zero());
    acc = block_reduce_sum<P, kBlock>(acc, scratch);

    if (chunks == 1) {
      if (tid == 0) y[row] = P::finish(acc);
      continue;
    }
    if (tid == 0) partials[item] = acc;
    if (!last_block_ticket(counters, row, (unsigned int)chunks)) continue;
    /* Last block of this row: combine its partials in chunk order. */
    acc_t r = combine_strided<P>(P::zero(), partials + row * chunks, tid, chunks, kBlock);
    r = block_reduce_sum<P, kBlock>(r, scratch);
    if (tid == 0) y[row] = P::finish(r);
  }
}

struct launch_chunks_fn {
  const void *x;
  void *y;
  void *ws;
  size_t ws_bytes;
  redux_shape s;
  int grid;
  cudaStream_t stream;
  family_plan p;

  template <typename In, typename Out>
  redux_status operator()() const {
    using acc_t = typename sum_policy<In, Out>::acc_t;
    unsigned int *counters;
    acc_t *partials;
    const redux_status st = prepare_workspace(p, ws, ws_bytes, stream, &counters, &partials);
    if (st != REDUX_OK) return st;
    /* 16-byte loads need every row start aligned: the base and the row pitch. */
    const bool aligned =
        ((uintptr_t)x % 16 == 0) && (s.outer == 1 || (s.n * (int64_t)sizeof(In)) % 16 == 0);
    auto kernel = aligned ? sum_chunks_kernel<In, Out, true> : sum_chunks_kernel<In, Out, false>;
    const int g = grid_for(kernel, p.items, grid);
    kernel<<<g, kBlock, 0, stream>>>(static_cast<const In *>(x), static_cast<Out *>(y), s.n, p.chunk,
                                     p.chunks, p.items, counters, partials);
    return launch_status();
  }
};

redux_status launch_chunks(const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s,
                           redux_dtype in, redux_dtype out, int grid, cudaStream_t stream) {
  return dispatch_pair(in, out, launch_chunks_fn{x, y, ws, ws_bytes, s, grid, stream, plan_chunks(s, in)});
}

size_t chunks_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out) {
  return workspace_bytes(plan_chunks(s, in), acc_bytes(in, out));
}

}  // namespace redux
