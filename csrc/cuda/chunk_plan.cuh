/* The shape-only cut of the full/rows family (sum_chunks.cu): its tree
 * constants and plan_chunks, apart from the kernel because the launcher,
 * the workspace queries and the exported submission all plan with it. */
#ifndef REDUX_CUDA_CHUNK_PLAN_CUH
#define REDUX_CUDA_CHUNK_PLAN_CUH

#include "common.cuh"
#include "finish.cuh"
#include "workspace.cuh"

namespace redux {

/* kUnroll and the chunk targets are part of the reduction tree (which
 * elements a chunk and a thread add): the same on every GPU; other values
 * give other bits. kChunksMinBlocks changes no bits. */
/* Tiles in flight per thread, and the fewest tiles a full sum's chunk gets
 * (8 tiles: 32 KB, each thread's 8 loads all in flight at once). */
constexpr int kUnroll = 8;
/* How a full sum is cut and scheduled, by input size. Inputs up to
 * kStreamMaxBytes (common.cuh: the ones read with evict-first loads) take
 * the wide tree: chunks of kWideTiles tiles of kWideBlock vectors (32 KB),
 * a block of kWideBlock threads each, launched one block per chunk (the
 * hardware hands chunks out in index order, so the blocks at work read one
 * narrow window) and finished by polled slots: faster than the 256-lane
 * chunks at every size from 1.6M on both GPUs. Larger inputs are cut into
 * at most kChunksTarget chunks of kBlock lanes that stream on blocks that
 * fit at once, where small chunks lost (docs/notes/full-sum.md). */
constexpr int kWideBlock = 1024;
constexpr int kWideTiles = 2;
/* Blocks of kWideBlock per SM the compiler must leave registers for: all
 * the threads an SM holds (2048 on sm_80, sm_90 and sm_100: 32 registers a
 * thread; 1536 on sm_86, sm_87, sm_89 and sm_120: one block). Never the bits. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890 || \
                               __CUDA_ARCH__ >= 1200)
constexpr int kWideMinBlocks = 1;
#else
constexpr int kWideMinBlocks = 2;
#endif
/* A stream's counters (redux.h) hold the slots of the largest polled wide
 * sum, so no call on the ranked sizes zeroes counters first. */
static_assert((kStreamMaxBytes / (kWideTiles * kWideBlock * 16)) * kSlotCounterWords <=
                  (int64_t)REDUX_CUDA_STREAM_COUNTERS,
              "REDUX_CUDA_STREAM_COUNTERS must hold a slot per wide chunk of the largest streamed input");
constexpr int64_t kChunksTarget = 512;
/* Blocks per SM the compiler must leave registers for. */
constexpr int kChunksMinBlocks = 4;
/* The fewest tiles a chunk of a rows problem gets (128 tiles: 512 KB of
 * fp32). A rows problem's chunking must not depend on how many rows there
 * are (batch invariance), so it cannot adapt the chunk count to fill the
 * GPU as the full sum does; chunks this large keep the per-chunk finish
 * (tree, fence, ticket: ~1 us a chunk on the H200) small against the read
 * when many long rows come together: 8-tile chunks made (64, 2097152) fp32
 * 1.25x torch.sum, against 0.96x with the outer-dependent cut. Part of the
 * rows family's reduction tree. */
constexpr int64_t kRowsChunkTiles = 128;

/* The polled finish (finish.cuh) for single rows of kBlock lanes (a rows
 * call with one long row; the wide tree polls at every size) whose input is
 * at most this many bytes; larger inputs keep the ticket. Measured with 8-tile
 * chunks a block each: the polled finish was 0.4-1.1 us faster up to 52 MB
 * on the H100 and the H200, level at 105 MB, and at 210 MB 1.9 us slower on
 * the H100 (its one waiting block polls 6400 slots) and 0.4 us faster on the
 * H200. Picks the finish only: both combine the same partials in the same
 * order. */
constexpr int64_t kPollMaxBytes = (int64_t)64 << 20;

struct chunks_plan {
  family_plan f;
  int lanes;         /* threads a chunk is spread over (its block): kBlock, or kWideBlock for the wide tree */
  int64_t tiles;     /* tiles of `lanes` vectors per row */
  int64_t per_chunk; /* tiles per chunk (the last chunk of a row may have fewer) */
  int64_t chunks;    /* chunks per row */
  int64_t items;     /* (row, chunk) work items */
  bool polled;       /* one row, several chunks: the polled finish */
};

/* family: REDUX_FULL (one row, the chunk count fills the GPU) or REDUX_ROWS
 * (every row cut alike, whatever outer is). */
inline chunks_plan plan_chunks(redux_shape s, redux_dtype in, redux_family family) {
  const int64_t vec = 16 / redux_dtype_size(in);
  chunks_plan p;
  /* A full sum of a streamed input takes the wide tree (kChunksTarget says
   * why), a chunk a block. */
  const bool wide = family != REDUX_ROWS && stream_hint(s.n * redux_dtype_size(in));
  p.lanes = wide ? kWideBlock : kBlock;
  p.tiles = ceil_div(s.n, (int64_t)p.lanes * vec);
  /* Tiles per chunk: kWideTiles in the wide tree; else a power of two,
   * enough that one row's chunks stay at most kChunksTarget, and at least
   * kUnroll (full) or kRowsChunkTiles (rows). A function of the row alone
   * (never of outer), so a row's bits do not depend on how many rows share
   * the call: sums over trailing dims are batch-invariant. A power of two so
   * that even shards of power-of-two and competition sizes start on a chunk
   * (redux.distributed). */
  const int64_t least = family == REDUX_ROWS ? kRowsChunkTiles : kUnroll;
  if (wide) {
    p.per_chunk = kWideTiles;
  } else {
    p.per_chunk = pow2_at_least(ceil_div(p.tiles, kChunksTarget));
    if (p.per_chunk < least) p.per_chunk = least;
  }
  p.chunks = ceil_div(p.tiles, p.per_chunk);
  p.items = s.outer * p.chunks;
  /* Integer inputs accumulate in integers: no spare bit pattern for a slot,
   * so they keep the ticket. The wide tree polls at every size: its
   * kWideBlock-thread finisher waits on 8192 slots at most (2048 fp32 at
   * 52.4M on the H100: 76.6 us polled, 76.3 with a ticket; on the H200 55.6
   * against 64.4: the ticket's fence and atomic per block cost more there). */
  const bool pollable_in = in != REDUX_I64;
  p.polled = s.outer == 1 && p.chunks > 1 && pollable_in &&
             (wide || s.n * redux_dtype_size(in) <= kPollMaxBytes);
  /* Counter words: a slot per chunk, else a ticket counter per row. */
  p.f.segments = p.chunks == 1 ? 0 : p.polled ? kSlotCounterWords * p.chunks : s.outer;
  p.f.partials = p.chunks > 1 && !p.polled ? p.items : 0;
  return p;
}

/* Elements of a row in one chunk: the unit a sharded sum cuts n into. */
inline int64_t chunk_elements(const chunks_plan &p, redux_dtype in) {
  return p.per_chunk * (int64_t)p.lanes * (16 / redux_dtype_size(in));
}

}  // namespace redux

#endif /* REDUX_CUDA_CHUNK_PLAN_CUH */
