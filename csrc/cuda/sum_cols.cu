/* Columns [outer, n, inner] -> [outer, inner], the reduced dim strided.
 *
 *   sum_cols_kernel  A block is TX x TY threads (TX * TY = kBlock; TX lanes
 *                    run along inner, so a warp's loads are contiguous). A
 *                    work item is (slice o, chunk c of n, tile j of inner).
 *                    Chunk c holds rows [c * L, (c + 1) * L) (L rows per
 *                    chunk, a power of two and a multiple of TY), so a shard
 *                    of n that starts on a chunk holds whole chunks
 *                    (redux.distributed).
 *                    Thread (tx, ty) owns VEC adjacent columns (VEC > 1 only
 *                    with 16-byte aligned rows) and adds rows ty, ty + TY,
 *                    ... of its chunk, in order, kColsUnroll rows
 *                    in flight (lane_sum_column_vecs); the TY partial sums
 *                    of a column are then combined by a fixed tree in shared
 *                    memory. With one chunk the block writes the outputs;
 *                    otherwise the C chunks of a segment (o, j) are
 *                    finished in one of two ways, with the same additions:
 *                    - cluster finish (sm_90+, 2 <= C <= kColsClusterMax):
 *                      the segment's C items run as the C blocks of one
 *                      thread block cluster, block rank = chunk. Each keeps
 *                      its chunk's column partials in shared memory; after
 *                      a cluster barrier each block finishes a share of
 *                      the tile's columns, reading the C partials of a
 *                      column from the cluster's shared memory (DSMEM).
 *                      No partials in global memory and no ticket (the
 *                      barrier's release is still a fence); the hardware
 *                      runs a cluster's blocks together, so the barrier
 *                      cannot wait on a block not yet running.
 *                    - ticket finish (otherwise): each block stores its
 *                      per-column partials and the last block of (o, j)
 *                      combines them: G threads per column, each a run of
 *                      consecutive chunks in chunk order, then the G runs
 *                      in order.
 *   plan_cols        the shape-only cut: TX from inner, the rows per chunk L
 *                    and so the chunk count C from (outer, n, inner), G
 *                    from TX and C.
 *   sum_strips_kernel  the strips tree, which fp32 input of whole 64-column
 *                    strips takes instead (cols_use_strips; described
 *                    where it is defined below).
 * In the tile kernel a column's order of additions depends on (TY, C, G) only, never on VEC,
 * the tile a column falls in, alignment, the cache hint, the finish or the
 * grid: the cluster finish adds the same runs in the same order.
 */
#include <cooperative_groups.h>

#include "dispatch.cuh"
#include "families.h"
#include "finish.cuh"
#include "grid.cuh"
#include "workspace.cuh"

/* Thread block clusters and distributed shared memory: sm_90 and later. A
 * build for older GPUs only has the ticket finish (the host checks the
 * kernel's PTX version before it picks the cluster finish). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define REDUX_COLS_HAS_CLUSTERS 1
#else
#define REDUX_COLS_HAS_CLUSTERS 0
#endif

namespace redux {

/* Build constants, chosen by sweeps of the columns family on the three
 * column targets (bench/sweep.sh cols).
 * Work items a problem is cut into, about: about one per resident block,
 * so a block streams one long run of rows instead of draining its loads at a
 * tree and a ticket every few rows (512 beat 1024 to 4096 at every target).
 * Shape-only (never from the device), and part of the reduction tree:
 * another value gives other bits. */
constexpr int64_t kColsTargetItems = 512;
/* The rest change no bits.
 * Partials a finishing thread loads at once (one for the 16-byte
 * compensated fp64 accumulator: registers). */
constexpr int kColsFinishBatch = 4;
/* Rows a thread has in flight (2 was 13-19% slower than 8 on the H200). */
constexpr int kColsUnroll = 8;
/* Blocks per SM the compiler must leave registers for (64 registers at 4:
 * kColsUnroll 16-byte loads in flight without spills). */
constexpr int kColsMinBlocks = 4;
/* Largest chunk count finished in a cluster (8: the portable cluster size). */
constexpr int kColsClusterMax = 8;
template <typename acc_t>
__host__ __device__ constexpr int cols_finish_batch() {
  return sizeof(acc_t) > 8 ? 1 : kColsFinishBatch;
}

/* Minimum row groups (rows per thread) in one chunk: keeps partials few. */
constexpr int64_t kColsMinRowsPerThread = 32;

struct cols_plan {
  int tx, ty;
  int64_t rows_per_chunk; /* L: rows of n in one chunk (the last may have fewer) */
  int64_t chunks;
  int64_t group_chunks;   /* chunks per finishing thread (G = ceil(chunks / this)) */
};

