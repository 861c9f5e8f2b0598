/* Full reduction [n] -> [] and long rows [outer, n] -> [outer]:
 * one launch, single pass, deterministic last-block finish.
 *
 *   sum_wide_kernel     A full sum of a streamed input (the plan's wide
 *                       tree): chunks of kWideTiles tiles of kWideBlock
 *                       vectors, a block of kWideBlock threads per chunk;
 *                       thread t adds vector t of each tile in tile order,
 *                       the block reduces, and the chunk partials go to
 *                       polled slots (a ticket for integer accumulators)
 *                       that the last block (in a long grid, a dedicated
 *                       finishing block) combines in chunk order.
 *                       Straight-line, a block per chunk; grid-stride
 *                       under a forced grid.
 *   sum_wide_short_kernel  The wide tree of an input of at most kBlock
 *                       vectors, on kBlock threads (the same bits).
 *   sum_chunks_kernel   Each row is cut into tiles of kBlock vectors (16-byte
 *                       loads) and runs of per_chunk tiles make its chunks:
 *                       chunk c holds tiles [c * per_chunk, (c + 1) *
 *                       per_chunk) (shape-only). A work item is one (row,
 *                       chunk); blocks grid-stride over work items (a full
 *                       sum launches a block per chunk). Thread t
 *                       adds vector t of each of its chunk's tiles in tile
 *                       order, kUnroll tiles in flight (lane_sum_tiles), and
 *                       the block reduces (warp shuffle, then warps in
 *                       order). Chunks are contiguous so that a shard of a
 *                       row that starts on a chunk holds whole chunks: the
 *                       partials of a range (chunk_partials_kernel) are then
 *                       the very partials of the one-device sum.
 *                       One chunk per row: the block writes the result.
 *                       Otherwise it stores the chunk's partial, and
 *                       - outer == 1, input up to kPollMaxBytes: the
 *                         polled finish (finish.cuh): partials go to slots
 *                         with no fence or ticket, and the grid's last
 *                         block waits for them and combines;
 *                       - outer == 1, larger inputs: each block takes one
 *                         ticket after all its chunks; the last block
 *                         combines all partials;
 *                       - outer > 1: a ticket per chunk on the row's counter;
 *                         the last block of a row combines that row's.
 *                       Either way partials are combined in chunk order by
 *                       the same fixed tree (combine_strided + block reduce).
 *   plan_chunks         the shape-only cut (chunk_plan.cuh).
 *
 * Why it is deterministic: the chunk a value lands in, its thread, its
 * position in that thread's sequence and the trees above are functions of
 * (outer, n, dtype) only. Alignment only picks vector or scalar loads of the
 * same elements in the same order, the size only a cache hint. The grid only
 * schedules work items.
 */
#include "dispatch.cuh"
#include "families.h"
#include "chunk_plan.cuh"
#include "grid.cuh"

