/* Columns [outer, n, inner] -> [outer, inner], the reduced dim strided.
 *
 *   sum_cols_kernel  A block is TX x TY threads (TX * TY = kBlock; TX lanes
 *                    run along inner, so a warp's loads are contiguous). A
 *                    work item is (slice o, chunk c of n, tile j of inner).
 *                    Thread (tx, ty) owns VEC adjacent columns (VEC > 1 only
 *                    with 16-byte aligned rows) and adds rows
 *                    c*L + ty, c*L + ty + TY, ... in order; the TY partial
 *                    sums of a column are then combined by a fixed tree in
 *                    shared memory. With one chunk the block writes the
 *                    outputs; otherwise it stores per-column partials and
 *                    the last block of (o, j) combines them in chunk order.
 *   plan_cols        the shape-only cut: TX from inner, L and the chunk
 *                    count from (outer, n, inner).
 * A column's order of additions depends on (TY, L) only, never on VEC, the
 * tile a column falls in, alignment or the grid.
 */
#include "common.cuh"
#include "families.h"

namespace redux {

/* Build constants, chosen by the variant timings on the H200
 * (leaderboard/microbench/sweep.sh cols, results/microbench/sweep_cols*.txt,
 * leaderboard/PERFORMANCE.md change 7): the main loop wants 8 blocks per SM
 * (32 registers). Batched finish loads without that cap made every column
 * shape 1.6x slower (3 blocks per SM). Under the cap, 2 fp32 partials in
 * flight were the fastest variant; 16-bit inputs (8 columns per thread) were
 * 4-11% faster with one partial at a time (more spills); fp64 timed the same
 * either way, so every input but fp32 takes one. At the torch level fp32
 * columns time the same as before this change (the variant gains were
 * against a build with more registers than the original had).
 * Partials of a column the finishing block loads at once. */
#ifndef REDUX_COLS_FINISH_BATCH
#define REDUX_COLS_FINISH_BATCH 2
#endif
template <typename In>
__host__ __device__ constexpr int cols_finish_batch() {
  return sizeof(In) == 4 ? REDUX_COLS_FINISH_BATCH : 1; /* measured gain for fp32 only */
}
/* Rows a thread has in flight (unroll of its row loop). None of these three
 * constants changes which rows a thread adds or in what order: no bits. */
#ifndef REDUX_COLS_UNROLL
#define REDUX_COLS_UNROLL 4
#endif
constexpr int kColsUnroll = REDUX_COLS_UNROLL;
/* Blocks per SM the compiler must leave registers for. The compensated
 * fp64 accumulator (16 bytes) would spill at 32 registers: half for it. */
#ifndef REDUX_COLS_MIN_BLOCKS
#define REDUX_COLS_MIN_BLOCKS 8
#endif
template <typename acc_t>
__host__ __device__ constexpr int cols_min_blocks() {
  return sizeof(acc_t) > 8 ? (REDUX_COLS_MIN_BLOCKS + 1) / 2 : REDUX_COLS_MIN_BLOCKS;
}

/* Minimum rows of n per thread in one chunk: keeps partials small. */
constexpr int64_t kColsMinRowsPerThread = 32;

struct cols_plan {
  int tx, ty;
  int64_t rows_per_chunk; /* L, a multiple of ty */
  int64_t chunks;
};

static cols_plan plan_cols(redux_shape s, redux_dtype in) {
  const int64_t vmax = 16 / elem_bytes(in);
  cols_plan p;
  p.tx = 1;
  while (p.tx < 32 && (int64_t)p.tx * vmax < s.inner) p.tx *= 2;
  p.ty = kBlock / p.tx;
  const int64_t base_items = s.outer * ceil_div(s.inner, (int64_t)p.tx * vmax);
  int64_t chunks = ceil_div(kTargetItems, base_items);
  const int64_t max_chunks = s.n / (kColsMinRowsPerThread * p.ty);
  if (chunks > max_chunks) chunks = max_chunks;
  if (chunks < 1) chunks = 1;
  p.rows_per_chunk = ceil_div(ceil_div(s.n, chunks), p.ty) * p.ty;
  p.chunks = ceil_div(s.n, p.rows_per_chunk);
  return p;
}

/* Counters: one per (o, tile) at the narrowest tile (VEC = 1), so the size
 * is known before the pointer's alignment is. */
static family_plan cols_family_plan(redux_shape s, const cols_plan &c) {
  family_plan p;
  p.segments = c.chunks > 1 ? s.outer * ceil_div(s.inner, c.tx) : 0;
  p.partials = c.chunks > 1 ? s.outer * c.chunks * s.inner : 0;
  return p;
}

template <typename In, typename Out, int VEC>
__global__ void __launch_bounds__(kBlock, cols_min_blocks<typename sum_policy<In, Out>::acc_t>())
sum_cols_kernel(const In *__restrict__ x, Out *__restrict__ y, int64_t n, int64_t inner, int tx_count,
                int64_t rows_per_chunk, int64_t chunks, int64_t tiles, int64_t items,
                unsigned int *counters, typename sum_policy<In, Out>::acc_t *partials) {
  using P = sum_policy<In, Out>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t red[kBlock * VEC];
  const int tx = threadIdx.x % tx_count;
  const int ty = threadIdx.x / tx_count;
  const int ty_count = kBlock / tx_count;
  const int64_t tile_cols = (int64_t)tx_count * VEC;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    /* item = (o * chunks + c) * tiles + j */
    const int64_t j = item % tiles;
    const int64_t oc = item / tiles;
    const int64_t c = oc % chunks;
    const int64_t o = oc / chunks;
    const int64_t col0 = j * tile_cols + (int64_t)tx * VEC;
    const int64_t r_begin = c * rows_per_chunk;
    const int64_t r_end = r_begin + rows_per_chunk < n ? r_begin + rows_per_chunk : n;
    const In *slice = x + o * n * inner;

    acc_t acc[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = P::zero();
    if (col0 < inner) { /* VEC > 1 implies inner % VEC == 0: all VEC in range */
#pragma unroll kColsUnroll
      for (int64_t r = r_begin + ty; r < r_end; r += ty_count) {
        In v[VEC];
        load_vec<In, VEC, (VEC > 1)>(slice + r * inner + col0, v);
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc[e] = P::add(acc[e], v[e]);
      }
    }
    /* Combine the ty partial sums of each column: fixed tree over ty. */
#pragma unroll
    for (int v = 0; v < VEC; ++v) red[threadIdx.x * VEC + v] = acc[v];
    __syncthreads();
    for (int half = ty_count / 2; half > 0; half /= 2) {
      if (ty < half) {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
          red[threadIdx.x * VEC + v] =
              P::combine(red[threadIdx.x * VEC + v], red[(threadIdx.x + half * tx_count) * VEC + v]);
      }
      __syncthreads();
    }
    if (chunks == 1) {
      if (ty == 0)
        for (int v = 0; v < VEC; ++v)
          if (col0 + v < inner) y[o * inner + col0 + v] = P::finish(red[tx * VEC + v]);
      __syncthreads(); /* red is rewritten by the next item */
      continue;
    }
    if (ty == 0)
      for (int v = 0; v < VEC; ++v)
        if (col0 + v < inner) partials[(o * chunks + c) * inner + col0 + v] = red[tx * VEC + v];
    __syncthreads(); /* all of this tile's partials stored before the ticket */
    if (!last_block_ticket(counters, o * tiles + j, (unsigned int)chunks)) continue;
    /* Last block of (o, j): combine each column's partials in chunk order. */
    for (int64_t k = threadIdx.x; k < tile_cols; k += kBlock) {
      const int64_t col = j * tile_cols + k;
      if (col >= inner) break;
      /* B independent loads in flight, not one dependent L2 round trip per
       * chunk (the finish runs in the last wave: a tail). */
      constexpr int B = cols_finish_batch<In>();
      const acc_t *p = partials + o * chunks * inner + col;
      acc_t r = P::zero();
      for (int64_t c0 = 0; c0 < chunks; c0 += B) {
        acc_t v[B];
#pragma unroll
        for (int b = 0; b < B; ++b)
          if (c0 + b < chunks) v[b] = load_partial(p + (c0 + b) * inner);
#pragma unroll
        for (int b = 0; b < B; ++b)
          if (c0 + b < chunks) r = P::combine(r, v[b]);
      }
      y[o * inner + col] = P::finish(r);
    }
  }
}

struct launch_cols_fn {
  const void *x;
  void *y;
  void *ws;
  size_t ws_bytes;
  unsigned int *stream_counters;
  size_t stream_counters_len;
  redux_shape s;
  int grid;
  cudaStream_t stream;
  cols_plan c;