static cols_plan plan_cols(redux_shape s, redux_dtype in) {
  const int64_t vmax = 16 / redux_dtype_size(in);
  cols_plan p;
  p.tx = 1;
  while (p.tx < 32 && (int64_t)p.tx * vmax < s.inner) p.tx *= 2;
  p.ty = kBlock / p.tx;
  /* About kColsTargetItems work items: the chunks wanted per segment, then
   * rows per chunk a power of two (even shards of n start on a chunk) with
   * at least kColsMinRowsPerThread rows per thread. */
  const int64_t base_items = s.outer * ceil_div(s.inner, (int64_t)p.tx * vmax);
  const int64_t wanted = ceil_div(kColsTargetItems, base_items);
  int64_t rows = pow2_at_least(ceil_div(s.n, wanted));
  if (rows < kColsMinRowsPerThread * p.ty) rows = kColsMinRowsPerThread * p.ty;
  p.rows_per_chunk = rows;
  p.chunks = ceil_div(s.n, rows);
  /* Finishing threads per column: as many as a tile of the widest vectors
   * leaves (kBlock / (TX * vmax)), so G never depends on VEC. */
  const int64_t groups = kBlock / ((int64_t)p.tx * vmax);
  p.group_chunks = ceil_div(p.chunks, groups < 1 ? 1 : groups);
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

/* This block's rank in its cluster (0 without clusters). */
__device__ __forceinline__ int64_t cluster_rank() {
#if REDUX_COLS_HAS_CLUSTERS
  return (int64_t)cooperative_groups::this_cluster().block_rank();
#else
  return 0;
#endif
}

/* The cluster finish of segment (o, j), called by every thread of every
 * block of the cluster after each block left its chunk's column partials in
 * red[0, tile_cols) (block rank = chunk). Block r finishes columns
 * [r * per, (r + 1) * per) of the tile, one thread per column: it reads the
 * column's C partials from the blocks' shared memory and adds them exactly
 * as the ticket finish does: runs of group_chunks consecutive chunks, each
 * started from zero, then the runs in order. */
template <typename P, typename Out>
__device__ __forceinline__ void cols_cluster_finish(typename P::acc_t *red, Out *y, int64_t inner, int64_t o,
                                                    int64_t col_base, int tile_cols, const cols_plan &cp,
                                                    int64_t n) {
#if REDUX_COLS_HAS_CLUSTERS
  using acc_t = typename P::acc_t;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int C = (int)cp.chunks;
  /* Every block's partials are in its shared memory, visible cluster-wide. */
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  const int per = (tile_cols + C - 1) / C;
  const int k = (int)cluster.block_rank() * per + (int)threadIdx.x;
  const int64_t col = col_base + k;
  if ((int)threadIdx.x < per && k < tile_cols && col < inner) {
    const int gc = (int)cp.group_chunks;
    acc_t r = P::zero(), run = P::zero();
    for (int c = 0; c < C; ++c) {
      run = P::combine(run, *cluster.map_shared_rank(red + k, (unsigned int)c));
      if ((c + 1) % gc == 0 || c + 1 == C) { /* a run ends */
        r = c < gc ? run : P::combine(r, run);
        run = P::zero();
      }
    }
    y[o * inner + col] = P::finish(r, n);
  }
  /* No block rewrites or leaves its shared memory while another reads it.
   * Nothing is published here, so no release: each thread's remote loads
   * have returned before it arrives (their values were added above). */
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#else
  __trap(); /* the host never picks the cluster finish for this build */
#endif
}

/* Combines the TY partial sums of each of a block's columns (acc, VEC per
 * thread) by a fixed tree over ty in red; the result of column tx * VEC + v
 * is left in red[tx * VEC + v]. */
template <typename P, int VEC>
__device__ __forceinline__ void cols_tree_over_ty(typename P::acc_t *red, const typename P::acc_t (&acc)[VEC],
                                                  int ty, const cols_plan &cp) {
#pragma unroll
  for (int v = 0; v < VEC; ++v) red[threadIdx.x * VEC + v] = acc[v];
  __syncthreads();
  for (int half = cp.ty / 2; half > 0; half /= 2) {
    if (ty < half) {
#pragma unroll
      for (int v = 0; v < VEC; ++v)
        red[threadIdx.x * VEC + v] =
            P::combine(red[threadIdx.x * VEC + v], red[(threadIdx.x + half * cp.tx) * VEC + v]);
    }
    __syncthreads();
  }
}

/* The ticket finish of segment (o, j), by the last of its C blocks: thread
 * (g, k) combines column k's chunks [g * gc, (g + 1) * gc) in chunk order, B
 * loads in flight; thread (0, k) then combines the runs in g order. The
 * finish is the kernel's tail, so it uses G threads per column, not one
 * walking every chunk. G * tile_cols <= kBlock (plan_cols). */
template <typename P, typename Out>
__device__ __forceinline__ void cols_ticket_finish(typename P::acc_t *red, const typename P::acc_t *partials,
                                                   Out *y, int64_t inner, int64_t o, int64_t col_base,
                                                   int tile_cols, const cols_plan &cp, int64_t n) {
  using acc_t = typename P::acc_t;
  const int64_t chunks = cp.chunks;
  const int k = threadIdx.x % tile_cols;
  const int64_t g = threadIdx.x / tile_cols;
  const int64_t col = col_base + k;
  const int64_t groups = ceil_div(chunks, cp.group_chunks);
  acc_t r = P::zero();
  if (g < groups && col < inner) {
    const int64_t c_end = (g + 1) * cp.group_chunks < chunks ? (g + 1) * cp.group_chunks : chunks;
    r = combine_strided<P, cols_finish_batch<acc_t>()>(r, partials + o * chunks * inner + col,
                                                    g * cp.group_chunks * inner, c_end * inner, inner);
  }
  red[threadIdx.x] = r;
  __syncthreads();
  if (g == 0 && col < inner) {
    for (int64_t h = 1; h < groups; ++h) r = P::combine(r, red[h * tile_cols + k]);
    y[o * inner + col] = P::finish(r, n);
  }
}

template <typename P, int VEC, bool STREAM>
__global__ void __launch_bounds__(kBlock, kColsMinBlocks)
sum_cols_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ y, int64_t n, int64_t inner,
                cols_plan cp, int64_t tiles, int64_t items, unsigned int *counters, typename P::acc_t *partials,
                bool clustered) {
  using In = typename P::in_t;
  using Out = typename P::out_t;
  using acc_t = typename P::acc_t;
  __shared__ acc_t red[kBlock * VEC];
  const int tx = threadIdx.x % cp.tx;
  const int ty = threadIdx.x / cp.tx;
  const int tile_cols = cp.tx * VEC;
  const int64_t chunks = cp.chunks;
  /* Blocks grid-stride over work items. Ticket finish: item = (o * chunks +
   * c) * tiles + j. Cluster finish (launched with cluster dims C, the grid
   * whole clusters): item = segment * C + rank, segment = o * tiles + j, and
   * a block's rank in its cluster is its chunk c; the C blocks of a cluster
   * take the C items of one segment in every round, and all take the same
   * number of rounds. */
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t seg = clustered ? item / chunks : 0;
    const int64_t j = clustered ? seg % tiles : item % tiles;
    const int64_t c = clustered ? cluster_rank() : (item / tiles) % chunks;
    const int64_t o = clustered ? seg / tiles : (item / tiles) / chunks;
    const int64_t col0 = j * tile_cols + (int64_t)tx * VEC;
    /* This thread's rows: c * L + ty + k * TY < min((c + 1) * L, n). */
    const int64_t r0 = c * cp.rows_per_chunk + ty;
    const int64_t row_step = cp.ty;
    const int64_t row_end = (c + 1) * cp.rows_per_chunk < n ? (c + 1) * cp.rows_per_chunk : n;
    const int64_t rows = r0 < row_end ? ceil_div(row_end - r0, row_step) : 0;

    acc_t acc[VEC];
#pragma unroll
    for (int v = 0; v < VEC; ++v) acc[v] = P::zero();
    if (col0 < inner && rows > 0) /* VEC > 1 implies inner % VEC == 0: all VEC in range */
      lane_sum_column_vecs<P, VEC, kColsUnroll, (VEC > 1), STREAM>(x + (o * n + r0) * inner + col0, rows,
                                                                   row_step * inner, acc);
    cols_tree_over_ty<P, VEC>(red, acc, ty, cp);
    if (chunks == 1) {
      if (ty == 0)
        for (int v = 0; v < VEC; ++v)
          if (col0 + v < inner) y[o * inner + col0 + v] = P::finish(red[tx * VEC + v], n);
    } else if (clustered) {
      cols_cluster_finish<P, Out>(red, y, inner, o, j * tile_cols, tile_cols, cp, n);
      continue; /* ends with a cluster barrier: red is free */
    } else {
      if (ty == 0)
        for (int v = 0; v < VEC; ++v)
          if (col0 + v < inner) partials[(o * chunks + c) * inner + col0 + v] = red[tx * VEC + v];
      __syncthreads(); /* all of this tile's partials stored before the ticket */
      if (last_block_ticket(counters, o * tiles + j, (unsigned int)chunks))
        cols_ticket_finish<P, Out>(red, partials, y, inner, o, j * tile_cols, tile_cols, cp, n);
    }
    __syncthreads(); /* red is rewritten by the next item */
  }
}