namespace redux {

/* Chunk c of a row: its first element and its length. */
__device__ __forceinline__ int64_t chunk_begin(int64_t c, int64_t chunk_len) { return c * chunk_len; }
__device__ __forceinline__ int64_t chunk_count(int64_t c, int64_t chunk_len, int64_t n) {
  return n - c * chunk_len < chunk_len ? n - c * chunk_len : chunk_len;
}

/* The last block (BLOCK threads: the chunk's lanes): combines a row's chunk
 * partials in chunk order; n: the row's length (P::finish). */
template <typename P, typename Out, int BLOCK = kBlock>
__device__ __forceinline__ void combine_row(const typename P::acc_t *partials, int64_t chunks,
                                            typename P::acc_t *scratch, Out *y, int64_t n) {
  typename P::acc_t r = combine_strided<P>(P::zero(), partials, threadIdx.x, chunks, BLOCK);
  r = block_reduce_sum<P, BLOCK>(r, scratch);
  if (threadIdx.x == 0) *y = P::finish(r, n);
}

/* How a launch of sum_chunks_kernel finishes (chosen by the plan; a
 * template argument so each kernel carries only its own finish: with all
 * three in one kernel the full sum spilled and ran 2% slower, 81.3 against
 * 79.6 us at 52.4M fp32 on the H100). */
enum chunks_finish { kFinishRows, kFinishTicket, kFinishPolled };

template <typename P, bool ALIGNED, bool STREAM, int FINISH>
__global__ void __launch_bounds__(kBlock, kChunksMinBlocks)
sum_chunks_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ y, int64_t outer, int64_t n,
                  int64_t chunks, int64_t chunk_len, unsigned int *counters, typename P::acc_t *partials) {
  using In = typename P::in_t;
  using Out = typename P::out_t;
  using acc_t = typename P::acc_t;
  constexpr int VEC = vec_of<In>::value;
  __shared__ acc_t scratch[kBlock / 32];
  const int tid = threadIdx.x;
  const int64_t items = outer * chunks;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t row = FINISH == kFinishRows ? item / chunks : 0;
    const int64_t c = item - row * chunks;
    acc_t acc = lane_sum_tiles<P, VEC, kUnroll, ALIGNED, STREAM>(x + row * n + chunk_begin(c, chunk_len),
                                                                 chunk_count(c, chunk_len, n), 0, 1, tid,
                                                                 kBlock, P::zero());
    acc = block_reduce_sum<P, kBlock>(acc, scratch);
    if (chunks == 1) {
      if (tid == 0) y[row] = P::finish(acc, n);
      continue;
    }
    if constexpr (FINISH == kFinishPolled) {
      if (tid == 0) publish_slot(reinterpret_cast<unsigned long long *>(counters), item, acc);
      continue; /* the grid's last block combines, below */
    }
    if (tid == 0) partials[item] = acc;
    if constexpr (FINISH == kFinishRows) {
      if (last_block_ticket(counters, row, (unsigned int)chunks))
        combine_row<P, Out>(partials + row * chunks, chunks, scratch, y + row, n);
    }
  }
  if (FINISH == kFinishRows || chunks == 1) return;
  if constexpr (FINISH == kFinishPolled) {
    if (blockIdx.x != gridDim.x - 1) return;
    /* Fewer dd slots in flight (16 bytes each): fewer registers. */
    acc_t r = combine_polled<P, (sizeof(acc_t) > 8 ? 2 : 8)>(P::zero(), reinterpret_cast<unsigned long long *>(counters),
                                                             tid, chunks, kBlock);
    r = block_reduce_sum<P, kBlock>(r, scratch);
    if (tid == 0) *y = P::finish(r, n);
    return;
  }
  /* kFinishTicket: one ticket per block after all its chunks. */
  if (last_block_ticket(counters, 0, gridDim.x)) combine_row<P, Out>(partials, chunks, scratch, y, n);
}

/* The wide tree's polled finish, run by the grid's last chunk block or by
 * a dedicated finishing block (BATCH: 8-byte slots in flight a lane; a dd
 * slot counts as two). Inlined, since a call cost 0.3-0.5 us. The last
 * chunk block keeps four in flight, since eight spill in the block-per-chunk
 * kernel; the dedicated block, which holds no chunk, keeps eight
 * (docs/notes/full-sum.md). */
template <typename P, int BATCH, typename Out>
__device__ __forceinline__ void wide_polled_finish(unsigned int *counters, int64_t chunks, typename P::acc_t *scratch,
                                                Out *y, int64_t n) {
  using acc_t = typename P::acc_t;
  acc_t r = combine_polled<P, (sizeof(acc_t) > 8 ? BATCH / 4 : BATCH)>(
      P::zero(), reinterpret_cast<unsigned long long *>(counters), threadIdx.x, chunks, kWideBlock);
  r = block_reduce_sum<P, kWideBlock>(r, scratch);
  if (threadIdx.x == 0) *y = P::finish(r, n);
}

/* Thread threadIdx.x's lane sum of wide chunk c: vector t of each of its
 * tiles, in tile order. A whole chunk by direct loads with no loop, every
 * load in flight before the adds; a short last chunk by lane_sum_tiles,
 * which adds the same elements in the same order. */
template <typename P, typename In, bool ALIGNED>
__device__ __forceinline__ typename P::acc_t wide_lane_sum(const In *__restrict__ x, int64_t n, int64_t c,
                                                           int64_t chunk_len) {
  constexpr int VEC = vec_of<In>::value;
  const In *base = x + chunk_begin(c, chunk_len);
  const int64_t count = chunk_count(c, chunk_len, n);
  typename P::acc_t acc = P::zero();
  if (count != chunk_len)
    return lane_sum_tiles<P, VEC, kWideTiles, ALIGNED, true>(base, count, 0, 1, threadIdx.x, kWideBlock, acc);
  In v[kWideTiles][VEC];
#pragma unroll
  for (int k = 0; k < kWideTiles; ++k)
    load_vec<In, VEC, ALIGNED, true>(base + ((int64_t)k * kWideBlock + threadIdx.x) * VEC, v[k]);
#pragma unroll
  for (int k = 0; k < kWideTiles; ++k)
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc = P::add(acc, v[k][e]);
  return acc;
}