  template <typename In, typename Out, int VEC>
  redux_status launch(const family_plan &p) const {
    using acc_t = typename sum_policy<In, Out>::acc_t;
    const int64_t tiles = ceil_div(s.inner, (int64_t)c.tx * VEC);
    const int64_t items = s.outer * c.chunks * tiles;
    unsigned int *counters;
    acc_t *partials;
    const redux_status st = prepare_workspace(p, ws, ws_bytes, stream_counters, stream_counters_len, stream, &counters,
                                              &partials);
    if (st != REDUX_OK) return st;
    auto kernel = sum_cols_kernel<In, Out, VEC>;
    const int g = grid_for(kernel, items, grid);
    kernel<<<g, kBlock, 0, stream>>>(static_cast<const In *>(x), static_cast<Out *>(y), s.n, s.inner,
                                     c.tx, c.rows_per_chunk, c.chunks, tiles, items, counters, partials);
    return launch_status();
  }

  template <typename In, typename Out>
  redux_status operator()() const {
    constexpr int VEC = vec_of<In>::value;
    const family_plan p = cols_family_plan(s, c);
    const bool vec_ok = ((uintptr_t)x % 16 == 0) && (s.inner % VEC == 0);
    return vec_ok ? launch<In, Out, VEC>(p) : launch<In, Out, 1>(p);
  }
};

redux_status launch_cols(const void *x, void *y, void *ws, size_t ws_bytes, unsigned int *counters,
                         size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out, int grid,
                         cudaStream_t stream) {
  return dispatch_pair(in, out,
                       launch_cols_fn{x, y, ws, ws_bytes, counters, counters_len, s, grid, stream, plan_cols(s, in)});
}

size_t cols_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out) {
  return workspace_bytes(cols_family_plan(s, plan_cols(s, in)), acc_bytes(in, out));
}

size_t cols_counters(redux_shape s, redux_dtype in) { return (size_t)cols_family_plan(s, plan_cols(s, in)).segments; }

}  // namespace redux