/* ---- the strips tree: fp32 columns in 64-column strips ----
 * For fp32 input whose rows are whole strips of 64 columns (inner % 64 ==
 * 0), of more than one 256-row chunk, whose polled slots fit the stream
 * counters (cols_use_strips). A work item is (slice o, chunk c of 256 rows,
 * strip j of 64 columns), one item a block of 1024 threads, in window order
 * (a chunk's strips side by side, then the next chunk), so the blocks at
 * work read one band of rows, 3.5-8.5% faster than the tile kernel's
 * 512 KB items on long-lived blocks (docs/notes/columns.md).
 * In a chunk, thread (ty, tx) of 64 x 16 adds rows ty, ty + 64, ty + 128,
 * ty + 192 (those < n) of columns 4 tx .. 4 tx + 3 in order from zero; the
 * two row lanes of a warp (ty = 2w, 2w + 1) are added; then for each
 * column, warps 2g and 2g + 1 (g < 16) in order from zero, and those 16 by
 * a shuffle tree: the chunk's partial. The partials of a column are added
 * in runs of gc = ceil(C / 16) chunks from zero, then the runs in order.
 * The bits depend on the shape only: not on alignment (scalar loads of the
 * same elements), the grid, the finishing blocks or the sharding. */
constexpr int kStripCols = 64;
constexpr int kStripBlock = 1024;
constexpr int kStripLanes = kStripCols / 4;               /* tx: four columns each */
constexpr int kStripRowLanes = kStripBlock / kStripLanes; /* ty: 64 */
constexpr int kStripRowsPerThread = 4;
constexpr int64_t kStripChunkRows = (int64_t)kStripRowLanes * kStripRowsPerThread; /* 256 */
constexpr int kStripWarps = kStripBlock / 32;
constexpr int kStripGroups = kStripBlock / kStripCols; /* threads a column in the block fold and the finish: 16 */
/* Slots a finishing thread polls at once: the target shapes' runs are 1-2
 * chunks; 4 spilled 20 bytes under the 32-register cap (2: 8, as none). */
constexpr int kStripFinishBatch = 2;
/* Runs a finishing thread loads from shared memory at once (8 and 16
 * compile to the same registers as 4). */
constexpr int kStripRunBatch = 4;

/* Shape and input dtype only, so the sharded units (which know no output
 * dtype) agree with the sum. */
static bool cols_use_strips(redux_shape s, redux_dtype in) {
  if (in != REDUX_F32 || s.inner % kStripCols != 0 || s.n <= kStripChunkRows) return false;
  const int64_t slots = s.outer * ceil_div(s.n, kStripChunkRows) * s.inner;
  return slots * kSlotCounterWords <= (int64_t)REDUX_CUDA_STREAM_COUNTERS;
}

/* Thread (ty, tx)'s four column sums of the first `rows` (<= 4) of its
 * rows of a chunk, in order from zero: p is its first row's first column,
 * `step` floats to its next row (64 rows on). */