/* Thread 0's store of chunk c's partial: the result itself when the row is
 * one chunk, else a polled slot or the partials array. */
template <typename P, typename Out, bool POLLED>
__device__ __forceinline__ void wide_store(typename P::acc_t acc, int64_t c, int64_t chunks, Out *y,
                                           unsigned int *counters, typename P::acc_t *partials, int64_t n) {
  if (chunks == 1) *y = P::finish(acc, n);
  else if constexpr (POLLED) publish_slot(reinterpret_cast<unsigned long long *>(counters), c, acc);
  else partials[c] = acc;
}

/* Grids of more than this many waves of wide chunk blocks (blocks that fit
 * on the device at once) get a dedicated finishing block, launched after
 * the chunks: it combines each slot as it fills, so when the last chunk
 * lands only a few slots and the tree are left, where the last chunk's block
 * would first read its own chunk and then wait on every slot. Below 8 waves
 * a block polling through a short grid takes more than it saves
 * (docs/notes/full-sum.md). Schedule only: the same slots combined in the
 * same order. */
constexpr int64_t kWideDedicatedWaves = 8;

/* The wide tree (plan_chunks: a full sum of a streamed input). STRIDED
 * false: a block per chunk, straight-line (the launch the plan makes);
 * true: blocks take chunks grid-stride (a forced grid). The same chunks,
 * lanes and trees either way, so the same bits. POLLED: the partials go to
 * slots and the grid's last block waits for them (or, in a grid of chunks
 * + 1 blocks, block `chunks`, which holds no chunk); else a ticket per
 * block. */
template <typename P, bool ALIGNED, bool POLLED, bool STRIDED, bool DEDICATED = false>
__global__ void __launch_bounds__(kWideBlock, kWideMinBlocks)
sum_wide_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ y, int64_t n, int64_t chunks,
                int64_t chunk_len, unsigned int *counters, typename P::acc_t *partials) {
  using In = typename P::in_t;
  using Out = typename P::out_t;
  using acc_t = typename P::acc_t;
  __shared__ acc_t scratch[kWideBlock / 32];
  if constexpr (DEDICATED) {
    /* A grid of chunks + 1 blocks: block `chunks` finishes, the others only
     * publish. A kernel of its own, so the chunk blocks' registers are those
     * of a kernel without a finish. */
    static_assert(POLLED && !STRIDED, "the dedicated finisher waits on polled slots of a block-per-chunk grid");
    if (blockIdx.x == chunks) {
      wide_polled_finish<P, 8>(counters, chunks, scratch, y, n);
    } else {
      const acc_t acc = block_reduce_sum<P, kWideBlock, false>(
          wide_lane_sum<P, In, ALIGNED>(x, n, blockIdx.x, chunk_len), scratch);
      if (threadIdx.x == 0) publish_slot(reinterpret_cast<unsigned long long *>(counters), blockIdx.x, acc);
    }
    return;
  } else if constexpr (STRIDED) {
    for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
      const acc_t acc = block_reduce_sum<P, kWideBlock>(wide_lane_sum<P, In, ALIGNED>(x, n, c, chunk_len), scratch);
      if (threadIdx.x == 0) wide_store<P, Out, POLLED>(acc, c, chunks, y, counters, partials, n);
    }
  } else {
    /* No barrier after the block tree: only the finishing block reuses
     * scratch, and it waits first. */
    const acc_t acc =
        block_reduce_sum<P, kWideBlock, false>(wide_lane_sum<P, In, ALIGNED>(x, n, blockIdx.x, chunk_len), scratch);
    if (threadIdx.x == 0) wide_store<P, Out, POLLED>(acc, blockIdx.x, chunks, y, counters, partials, n);
  }
  if (chunks == 1) return;
  if constexpr (POLLED) {
    if (blockIdx.x != gridDim.x - 1) return;
    if (!STRIDED) __syncthreads(); /* warp 0 has read scratch: the finish's tree rewrites it */
    wide_polled_finish<P, 4>(counters, chunks, scratch, y, n);
  } else {
    /* The ticket's barrier comes after warp 0's tree: scratch is free again. */
    if (last_block_ticket(counters, 0, gridDim.x)) combine_row<P, Out, kWideBlock>(partials, chunks, scratch, y, n);
  }
}

