/* The shape-only cut of the full/rows family (sum_full.cu): its build
 * constants and plan_chunks. A header so that the variant timer
 * (leaderboard/microbench/variants.cu) rebuilds the product's plan from the
 * same constants instead of a copy of them. */
#ifndef REDUX_CUDA_CHUNKS_PLAN_CUH
#define REDUX_CUDA_CHUNKS_PLAN_CUH

#include "common.cuh"

namespace redux {

/* Build constants, from the variant sweeps on the H200
 * (leaderboard/microbench/sweep.sh full, results/microbench/sweep_full_h200.txt,
 * PERFORMANCE.md change 6): 8 tiles in flight per thread, ~512 chunks (about
 * one per resident block, so each block streams once instead of draining its
 * loads at a block reduce between chunks) and registers for 4 blocks per SM
 * won at every size. The -D overrides exist for those sweeps only.
 * kUnroll and kChunksTarget are part of the reduction tree (which elements a
 * chunk and a thread add): the same for every GPU, but a build with other
 * values gives other bits. The register budget changes no bits. */

/* Tiles in flight per thread, and the fewest tiles a chunk gets. */
#ifndef REDUX_CHUNKS_UNROLL
#define REDUX_CHUNKS_UNROLL 8
#endif
constexpr int kUnroll = REDUX_CHUNKS_UNROLL;
/* Work items (row, chunk) a problem is cut into, about. */
#ifndef REDUX_CHUNKS_TARGET
#define REDUX_CHUNKS_TARGET 512
#endif
constexpr int64_t kChunksTarget = REDUX_CHUNKS_TARGET;
/* Blocks per SM the compiler must leave registers for. */
#ifndef REDUX_CHUNKS_MIN_BLOCKS
#define REDUX_CHUNKS_MIN_BLOCKS 4
#endif

/* The polled finish (common.cuh) for single rows whose input is at most
 * this many bytes; larger inputs keep the ticket. Measured on the H200
 * (PERFORMANCE.md change 15): the polled finish was 0.6-0.9 us faster from
 * 6.5 to 52 MB, level at 105 MB and 0.5 us slower at 210 MB. Picks the
 * finish only: both combine the same partials in the same order. */
#ifndef REDUX_CHUNKS_POLL_MAX_BYTES
#define REDUX_CHUNKS_POLL_MAX_BYTES (64ll << 20)
#endif
constexpr int64_t kPollMaxBytes = REDUX_CHUNKS_POLL_MAX_BYTES;

struct chunks_plan {
  family_plan f;
  int64_t tiles;  /* tiles of kBlock vectors per row */
  int64_t chunks; /* chunks per row */
  int64_t items;  /* (row, chunk) work items */
  bool polled;    /* one row, several chunks: the polled finish */
};

inline chunks_plan plan_chunks(redux_shape s, redux_dtype in) {
  const int64_t tile = (int64_t)kBlock * (16 / elem_bytes(in));
  chunks_plan p;
  p.tiles = ceil_div(s.n, tile);
  /* Tiles per chunk: at least kUnroll, and enough that outer * chunks stays
   * near kChunksTarget. */
  int64_t per_chunk = ceil_div(s.outer * p.tiles, kChunksTarget);
  if (per_chunk < kUnroll) per_chunk = kUnroll;
  p.chunks = ceil_div(p.tiles, per_chunk);
  p.items = s.outer * p.chunks;
  /* Integer inputs accumulate in integers: they keep the ticket. */
  p.polled = s.outer == 1 && p.chunks > 1 && in != REDUX_I64 && s.n * elem_bytes(in) <= kPollMaxBytes;
  /* Counter words: a slot per chunk, else a ticket counter per row. */
  p.f.segments = p.chunks == 1 ? 0 : p.polled ? kSlotCounterWords * p.chunks : s.outer;
  p.f.partials = p.chunks > 1 && !p.polled ? p.items : 0;
  return p;
}

}  // namespace redux

#endif /* REDUX_CUDA_CHUNKS_PLAN_CUH */