template <typename P, bool ALIGNED, int ROWS>
__device__ __forceinline__ void strip_lane_rows(const float *__restrict__ p, int64_t step, int rows,
                                                typename P::acc_t (&a)[4]) {
  float v[ROWS][4];
#pragma unroll
  for (int k = 0; k < ROWS; ++k) {
    if (ROWS == kStripRowsPerThread || k < rows) { /* a whole chunk's rows: no test */
      if (ALIGNED) {
        const float4 q = __ldcs(reinterpret_cast<const float4 *>(p + k * step));
        v[k][0] = q.x; v[k][1] = q.y; v[k][2] = q.z; v[k][3] = q.w;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) v[k][e] = __ldcs(p + k * step + e);
      }
    }
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) a[e] = P::zero();
#pragma unroll
  for (int k = 0; k < ROWS; ++k)
    if (ROWS == kStripRowsPerThread || k < rows)
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] = P::add(a[e], v[k][e]);
}
template <typename P, bool ALIGNED>
__device__ __forceinline__ void strip_lane_sums(const float *__restrict__ p, int64_t step, int rows,
                                                typename P::acc_t (&a)[4]) {
  if (rows == kStripRowsPerThread) strip_lane_rows<P, ALIGNED, kStripRowsPerThread>(p, step, rows, a);
  else strip_lane_rows<P, ALIGNED, kStripRowsPerThread - 1>(p, step, rows, a);
}

/* The block's fold of the lanes' sums into the chunk's 64 column partials:
 * the partial of column tid / 16 in the threads with tid % 16 == 0 (others:
 * unspecified). Every thread calls it; one barrier (sd is free again only
 * after the caller's next barrier). */
template <typename P>
__device__ __forceinline__ typename P::acc_t strip_block_fold(typename P::acc_t (&a)[4],
                                                              typename P::acc_t (*sd)[kStripCols + 1]) {
  using acc_t = typename P::acc_t;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int e = 0; e < 4; ++e) a[e] = P::combine(a[e], shfl_down(a[e], 16, 32)); /* ty 2w + 1 into 2w */
  if (lane < kStripLanes)
#pragma unroll
    for (int e = 0; e < 4; ++e) sd[warp][lane * 4 + e] = a[e];
  __syncthreads();
  const int col = threadIdx.x / kStripGroups, g = threadIdx.x % kStripGroups;
  constexpr int per = kStripWarps / kStripGroups; /* 2 */
  acc_t w = P::zero();
#pragma unroll
  for (int q = 0; q < per; ++q) w = P::combine(w, sd[g * per + q][col]);
  return warp_reduce_sum<P>(w, kStripGroups);
}

/* The finish's runs of a segment's C chunks: gc = ceil(C / 16) chunks a
 * run, `groups` runs (the last one shorter). Fixed by C alone, so computed
 * once a launch (a kernel parameter: no registers held across segments). */
struct strip_runs {
  uint32_t chunks, gc, groups;
};
__host__ __device__ inline strip_runs strip_runs_of(int64_t chunks) {
  const int64_t gc = ceil_div(chunks, (int64_t)kStripGroups);
  return {(uint32_t)chunks, (uint32_t)gc, (uint32_t)ceil_div(chunks, gc)};
}

/* Finishes segment (o, j): column j * 64 + col's C chunk partials (chunk c
 * at slot or partial (o * C + c) * inner + col), by every thread of the
 * block: thread (g, col) adds chunks [g * gc, (g + 1) * gc) in order,
 * kStripFinishBatch loads in flight (a warp reads 32 adjacent columns of one
 * chunk), then thread (0, col) adds the runs in order. POLLED: from the
 * slots (waiting for each, emptying it), else plain partials. */
template <typename P, bool POLLED, typename Out>
__device__ __forceinline__ void strip_finish(typename P::acc_t (*runs)[kStripCols], const void *parts, Out *y,
                                             int64_t inner, strip_runs sr, int64_t o, int64_t j, int64_t n) {
  using acc_t = typename P::acc_t;
  const int col = threadIdx.x % kStripCols, g = threadIdx.x / kStripCols;
  const int64_t gc = sr.gc, chunks = sr.chunks;
  const int64_t base = (o * chunks + g * gc) * inner + j * kStripCols + col; /* chunk g * gc, this column */
  const int64_t c_end = (g + 1) * gc < chunks ? (g + 1) * gc : chunks;
  acc_t r = P::zero();
  for (int64_t c0 = g * gc, at = base; c0 < c_end; c0 += kStripFinishBatch, at += kStripFinishBatch * inner) {
    if (POLLED) {
      unsigned long long *slots = static_cast<unsigned long long *>(const_cast<void *>(parts)) + kSlotU64 * at;
      slot_words w[kStripFinishBatch];
#pragma unroll
      for (int b = 0; b < kStripFinishBatch; ++b)
        if (c0 + b < c_end) w[b] = load_slot<acc_t>(slots + kSlotU64 * b * inner);
#pragma unroll
      for (int b = 0; b < kStripFinishBatch; ++b) {
        if (c0 + b >= c_end) continue;
        unsigned long long *slot = slots + kSlotU64 * b * inner;
        while (!slot_full(w[b])) w[b] = load_slot<acc_t>(slot);
        store_slot(slot, 0ull, 0ull);
        acc_t v;
        slot_value(w[b], &v);
        r = P::combine(r, v);
      }
    } else {
      const acc_t *partials = static_cast<const acc_t *>(parts);
      acc_t v[kStripFinishBatch];
#pragma unroll
      for (int b = 0; b < kStripFinishBatch; ++b)
        if (c0 + b < c_end) v[b] = load_partial(&partials[at + b * inner]);
#pragma unroll
      for (int b = 0; b < kStripFinishBatch; ++b)
        if (c0 + b < c_end) r = P::combine(r, v[b]);
    }
  }
  runs[g][col] = r;
  __syncthreads();
  if (g == 0) {
    /* the loads unconditional, kStripRunBatch in flight: not one round trip a run */
    acc_t t = runs[0][col];
#pragma unroll
    for (int q0 = 0; q0 < kStripGroups; q0 += kStripRunBatch) {
      acc_t v[kStripRunBatch];
#pragma unroll
      for (int i = 0; i < kStripRunBatch; ++i) v[i] = runs[q0 + i][col];
#pragma unroll
      for (int i = 0; i < kStripRunBatch; ++i)
        if (q0 + i > 0 && q0 + i < sr.groups) t = P::combine(t, v[i]);
    }
    y[o * inner + j * kStripCols + col] = P::finish(t, n);
  }
  __syncthreads(); /* runs is rewritten by the next segment */
}