/* A full sum of at most kBlock vectors (a wide tree of one chunk whose
 * lanes kBlock and up hold nothing) on kBlock threads: the same lane sums,
 * and block_reduce_sum<P, kBlock> gives the bits of the kWideBlock tree
 * (the levels it skips add only +0: reduce.cuh). sum_wide_kernel would
 * launch kWideBlock threads, three quarters of them idle. */
template <typename P, bool ALIGNED>
__global__ void __launch_bounds__(kBlock)
sum_wide_short_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ y, int64_t n) {
  using In = typename P::in_t;
  constexpr int VEC = vec_of<In>::value;
  __shared__ typename P::acc_t scratch[kBlock / 32];
  /* lane_sum_tiles' partial tile: vector t of the input, the rest of it
   * element by element. */
  typename P::acc_t acc = add_vec_or_rest<P, VEC, ALIGNED, true>(x, (int64_t)threadIdx.x * VEC, n, P::zero());
  acc = block_reduce_sum<P, kBlock, false>(acc, scratch);
  if (threadIdx.x == 0) *y = P::finish(acc, n);
}

/* The wide kernel for (alignment, forced grid). */
template <typename P, bool POLLED>
auto wide_kernel_for(bool aligned, bool strided) {
  return aligned ? (strided ? sum_wide_kernel<P, true, POLLED, true> : sum_wide_kernel<P, true, POLLED, false>)
                 : (strided ? sum_wide_kernel<P, false, POLLED, true> : sum_wide_kernel<P, false, POLLED, false>);
}

/* The polled wide kernel of a grid with a dedicated finishing block. */
template <typename P>
auto wide_dedicated_kernel_for(bool aligned) {
  return aligned ? sum_wide_kernel<P, true, true, false, true> : sum_wide_kernel<P, false, true, false, true>;
}

/* The kernel for (alignment, cache hint, finish). */
template <typename P, int FINISH>
auto chunks_kernel_for(bool aligned, bool evict_first) {
  return aligned ? (evict_first ? sum_chunks_kernel<P, true, true, FINISH> : sum_chunks_kernel<P, true, false, FINISH>)
                 : (evict_first ? sum_chunks_kernel<P, false, true, FINISH> : sum_chunks_kernel<P, false, false, FINISH>);
}

/* The launch of a chunks plan. Wide-tree inputs are streamed ones
 * (evict-first loads); a forced grid runs the 1024-thread kernel
 * grid-stride, which keeps the plan's own launches comparable bit for bit
 * against it (test_contracts); a long polled grid gets one more block, the
 * dedicated finisher (kWideDedicatedWaves). */
struct launch_chunks_fn {
  const void *x;
  void *y;
  void *ws;
  size_t ws_bytes;
  unsigned int *stream_counters;
  size_t stream_counters_len;
  redux_shape s;
  int grid;
  cudaStream_t stream;
  chunks_plan p;

  /* A wide-tree plan: one short block, or the polled grid (with the
   * dedicated finisher when long), or the ticket-finished grid. */
  template <typename P>
  redux_status launch_wide(const typename P::in_t *xin, typename P::out_t *yout, bool aligned, int64_t chunk_len,
                           unsigned int *counters, typename P::acc_t *partials) const {
    if (grid == 0 && s.n <= (int64_t)kBlock * vec_of<typename P::in_t>::value) {
      auto kernel = aligned ? sum_wide_short_kernel<P, true> : sum_wide_short_kernel<P, false>;
      kernel<<<1, kBlock, 0, stream>>>(xin, yout, s.n);
      return launch_status();
    }
    const int g = grid_per_item(p.chunks, grid);
    if constexpr (pollable<typename P::acc_t>::value) {
      if (p.polled) {
        auto dedicated = wide_dedicated_kernel_for<P>(aligned);
        if (grid == 0 &&
            p.chunks > kWideDedicatedWaves * device_fit(reinterpret_cast<const void *>(dedicated), 0, kWideBlock)) {
          dedicated<<<g + 1, kWideBlock, 0, stream>>>(xin, yout, s.n, p.chunks, chunk_len, counters, partials);
          return launch_status();
        }
        auto kernel = wide_kernel_for<P, true>(aligned, grid > 0);
        kernel<<<g, kWideBlock, 0, stream>>>(xin, yout, s.n, p.chunks, chunk_len, counters, partials);
        return launch_status();
      }
    }
    auto kernel = wide_kernel_for<P, false>(aligned, grid > 0);
    kernel<<<g, kWideBlock, 0, stream>>>(xin, yout, s.n, p.chunks, chunk_len, counters, partials);
    return launch_status();
  }