/* Two blocks an SM with fp64 accumulators (32 registers, as the fastest
 * pure reads); one with compensated ones (fp64 output), which need more. */
template <typename P>
constexpr int strips_min_blocks() {
  return sizeof(typename P::acc_t) > 8 ? 1 : 2;
}

/* Where a launch's items lie, fixed at launch so that a block's first
 * load waits on few instructions (a block lives ~9000 cycles; two integer
 * divisions cost 0.3 us at (256, 4096, 64)): the
 * divisors of an item's index (the strips of a row, the chunks [c0, c1) of
 * a slice) and the floats from one slice's rows of those chunks to the
 * next's. Items, strips and chunks fit 31 bits: the slots of all items fit
 * the stream counters (cols_use_strips), or one shard's chunks do (a grid of
 * at most 2^31 - 1 blocks). */
struct strip_layout {
  fast_div strips, chunks;
  int64_t slice_floats;
  strip_runs runs; /* of chunks [c0, c1): the polled finish's */
};
static strip_layout strip_layout_of(redux_shape s, int64_t c0, int64_t c1) {
  const int64_t rows = (c1 * kStripChunkRows < s.n ? c1 * kStripChunkRows : s.n) - c0 * kStripChunkRows;
  return {fast_div::of((uint32_t)(s.inner / kStripCols)), fast_div::of((uint32_t)(c1 - c0)), rows * s.inner,
          strip_runs_of(c1 - c0)};
}

/* Work item `item` of chunks [c0, c1) (see sum_strips_kernel): its lane
 * sums, the block fold and the 64 partials stored. */
template <typename P, bool ALIGNED, bool POLLED>
__device__ __forceinline__ void strip_item(const float *__restrict__ x, int64_t n, int64_t inner, int64_t c0,
                                           strip_layout L, unsigned item, typename P::acc_t (*sd)[kStripCols + 1],
                                           void *parts) {
  using acc_t = typename P::acc_t;
  const int tx = threadIdx.x % kStripLanes, ty = threadIdx.x / kStripLanes;
  const unsigned k = L.chunks.d, q = L.strips.div(item), j = item - q * L.strips.d, o = L.chunks.div(q);
  const unsigned cq = q - o * k; /* the chunk, of [c0, c1) */
  const int64_t c = c0 + cq;
  const float *p = x + o * L.slice_floats + ((int64_t)cq * kStripChunkRows + ty) * inner + j * kStripCols + tx * 4;
  const int64_t step = kStripRowLanes * inner;
  acc_t a[4];
  if ((c + 1) * kStripChunkRows <= n) { /* a whole chunk: four rows a thread */
    strip_lane_rows<P, ALIGNED, kStripRowsPerThread>(p, step, kStripRowsPerThread, a);
  } else { /* the last, short chunk (the fp32 forms' 16-24 spilled bytes are on this path alone) */
    const int64_t left = n - (c * kStripChunkRows + ty); /* rows from this thread's first */
    strip_lane_sums<P, ALIGNED>(p, step, left <= 0 ? 0 : (int)ceil_div(left, (int64_t)kStripRowLanes), a);
  }
  const acc_t w = strip_block_fold<P>(a, sd);
  if (threadIdx.x % kStripGroups == 0) {
    /* ((o * k + cq) * inner + j * 64 + column): the item's 64 partials lie
     * in item order (inner = 64 strips), so nothing else stays live */
    const int64_t at = (int64_t)item * kStripCols + threadIdx.x / kStripGroups;
    if (POLLED) publish_slot(static_cast<unsigned long long *>(parts), at, w);
    else static_cast<acc_t *>(parts)[at] = w;
  }
}

/* The strips tree's streaming blocks, then (POLLED) `finishers` finishing
 * blocks launched after them. Blocks [0, gridDim.x - finishers) take items
 * blockIdx.x, + that count, ... (STRIDED: a forced grid), else item
 * blockIdx.x (a block an item). POLLED: each
 * publishes its 64 partials into slots, which the finishing blocks combine
 * (segments f, f + finishers, ...); else (sharded units) the partials of
 * chunks [c0, c1) are stored plainly at (o * (c1 - c0) + c - c0) * inner +
 * column, x holding only those chunks' rows of the `outer` slices. */