  template <typename P>
  redux_status operator()() const {
    using In = typename P::in_t;
    using Out = typename P::out_t;
    using acc_t = typename P::acc_t;
    unsigned int *counters;
    acc_t *partials;
    const redux_status st = prepare_workspace(p.f, ws, ws_bytes, stream_counters, stream_counters_len, stream,
                                              &counters, &partials);
    if (st != REDUX_OK) return st;
    /* 16-byte loads need every row start aligned: the base and the row pitch. */
    const bool aligned =
        ((uintptr_t)x % 16 == 0) && (s.outer == 1 || (s.n * (int64_t)sizeof(In)) % 16 == 0);
    const bool evict_first = stream_hint(s.outer * s.n * (int64_t)sizeof(In));
    const int64_t chunk_len = p.per_chunk * p.lanes * vec_of<In>::value;
    const In *xin = static_cast<const In *>(x);
    Out *yout = static_cast<Out *>(y);
    if (p.lanes == kWideBlock) return launch_wide<P>(xin, yout, aligned, chunk_len, counters, partials);
    if (s.outer != 1) {
      /* Rows: blocks that fit at once, each taking chunks grid-stride. */
      auto kernel = chunks_kernel_for<P, kFinishRows>(aligned, evict_first);
      kernel<<<grid_for(kernel, p.items, grid), kBlock, 0, stream>>>(xin, yout, s.outer, s.n, p.chunks, chunk_len,
                                                                      counters, partials);
      return launch_status();
    }
    /* One row of kBlock-lane chunks on blocks that fit at once (kChunksTarget
     * says why). */
    if constexpr (pollable<acc_t>::value) {
      if (p.polled) {
        auto kernel = chunks_kernel_for<P, kFinishPolled>(aligned, evict_first);
        kernel<<<grid_for(kernel, p.items, grid), kBlock, 0, stream>>>(xin, yout, s.outer, s.n, p.chunks, chunk_len,
                                                                        counters, partials);
        return launch_status();
      }
    }
    auto kernel = chunks_kernel_for<P, kFinishTicket>(aligned, evict_first);
    const int g = grid_for(kernel, p.items, grid);
    kernel<<<g, kBlock, 0, stream>>>(xin, yout, s.outer, s.n, p.chunks, chunk_len, counters, partials);
    return launch_status();
  }
};

redux_status launch_chunks(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                           unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in,
                           redux_dtype out, int grid, cudaStream_t stream, redux_family family) {
  return dispatch_policy(r, in, out,
                         launch_chunks_fn{x, y, ws, ws_bytes, counters, counters_len, s, grid, stream,
                                          plan_chunks(s, in, family)});
}

size_t chunks_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, redux_family family,
                              size_t counters_len) {
  return workspace_bytes_beside(plan_chunks(s, in, family).f, acc_bytes(in, out), counters_len);
}

size_t chunks_counters(redux_shape s, redux_dtype in, redux_family family) {
  return (size_t)plan_chunks(s, in, family).f.segments;
}

/* ---- Sharded sums (redux.h, redux_cuda_sum_unit_partials) ----
 * A unit is one chunk. chunk_partials_kernel adds chunks [c0, c1) of every
 * row exactly as sum_chunks_kernel or sum_wide_kernel does (lane_sum_tiles
 * over the same elements with the plan's lanes) and stores them;
 * chunk_finish_kernel combines a row's partials exactly as the last block
 * does (combine_row with the plan's lanes). */
template <typename P, bool ALIGNED, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
chunk_partials_kernel(const typename P::in_t *__restrict__ x, typename P::acc_t *partials, int64_t outer, int64_t n,
                      int64_t c0, int64_t c1, int64_t chunk_len) {
  using In = typename P::in_t;
  using acc_t = typename P::acc_t;
  constexpr int VEC = vec_of<In>::value;
  constexpr int U = BLOCK == kWideBlock ? kWideTiles : kUnroll; /* loads in flight: never the bits */
  __shared__ acc_t scratch[BLOCK / 32];
  const int64_t k = c1 - c0;
  const int64_t local_n = (c1 * chunk_len < n ? c1 * chunk_len : n) - c0 * chunk_len;
  for (int64_t item = blockIdx.x; item < outer * k; item += gridDim.x) {
    const int64_t row = item / k;
    const int64_t c = c0 + item % k;
    acc_t acc = lane_sum_tiles<P, VEC, U, ALIGNED, false>(x + row * local_n + (c - c0) * chunk_len,
                                                          chunk_count(c, chunk_len, n), 0, 1, threadIdx.x, BLOCK,
                                                          P::zero());
    acc = block_reduce_sum<P, BLOCK>(acc, scratch);
    if (threadIdx.x == 0) partials[item] = acc;
    __syncthreads(); /* scratch is reused by the next item */
  }
}