template <typename P, bool ALIGNED, bool POLLED, bool STRIDED>
__global__ void __launch_bounds__(kStripBlock, strips_min_blocks<P>())
sum_strips_kernel(const float *__restrict__ x, typename P::out_t *__restrict__ y, int64_t n, int64_t inner,
                  int64_t outer, int64_t c0, strip_layout L, int64_t finishers, void *parts) {
  static_assert(std::is_same<typename P::in_t, float>::value, "the strips tree reads float32");
  using acc_t = typename P::acc_t;
  __shared__ acc_t sd[kStripWarps][kStripCols + 1];
  const unsigned streaming = gridDim.x - (unsigned)finishers;
  if (POLLED && blockIdx.x >= streaming) {
    acc_t(*runs)[kStripCols] = reinterpret_cast<acc_t(*)[kStripCols]>(&sd[0][0]);
    for (unsigned seg = blockIdx.x - streaming; seg < outer * L.strips.d; seg += (unsigned)finishers) {
      const unsigned o = L.strips.div(seg);
      strip_finish<P, true>(runs, parts, y, inner, L.runs, o, seg - o * L.strips.d, n);
    }
    return;
  }
  if (!STRIDED) { /* the grid is the items, then the finishers */
    strip_item<P, ALIGNED, POLLED>(x, n, inner, c0, L, blockIdx.x, sd, parts);
  } else {
    const unsigned items = (unsigned)outer * L.chunks.d * L.strips.d;
    for (unsigned item = blockIdx.x; item < items; item += streaming) {
      strip_item<P, ALIGNED, POLLED>(x, n, inner, c0, L, item, sd, parts);
      __syncthreads(); /* sd is rewritten by the next item */
    }
  }
}

/* The sharded units' finish: segments grid-stride, from plain partials. */
template <typename P>
__global__ void __launch_bounds__(kStripBlock)
strips_finish_kernel(const typename P::acc_t *partials, typename P::out_t *y, int64_t outer, int64_t inner,
                     int64_t chunks) {
  static_assert(P::reduction != REDUX_MEAN_OF_VALUES, "sharded finishes are sums'");
  __shared__ typename P::acc_t runs[kStripGroups][kStripCols];
  const int64_t strips = inner / kStripCols;
  const strip_runs sr = strip_runs_of(chunks);
  for (int64_t seg = blockIdx.x; seg < outer * strips; seg += gridDim.x)
    strip_finish<P, false>(runs, partials, y, inner, sr, seg / strips, seg % strips, 0);
}

static family_plan strips_family_plan(redux_shape s) {
  family_plan p;
  p.segments = s.outer * ceil_div(s.n, kStripChunkRows) * s.inner * kSlotCounterWords;
  p.partials = 0;
  return p;
}

/* The strips tree's launch: a block an item (or the forced grid's blocks
 * over the items), then at most a finishing block an SM (schedule only: the
 * finish's order is fixed). */
template <typename P>
redux_status launch_strips(const float *x, typename P::out_t *y, void *ws, size_t ws_bytes,
                           unsigned int *stream_counters, size_t stream_counters_len, redux_shape s, int grid,
                           cudaStream_t stream) {
  const family_plan p = strips_family_plan(s);
  unsigned int *counters;
  typename P::acc_t *unused;
  const redux_status st =
      prepare_workspace(p, ws, ws_bytes, stream_counters, stream_counters_len, stream, &counters, &unused);
  if (st != REDUX_OK) return st;
  const int64_t chunks = ceil_div(s.n, kStripChunkRows), segments = s.outer * (s.inner / kStripCols);
  const int64_t streaming = grid > 0 ? grid : s.outer * chunks * (s.inner / kStripCols);
  /* as few finishers as finish the segments in as many rounds as one an SM
   * would, each the same count (fewer blocks; 128, 132 and 256 finishers
   * measured level for 256 segments) */
  const int64_t rounds = ceil_div(segments, device_sms()), finishers = ceil_div(segments, rounds);
  const bool aligned = (uintptr_t)x % 16 == 0;
  auto kernel = grid > 0 ? (aligned ? sum_strips_kernel<P, true, true, true> : sum_strips_kernel<P, false, true, true>)
                         : (aligned ? sum_strips_kernel<P, true, true, false> : sum_strips_kernel<P, false, true, false>);
  kernel<<<(unsigned)(streaming + finishers), kStripBlock, 0, stream>>>(
      x, y, s.n, s.inner, s.outer, 0, strip_layout_of(s, 0, chunks), finishers, counters);
  return launch_status();
}

/* The finish and grid of a columns launch. */
struct cols_choice {
  bool clustered;
  int grid;
};

/* The cluster finish where the chunk count fits a cluster, the device and
 * this build run clusters, and the grid is whole clusters: forced so, or
 * chosen like grid_for in clusters. A chosen cluster grid must have at
 * least the ticket grid's blocks: the hardware places whole clusters per
 * GPC, so fewer may fit at once (at (8192, 8192) fp32, 8-block clusters fit
 * in fewer than the 64 needed, and the two-wave grid of half the blocks
 * lost 3 us on the H200). */
template <typename K>
cols_choice choose_cols_finish(K kernel, int64_t chunks, int64_t items, int forced_grid) {
  const int ticket_grid = grid_for(kernel, items, forced_grid);
  const bool can = chunks >= 2 && chunks <= kColsClusterMax && forced_grid % chunks == 0;
  const int64_t fit = can ? cluster_fit(reinterpret_cast<const void *>(kernel), (int)chunks) : 0;
  if (fit > 0) {
    const int64_t segments = items / chunks;
    const int64_t g = forced_grid > 0 ? forced_grid : ceil_div(segments, ceil_div(segments, fit)) * chunks;
    if (forced_grid > 0 || g >= ticket_grid) return {true, (int)g};
  }
  return {false, ticket_grid};
}

/* Launches `kernel` as clusters of `cluster` blocks. */
template <typename K, typename... Args>
redux_status launch_clusters(K kernel, int grid, int cluster, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = (unsigned)cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3((unsigned)grid);
  cfg.blockDim = dim3(kBlock);
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, args...);
  const redux_status launched = launch_status(); /* also clears a launch error */
  return e == cudaSuccess ? launched : REDUX_ERR_CUDA;
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

  template <typename P, int VEC>
  redux_status launch(const family_plan &p) const {
    using In = typename P::in_t;
    using Out = typename P::out_t;
    using acc_t = typename P::acc_t;
    const int64_t tiles = ceil_div(s.inner, (int64_t)c.tx * VEC);
    const int64_t items = s.outer * c.chunks * tiles;
    const bool evict_first = stream_hint(s.outer * s.n * s.inner * (int64_t)sizeof(In));
    auto kernel = evict_first ? sum_cols_kernel<P, VEC, true> : sum_cols_kernel<P, VEC, false>;
    const cols_choice L = choose_cols_finish(kernel, c.chunks, items, grid);
    const In *in = static_cast<const In *>(x);
    Out *out = static_cast<Out *>(y);
    if (L.clustered) {
      /* The same workspace contract as the ticket finish, which it does not use. */
      const redux_status st = check_workspace(p, ws, ws_bytes, sizeof(acc_t),
                                              uses_stream_counters(p, stream_counters, stream_counters_len));
      if (st != REDUX_OK) return st;
      return launch_clusters(kernel, L.grid, (int)c.chunks, stream, in, out, s.n, s.inner, c, tiles, items,
                             (unsigned int *)nullptr, (acc_t *)nullptr, true);
    }
    unsigned int *counters;
    acc_t *partials;
    const redux_status st = prepare_workspace(p, ws, ws_bytes, stream_counters, stream_counters_len, stream, &counters,
                                              &partials);
    if (st != REDUX_OK) return st;
    kernel<<<L.grid, kBlock, 0, stream>>>(in, out, s.n, s.inner, c, tiles, items, counters, partials, false);
    return launch_status();
  }

  template <typename P>
  redux_status operator()() const {
    constexpr int VEC = vec_of<typename P::in_t>::value;
    const family_plan p = cols_family_plan(s, c);
    const bool vec_ok = ((uintptr_t)x % 16 == 0) && (s.inner % VEC == 0);
    return vec_ok ? launch<P, VEC>(p) : launch<P, 1>(p);
  }
};

/* The strips tree's launch for a float32 input (cols_use_strips). */
struct launch_strips_fn {
  const void *x;
  void *y;
  void *ws;
  size_t ws_bytes;
  unsigned int *counters;
  size_t counters_len;
  redux_shape s;
  int grid;
  cudaStream_t stream;

  template <typename P>
  redux_status operator()() const {
    if constexpr (!std::is_same<typename P::in_t, float>::value) {
      return REDUX_ERR_DTYPE;
    } else {
      return launch_strips<P>(static_cast<const float *>(x), static_cast<typename P::out_t *>(y), ws, ws_bytes,
                              counters, counters_len, s, grid, stream);
    }
  }
};

redux_status launch_cols(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                         unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out,
                         int grid, cudaStream_t stream) {
  if (cols_use_strips(s, in))
    return dispatch_policy(r, in, out, launch_strips_fn{x, y, ws, ws_bytes, counters, counters_len, s, grid, stream});
  return dispatch_policy(r, in, out, launch_cols_fn{x, y, ws, ws_bytes, counters, counters_len, s, grid, stream,
                                                    plan_cols(s, in)});
}

/* The workspace plan of whichever tree the shape takes. */
static family_plan cols_workspace_plan(redux_shape s, redux_dtype in) {
  return cols_use_strips(s, in) ? strips_family_plan(s) : cols_family_plan(s, plan_cols(s, in));
}

size_t cols_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, size_t counters_len) {
  return workspace_bytes_beside(cols_workspace_plan(s, in), acc_bytes(in, out), counters_len);
}

size_t cols_counters(redux_shape s, redux_dtype in) { return (size_t)cols_workspace_plan(s, in).segments; }

/* ---- Sharded sums (redux.h, redux_cuda_sum_unit_partials) ----
 * A unit is one chunk of L rows. cols_partials_kernel adds chunks [c0, c1)
 * of every (slice, column) exactly as sum_cols_kernel does with VEC = 1 (a
 * column's additions never depend on VEC) and stores them;
 * cols_finish_kernel finishes each (slice, tile) as the ticket finish does. */
template <typename P>
__global__ void __launch_bounds__(kBlock, kColsMinBlocks)
cols_partials_kernel(const typename P::in_t *__restrict__ x, typename P::acc_t *partials, int64_t outer, int64_t n,
                     int64_t inner, cols_plan cp, int64_t c0, int64_t c1) {
  using acc_t = typename P::acc_t;
  __shared__ acc_t red[kBlock];
  const int tx = threadIdx.x % cp.tx;
  const int ty = threadIdx.x / cp.tx;
  const int64_t k = c1 - c0;
  const int64_t tiles = ceil_div(inner, (int64_t)cp.tx);
  const int64_t row_base = c0 * cp.rows_per_chunk;
  const int64_t local_n = (c1 * cp.rows_per_chunk < n ? c1 * cp.rows_per_chunk : n) - row_base;
  for (int64_t item = blockIdx.x; item < outer * k * tiles; item += gridDim.x) {
    const int64_t j = item % tiles;
    const int64_t c = c0 + (item / tiles) % k;
    const int64_t o = (item / tiles) / k;
    const int64_t col = j * cp.tx + tx;
    const int64_t r0 = c * cp.rows_per_chunk + ty;
    const int64_t row_end = (c + 1) * cp.rows_per_chunk < n ? (c + 1) * cp.rows_per_chunk : n;
    const int64_t rows = r0 < row_end ? ceil_div(row_end - r0, (int64_t)cp.ty) : 0;
    acc_t acc[1] = {P::zero()};
    if (col < inner && rows > 0)
      lane_sum_column_vecs<P, 1, kColsUnroll, false, false>(x + (o * local_n + r0 - row_base) * inner + col, rows,
                                                          cp.ty * inner, acc);
    cols_tree_over_ty<P, 1>(red, acc, ty, cp);
    if (ty == 0 && col < inner) partials[(o * k + c - c0) * inner + col] = red[tx];
    __syncthreads(); /* red is rewritten by the next item */
  }
}