template <typename P, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
chunk_finish_kernel(const typename P::acc_t *partials, typename P::out_t *y, int64_t outer, int64_t chunks) {
  using Out = typename P::out_t;
  static_assert(P::reduction != REDUX_MEAN_OF_VALUES, "sharded finishes are sums'");
  __shared__ typename P::acc_t scratch[BLOCK / 32];
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    combine_row<P, Out, BLOCK>(partials + row * chunks, chunks, scratch, y + row, 0);
    __syncthreads();
  }
}

/* The plan's lanes as a template argument: f.template operator()<BLOCK>(). */
template <typename F>
redux_status with_lanes(int lanes, F &&f) {
  return lanes == kWideBlock ? f.template operator()<kWideBlock>() : f.template operator()<kBlock>();
}

struct chunk_partials_fn {
  const void *x;
  void *partials;
  redux_shape s; /* the planned problem; outer: the slices x holds */
  int64_t c0, c1;
  cudaStream_t stream;
  chunks_plan p;

  template <typename P>
  redux_status operator()() const {
    return with_lanes(p.lanes, launch<P>{this});
  }
  template <typename P>
  struct launch {
    const chunk_partials_fn *a;
    template <int BLOCK>
    redux_status operator()() const {
      using In = typename P::in_t;
      const int64_t chunk_len = a->p.per_chunk * BLOCK * vec_of<In>::value;
      const int64_t local_n = (a->c1 * chunk_len < a->s.n ? a->c1 * chunk_len : a->s.n) - a->c0 * chunk_len;
      const bool aligned =
          ((uintptr_t)a->x % 16 == 0) && (a->s.outer == 1 || (local_n * (int64_t)sizeof(In)) % 16 == 0);
      auto kernel = aligned ? chunk_partials_kernel<P, true, BLOCK> : chunk_partials_kernel<P, false, BLOCK>;
      const int g = grid_for(kernel, a->s.outer * (a->c1 - a->c0), 0, 0, BLOCK);
      kernel<<<g, BLOCK, 0, a->stream>>>(static_cast<const In *>(a->x),
                                         static_cast<typename P::acc_t *>(a->partials), a->s.outer,
                                         a->s.n, a->c0, a->c1, chunk_len);
      return launch_status();
    }
  };
};

struct chunk_finish_fn {
  const void *partials;
  void *y;
  redux_shape s; /* the planned problem; outer: the rows to finish */
  cudaStream_t stream;
  chunks_plan p;

  template <typename P>
  redux_status operator()() const {
    return with_lanes(p.lanes, launch<P>{this});
  }
  template <typename P>
  struct launch {
    const chunk_finish_fn *a;
    template <int BLOCK>
    redux_status operator()() const {
      auto kernel = chunk_finish_kernel<P, BLOCK>;
      const int g = grid_for(kernel, a->s.outer, 0, 0, BLOCK);
      kernel<<<g, BLOCK, 0, a->stream>>>(static_cast<const typename P::acc_t *>(a->partials),
                                         static_cast<typename P::out_t *>(a->y), a->s.outer, a->p.chunks);
      return launch_status();
    }
  };
};

int64_t chunks_unit(redux_shape s, redux_dtype in, redux_family family) {
  const chunks_plan p = plan_chunks(s, in, family);
  return p.chunks > 1 ? chunk_elements(p, in) : s.n;
}

redux_status chunks_unit_partials(const void *x, void *partials, redux_shape s, int64_t outer, int64_t u0,
                                  int64_t u1, redux_dtype in, redux_dtype out, cudaStream_t stream,
                                  redux_family family) {
  const redux_shape held{outer, s.n, s.inner};
  return dispatch_sum(in, out, chunk_partials_fn{x, partials, held, u0, u1, stream, plan_chunks(s, in, family)});
}

redux_status chunks_from_partials(const void *partials, void *y, redux_shape s, int64_t outer, redux_dtype in,
                                  redux_dtype out, cudaStream_t stream, redux_family family) {
  const redux_shape held{outer, s.n, s.inner};
  return dispatch_sum(in, out, chunk_finish_fn{partials, y, held, stream, plan_chunks(s, in, family)});
}

}  // namespace redux