template <typename P>
__global__ void __launch_bounds__(kBlock)
cols_finish_kernel(const typename P::acc_t *partials, typename P::out_t *y, int64_t outer, int64_t inner,
                   cols_plan cp) {
  using Out = typename P::out_t;
  static_assert(P::reduction != REDUX_MEAN_OF_VALUES, "sharded finishes are sums'");
  __shared__ typename P::acc_t red[kBlock];
  const int64_t tiles = ceil_div(inner, (int64_t)cp.tx);
  for (int64_t item = blockIdx.x; item < outer * tiles; item += gridDim.x) {
    cols_ticket_finish<P, Out>(red, partials, y, inner, item / tiles, (item % tiles) * cp.tx, cp.tx, cp, 0);
    __syncthreads();
  }
}

struct cols_sharded_fn {
  const void *x; /* partials_kernel: the input; finish: the partials */
  void *out;     /* partials_kernel: the partials; finish: y */
  redux_shape s;  /* outer: the slices x holds (the plan is the whole problem's) */
  int64_t c0, c1; /* c1 == 0: the finish */
  cudaStream_t stream;
  cols_plan c;

  template <typename P>
  redux_status operator()() const {
    using In = typename P::in_t;
    using Out = typename P::out_t;
    using acc_t = typename P::acc_t;
    const int64_t tiles = ceil_div(s.inner, (int64_t)c.tx);
    if (c1 == 0) {
      auto kernel = cols_finish_kernel<P>;
      kernel<<<grid_for(kernel, s.outer * tiles, 0), kBlock, 0, stream>>>(
          static_cast<const acc_t *>(x), static_cast<Out *>(out), s.outer, s.inner, c);
    } else {
      auto kernel = cols_partials_kernel<P>;
      kernel<<<grid_for(kernel, s.outer * (c1 - c0) * tiles, 0), kBlock, 0, stream>>>(
          static_cast<const In *>(x), static_cast<acc_t *>(out), s.outer, s.n, s.inner, c, c0, c1);
    }
    return launch_status();
  }
};

int64_t cols_unit(redux_shape s, redux_dtype in) {
  if (cols_use_strips(s, in)) return kStripChunkRows;
  const cols_plan c = plan_cols(s, in);
  return c.chunks > 1 ? c.rows_per_chunk : s.n;
}

/* The strips tree's sharded units: chunks [c0, c1) of `outer` slices into
 * plain partials, or (c1 == 0) the finish from all of them. */
struct strips_sharded_fn {
  const void *x; /* partials: the input's rows of those chunks; finish: the partials */
  void *out;     /* partials: the partials; finish: y */
  redux_shape s; /* outer: the slices x holds */
  int64_t c0, c1;
  cudaStream_t stream;

  template <typename P>
  redux_status operator()() const {
    if constexpr (!std::is_same<typename P::in_t, float>::value) {
      return REDUX_ERR_DTYPE; /* cols_use_strips: fp32 input only */
    } else {
      using Out = typename P::out_t;
      using acc_t = typename P::acc_t;
      const int64_t chunks = ceil_div(s.n, kStripChunkRows), strips = s.inner / kStripCols;
      if (c1 == 0) {
        auto kernel = strips_finish_kernel<P>;
        const int64_t sms = device_sms(), segments = s.outer * strips;
        kernel<<<(unsigned)(sms < segments ? sms : segments), kStripBlock, 0, stream>>>(
            static_cast<const acc_t *>(x), static_cast<Out *>(out), s.outer, s.inner, chunks);
      } else {
        const float *xf = static_cast<const float *>(x);
        auto kernel = (uintptr_t)xf % 16 == 0 ? sum_strips_kernel<P, true, false, false>
                                              : sum_strips_kernel<P, false, false, false>;
        kernel<<<(unsigned)(s.outer * (c1 - c0) * strips), kStripBlock, 0, stream>>>(
            xf, (Out *)nullptr, s.n, s.inner, s.outer, c0, strip_layout_of(s, c0, c1), (int64_t)0, out);
      }
      return launch_status();
    }
  }
};

redux_status cols_unit_partials(const void *x, void *partials, redux_shape s, int64_t outer, int64_t u0,
                                int64_t u1, redux_dtype in, redux_dtype out, cudaStream_t stream) {
  const redux_shape held{outer, s.n, s.inner};
  if (cols_use_strips(s, in)) return dispatch_sum(in, out, strips_sharded_fn{x, partials, held, u0, u1, stream});
  return dispatch_sum(in, out, cols_sharded_fn{x, partials, held, u0, u1, stream, plan_cols(s, in)});
}

redux_status cols_from_partials(const void *partials, void *y, redux_shape s, int64_t outer, redux_dtype in,
                                redux_dtype out, cudaStream_t stream) {
  const redux_shape held{outer, s.n, s.inner};
  if (cols_use_strips(s, in)) return dispatch_sum(in, out, strips_sharded_fn{partials, y, held, 0, 0, stream});
  return dispatch_sum(in, out, cols_sharded_fn{partials, y, held, 0, 0, stream, plan_cols(s, in)});
}

}  // namespace redux
