/* Variant timings: the evidence behind leaderboard/PERFORMANCE.md and HISTORY.md.
 *
 * A standalone measuring program, not part of the extension. It builds
 * against the C API and the one internal header csrc/cuda/internal.cuh (to
 * rebuild the product's kernels with parts left out or timers added), and
 * times candidate designs of the full fp32 sum and pure streaming-read
 * kernels with the competition's method (256 MiB write to evict L2, CUDA
 * events around the launch(es), one sample per call), next to the product's
 * own launcher (redux_cuda_sum), the ladder's last-block rung and CUB, all
 * in one run. Sections (VARIANTS_SECTIONS=read,launch,sum,cols,rows,parts,fixed,
 * occ,persist,small,bulk,split,stream,tiles,wide,depth,defer,lanes,narrow,convert,policy,phase,strip,short,gap,order,resident,trace picks them; VARIANTS_ONLY_REDUX=1 times only the product among the
 * full sums):
 *
 *   read     streaming reads of the input, no sum: which load pattern
 *            reaches the DRAM ceiling (grid-stride vs block slabs, 1 or 4
 *            loads in flight, cache hints, 256 or 512 threads).
 *   launch   an empty kernel; memset+empty: the price of zeroing the ticket
 *            counters with a separate cudaMemsetAsync.
 *   sum      the product (redux), with and without its stream counters;
 *            sum_last_block (rung 7) and cub (rung 8); blockticket: shape-
 *            only chunks as in the product, but one fence/ticket per block
 *            after all its chunks ("+memset" zeroes the counter per call,
 *            "+reset" keeps one persistent counter the last block resets).
 *   cols     the product's columns family on the three column targets,
 *            fp32, fp16 and fp64.
 *   rows     the product's short-rows kernel on the two short-row targets.
 *   parts    the product's full sum rebuilt with its finish added one part
 *            at a time (loop, tree, ticket, combine), and finish candidates:
 *            polled slots (the prototype of the product's polled finish,
 *            with a __nanosleep backoff option), the ticket without its
 *            fence over polled slots, a PDL second kernel, and the same two
 *            kernels without PDL.
 *   fixed    fixed chunks, one block each on a non-persistent grid (the
 *            public fixed-chunk entry's schedule, redux's fp64 arithmetic)
 *            with three finishes, fixed-size pure reads, the probe and the
 *            product, all sizes, FIXED_ROUNDS rounds (default 3).
 *   occ      blocks per SM (capped with dynamic shared memory) and loads in
 *            flight, for fixed-piece reads and the fixed-chunk sum.
 *   persist  8-tile chunks on resident blocks in window order, with the
 *            next chunk's loads issued before the tree, and with the
 *            cross-warp tree deferred.
 *   small    pieces of 8-64 KB a block (256-1024 threads, 1-8 loads), and
 *            resident blocks taking chunks from a counter (dynamic).
 *   bulk     8-tile chunks a block each whose 32 KB arrive by bulk copies
 *            (TMA) into shared memory, folded in the product's lane order.
 *   split    the same chunks read by 512 x 4 or 1024 x 2 threads x loads
 *            (the first 256 threads fold all 8 tiles: the same bits), and
 *            the bulk copy issued before the block's first barrier.
 *   stream   the previous tree's 8-tile chunks streamed on resident blocks
 *            (loads ahead and blocks per SM varied, barrier-free warp
 *            trees), beside the product's launcher and the fastest pure
 *            reads; bits checked against fixed_sum<8, 1>'s (not taken).
 *   wide     1024-lane 32 KB tiles, a partial per tile, 1-4 tiles a block:
 *            the candidate tree for both GPUs (its T and finish keep the bits);
 *            then the product alone on inputs of one chunk or a few.
 *   depth    the wide chunk with fewer loads in flight a thread (tile 1
 *            after tile 0; 512 threads x 2 lanes) and on a cluster of two
 *            16 KB blocks handing lanes over in shared memory, with the
 *            diagnostics that took the pair apart (H100 evidence).
 *   defer    the wide tree with no block barrier: each warp publishes its
 *            sum, and a later block's warp 0 (while its own loads are in
 *            flight) does the chunk's second level (same bits).
 *   lanes    the wide chunk on 1024, 512 or 256 threads (1, 2 or 4 lanes
 *            a thread, the same bits) at the six sizes, beside the previous
 *            tree's 256 x 8 chunks and pure reads of both block shapes.
 *   narrow   column sums of rows of 16-512 B at the full sum's pattern (a
 *            1024-thread block per 32 KB chunk of whole rows, one barrier,
 *            a ticket or polled finish per slice; other bits than the
 *            product's column kernel), and chunks of 32-256 KB on 256-1024
 *            threads with 8-64 rows a thread and several finishes (their
 *            own, deferred, parallel, grouped, or dedicated finishing
 *            blocks launched last), beside the product and pure reads.
 *   convert  the wide chunk with each element's fp32 -> fp64 conversion by
 *            F2F or by integer ops (exact: the same bits), at the six
 *            sizes, beside the product and pure reads; inf, NaN, overflow
 *            and subnormal probes check the integer path's fallback.
 *   policy   pure reads of 16 and 32 KB a block under each L2 access
 *            policy (createpolicy evict-first / -normal / -unchanged on
 *            plain, .cs, L1 no-allocate and .nc loads; .cs; .lu), beside
 *            the product, at 13.1M, 26.2M and 52.4M.
 *   phase    (256, 4096, 64) fp32 read as the column family's 512 slabs,
 *            each block starting from a step given by its index, beside
 *            the product's column and full sums and the window read; then
 *            the slab's differences from the window one at a time (load
 *            shape, spread, spread over long-lived blocks).
 *   strip    column sums of (8192, 8192) and (256, 4096, 64) fp32 in short
 *            blocks (128-256 KB of a strip of 16-128 columns): a cluster
 *            per strip finished in distributed shared memory, or the
 *            window order (a row chunk's strips side by side) with polled
 *            slots and finishing blocks, a ticket, or no finish; pure reads
 *            of each pattern, the product beside them (stop 43; other bits).
 *   short    the same column sums in 32-64 KB blocks, window order: 1024
 *            threads x 2 or 4 rows, 512 x 4; pure reads, the block's fold
 *            alone, polled slots with finishing blocks, a ticket (stop 44;
 *            other bits).
 *   gap      the product's strips kernel against its prototype (short's
 *            1024 x 4 with finishing blocks) on the same two shapes: 128,
 *            132 or 256 finishers, the prototype's slots in the bench's buffer or
 *            in the product's stream counters; percentiles of each
 *            (GAP_REPS samples, default 200), to show a bimodal one.
 *   order    the wide chunk's two loads a thread issued back to back, tile
 *            by tile (a barrier between), as contiguous pairs (other
 *            lanes) or odd warps first: pure reads and sums at 13.1-52.4M.
 *   resident the wide chunk on SMs x 1 or x 2 resident blocks, the next
 *            chunk's loads issued as the current one's arrive, static or
 *            atomic order: pure reads and sums (the same bits).
 *   tiles    the public H100 entry's schedule (1024 threads, 32 KB tiles
 *            grid-stride): its fp32 float atomics, and fp64 lanes with
 *            ordered partials at 1-4 tiles a block and its 4288 blocks.
 *   trace    the product's two finishes and eight candidates with
 *            %globaltimer stamps: when each block's loads returned, when the
 *            finishing block saw every partial, its tree and its store,
 *            against the event time. TRACE_MODES=0489 picks modes.
 *
 * Build and run on the GPU machine (`STEPS=variants bash leaderboard/device_check.sh`):
 *   nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda bench/variants.cu \
 *        csrc/cuda/*.cu csrc/cpu/status.c -o /tmp/variants && /tmp/variants
 * bench/sweep.sh rebuilds it with a family's constants varied.
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "internal.cuh" /* the product's pieces: csrc/cuda/internal.cuh */

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

using namespace redux;

namespace {

__global__ void init_kernel(float *x, int64_t n, unsigned seed) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = (float)(h & 0xffffff) / 16777216.0f * 200.0f - 100.0f;
  }
}

__global__ void empty_kernel() {}

/* ---- streaming reads ---------------------------------------------------- */
/* H_CS: ld.global.cs; H_DEF: ordinary; H_NA256: no L1, 256 B L2 prefetch;
 * H_PF*: an L2 access policy made by createpolicy (section `policy`):
 * evict-first on ordinary, .cs, L1-no-allocate and non-coherent loads,
 * evict-unchanged and evict-normal; H_LU: ld.global.lu. */
enum Hint { H_CS = 0, H_DEF = 1, H_NA256 = 2, H_PF = 3, H_CSPF = 4, H_NAPF = 5, H_NCPF = 6, H_PU = 7, H_PN = 8,
            H_LU = 9 };

/* An L2 access policy for every access: P = H_PU evict-unchanged, H_PN
 * evict-normal, else evict-first. */
template <int P>
__device__ __forceinline__ unsigned long long l2_policy() {
  unsigned long long pol;
  if constexpr (P == H_PU) asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(pol));
  else if constexpr (P == H_PN) asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(pol));
  else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

#define LD_POLICY(OPS, POLICY)                                                                         \
  do {                                                                                                  \
    float4 v;                                                                                           \
    asm volatile("ld.global" OPS ".L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"                      \
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(POLICY));                  \
    return v;                                                                                           \
  } while (0)

template <int HINT>
__device__ __forceinline__ float4 ld(const float4 *p) {
  if constexpr (HINT == H_CS) return __ldcs(p);
  else if constexpr (HINT == H_DEF) return *p;
  else if constexpr (HINT == H_PF || HINT == H_PU || HINT == H_PN) LD_POLICY("", l2_policy<HINT>());
  else if constexpr (HINT == H_CSPF) LD_POLICY(".cs", l2_policy<HINT>());
  else if constexpr (HINT == H_NAPF) LD_POLICY(".L1::no_allocate", l2_policy<HINT>());
  else if constexpr (HINT == H_NCPF) LD_POLICY(".nc", l2_policy<HINT>());
  else if constexpr (HINT == H_LU) return __ldlu(p);
  else {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
  }
}

__device__ __forceinline__ float fold(float m, float4 v) {
  return fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
}

/* Grid-stride, U loads in flight per thread. */
template <int BLOCK, int U, int HINT>
__global__ void __launch_bounds__(BLOCK) read_grid(const float4 *__restrict__ x, int64_t n4, float *sink) {
  const int64_t stride = (int64_t)gridDim.x * BLOCK;
  int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
  float m = 0.0f;
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld<HINT>(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) m = fold(m, v[u]);
  }
  for (; i < n4; i += stride) m = fold(m, ld<HINT>(x + i));
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* Each block a contiguous slab, U loads in flight per thread. */
template <int BLOCK, int U, int HINT>
__global__ void __launch_bounds__(BLOCK) read_slab(const float4 *__restrict__ x, int64_t n4, float *sink) {
  const int64_t per = (n4 + gridDim.x - 1) / gridDim.x;
  const int64_t b = (int64_t)blockIdx.x * per, e = min(b + per, n4);
  float m = 0.0f;
  int64_t i = b + threadIdx.x;
  for (; i + (U - 1) * BLOCK < e; i += U * BLOCK) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld<HINT>(x + i + u * BLOCK);
#pragma unroll
    for (int u = 0; u < U; ++u) m = fold(m, v[u]);
  }
  for (; i < e; i += BLOCK) m = fold(m, ld<HINT>(x + i));
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

template <typename K>
int fill(K k, int block) {
  int dev = 0, sms = 0, per = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, block, 0);
  return sms * per;
}

/* ---- full-sum candidate: one ticket per block ---------------------------- */
using P = sum_policy<float, float>;

template <int U, bool RESET, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
blockticket_kernel(const float *__restrict__ x, float *y, int64_t n, int64_t chunk, int64_t chunks,
                   unsigned int *counter, double *partials) {
  __shared__ double scratch[BLOCK / 32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t begin = c * chunk, end = min(begin + chunk, n);
    double acc = lane_sum_range<P, 4, U, true, true>(x, begin, end, tid, BLOCK, 0.0);
    acc = block_reduce_sum<P, BLOCK>(acc, scratch);
    if (tid == 0) partials[c] = acc;
  }
  if (tid == 0) {
    __threadfence();
    const unsigned t = atomicAdd(counter, 1u);
    is_last = t == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  if (RESET && tid == 0) *counter = 0u; /* every other block has taken its ticket */
  double r = combine_strided<P>(0.0, partials, tid, chunks, BLOCK);
  r = block_reduce_sum<P, BLOCK>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* ---- the product's full sum taken apart (where the ~2.3 us over a pure
 * read goes) ----------------------------------------------------------------
 * The plan (chunks_plan.cuh) and the main loop of sum_full.cu, each part of
 * the finish added in turn:
 *   PARTS 0  the loop only (its result kept alive by a store that never runs)
 *   PARTS 1  + the block tree and the partial's store
 *   PARTS 2  + the fence and the ticket (the last block stops there)
 *   PARTS 3  + the last block's combine of every partial: the product. */
template <int PARTS>
__global__ void __launch_bounds__(256, kChunksMinBlocks)
parts_kernel(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned int *counter,
             double *partials) {
  __shared__ double scratch[256 / 32];
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double acc = lane_sum_tiles<P, 4, kUnroll, true, true>(x, n, c, chunks, threadIdx.x, 256, 0.0);
    if (PARTS == 0) {
      if (acc == -1.25e300) y[1] = (float)acc; /* never true for the data here */
      continue;
    }
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (threadIdx.x == 0) partials[c] = acc;
  }
  if (PARTS < 2) return;
  __syncthreads();
  if (!last_block_ticket(counter, 0, gridDim.x) || PARTS < 3) return;
  double r = combine_strided<P>(0.0, partials, threadIdx.x, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (threadIdx.x == 0) *y = (float)r;
}

/* ---- finish candidates without the fence and the ticket ------------------
 * poll_kernel: every block stores its chunk partial into a slot with one
 * relaxed 8-byte store (no fence, no ticket; a NaN partial is stored as the
 * canonical NaN so it never equals the empty mark). The grid's last block
 * (launched last) waits for each slot to leave the empty mark (all-ones),
 * combines the slots in chunk order (combine_strided's order), and puts the
 * empty mark back. The data is its own flag.
 * pdl_first / pdl_second: the loop and tree store plain partials and exit;
 * a one-block second kernel, launched as a programmatic dependent (Hopper
 * PDL), waits at griddepcontrol.wait and combines them. */
constexpr unsigned long long kEmptySlot = ~0ull;

__device__ __forceinline__ void st_slot(unsigned long long *p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_slot(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

template <int SLEEP_NS>
__global__ void __launch_bounds__(256, kChunksMinBlocks)
poll_kernel(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned long long *slots) {
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double acc = lane_sum_tiles<P, 4, kUnroll, true, true>(x, n, c, chunks, tid, 256, 0.0);
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (tid == 0) st_slot(slots + c, acc != acc ? 0x7ff8000000000000ull : (unsigned long long)__double_as_longlong(acc));
  }
  if (blockIdx.x != gridDim.x - 1) return;
  constexpr int B = 8;
  double r = 0.0;
  for (int64_t k0 = tid; k0 < chunks; k0 += B * 256) {
    unsigned long long v[B];
#pragma unroll
    for (int b = 0; b < B; ++b)
      if (k0 + b * 256 < chunks) v[b] = ld_slot(slots + k0 + b * 256);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      if (k0 + b * 256 >= chunks) continue;
      while (v[b] == kEmptySlot) {
        if (SLEEP_NS > 0) __nanosleep(SLEEP_NS);
        v[b] = ld_slot(slots + k0 + b * 256);
      }
      st_slot(slots + k0 + b * 256, kEmptySlot);
      r = P::combine(r, __longlong_as_double((long long)v[b]));
    }
  }
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* ticket_slots_kernel: the ticket without its fence. Each block publishes
 * its partial with the product's publish_slot (a relaxed store of the
 * partial as its own flag), then takes a relaxed ticket; the block with the
 * last ticket waits for every slot with the product's combine_polled. Only
 * blocks that already took their ticket (so already issued their store) are
 * waited on: no block waits for one that may not have started. */
__global__ void __launch_bounds__(256, kChunksMinBlocks)
ticket_slots_kernel(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned int *counter,
                    unsigned long long *slots) {
  __shared__ double scratch[256 / 32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double acc = lane_sum_tiles<P, 4, kUnroll, true, true>(x, n, c, chunks, tid, 256, 0.0);
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (tid == 0) publish_slot(slots, c, acc);
  }
  if (tid == 0) {
    is_last = atomicAdd(counter, 1u) == gridDim.x - 1;
    if (is_last) atomicExch(counter, 0u);
  }
  __syncthreads();
  if (!is_last) return;
  double r = combine_polled<P>(0.0, slots, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

__global__ void __launch_bounds__(256, kChunksMinBlocks)
pdl_first(const float *__restrict__ x, int64_t n, int64_t chunks, double *partials) {
  __shared__ double scratch[256 / 32];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    double acc = lane_sum_tiles<P, 4, kUnroll, true, true>(x, n, c, chunks, threadIdx.x, 256, 0.0);
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (threadIdx.x == 0) partials[c] = acc;
  }
}

__global__ void __launch_bounds__(256) pdl_second(float *y, int64_t chunks, const double *partials) {
  __shared__ double scratch[256 / 32];
  asm volatile("griddepcontrol.wait;" ::: "memory");
  double r = combine_strided<P>(0.0, partials, threadIdx.x, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (threadIdx.x == 0) *y = (float)r;
}

void launch_pdl(const float *x, float *y, int64_t n, int64_t chunks, double *partials, int grid, bool pdl,
                cudaStream_t st) {
  pdl_first<<<grid, 256, 0, st>>>(x, n, chunks, partials);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(256);
  cfg.stream = st;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, pdl_second, y, chunks, static_cast<const double *>(partials)));
}

/* ---- the finish on a clock: where the time after the loop goes ---------
 * trace_kernel is the product's full sum (its plan and main loop, its
 * publish_slot / combine_polled and last_block_ticket) with %globaltimer
 * stamps: per block its entry, its tree done (so every load of its chunk
 * returned) and its partial published (ticket: its ticket taken); for the
 * finishing block the start of its wait, every partial seen, its tree done,
 * and its final store performed (after a fence). MODE:
 *   0  polled, the grid's last block waits after its own chunk (the
 *      product's earlier form: block trees with a 32-lane
 *      second stage, which block_reduce_w<..., 32> keeps);
 *   1  ticket, the last block to take a ticket combines (the product above);
 *   2  polled, one extra block that reads nothing and only waits;
 *   3  polled, the last block waits with ONE warp (lane l combines slots l,
 *      l + 32, ... in order, then a warp tree): other bits, timing only;
 *   4  as 0 with the block trees' second stage over the 8 warps only (3
 *      shuffle levels, not 5: the same bits): the product now;
 *   5  as 0 with the slots stored and polled under an L2 evict_last policy
 *      (are slot lines pushed out of L2 by the stream at large sizes?);
 *   6  as 0, but the slots are emptied after the final store, not while
 *      they are combined (the same bits);
 *   7  as 6 with the trees of 4;
 *   8  as 0, but a thread waits on all of its batch's slots at once,
 *      reloading every empty one each round (the same order and bits);
 *   9  as 8 with the trees of 4. */
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned long long keep_policy() {
  unsigned long long pol;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ void publish_keep(unsigned long long *slots, int64_t c, double v) {
  asm volatile("st.relaxed.gpu.global.L2::cache_hint.v2.u64 [%0], {%1, %2}, %3;" ::"l"(slots + kSlotU64 * c),
               "l"(slot_word(v)), "l"(~0ull), "l"(keep_policy())
               : "memory");
}
__device__ __forceinline__ unsigned long long load_keep(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(v) : "l"(p), "l"(keep_policy()) : "memory");
  return v;
}
/* combine_polled's order, evict_last loads, one slot in flight per thread (2 per thread here). */
__device__ __forceinline__ double combine_keep(unsigned long long *slots, int64_t first, int64_t count, int64_t stride) {
  double r = 0.0;
  for (int64_t k = first; k < count; k += stride) {
    unsigned long long w = load_keep(slots + kSlotU64 * k);
    while (w == 0) w = load_keep(slots + kSlotU64 * k);
    store_slot(slots + kSlotU64 * k, 0ull, 0ull);
    double v;
    slot_value(slot_words{w, ~0ull}, &v);
    r += v;
  }
  return r;
}

/* combine_polled's loads and order, without emptying the slots. */
__device__ __forceinline__ double combine_seen(unsigned long long *slots, int64_t first, int64_t count, int64_t stride) {
  constexpr int B = 8;
  double r = 0.0;
  for (int64_t k0 = first; k0 < count; k0 += B * stride) {
    slot_words w[B];
#pragma unroll
    for (int b = 0; b < B; ++b)
      if (k0 + b * stride < count) w[b] = load_slot<double>(slots + kSlotU64 * (k0 + b * stride));
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int64_t k = k0 + b * stride;
      if (k >= count) continue;
      while (!slot_full(w[b])) w[b] = load_slot<double>(slots + kSlotU64 * k);
      double v;
      slot_value(w[b], &v);
      r += v;
    }
  }
  return r;
}

/* combine_polled's order; all of a batch's empty slots polled together. */
__device__ __forceinline__ double combine_all(unsigned long long *slots, int64_t first, int64_t count, int64_t stride) {
  constexpr int B = 8;
  double r = 0.0;
  for (int64_t k0 = first; k0 < count; k0 += B * stride) {
    slot_words w[B];
#pragma unroll
    for (int b = 0; b < B; ++b)
      w[b] = k0 + b * stride < count ? load_slot<double>(slots + kSlotU64 * (k0 + b * stride)) : slot_words{~0ull, ~0ull};
    for (;;) {
      bool full = true;
#pragma unroll
      for (int b = 0; b < B; ++b) full = full && slot_full(w[b]);
      if (full) break;
#pragma unroll
      for (int b = 0; b < B; ++b)
        if (!slot_full(w[b])) w[b] = load_slot<double>(slots + kSlotU64 * (k0 + b * stride));
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const int64_t k = k0 + b * stride;
      if (k >= count) continue;
      store_slot(slots + kSlotU64 * k, 0ull, 0ull);
      double v;
      slot_value(w[b], &v);
      r += v;
    }
  }
  return r;
}

template <typename PP, int BLOCK, int WIDTH2>
__device__ __forceinline__ double block_reduce_w(double v, double *scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce_sum<PP>(v, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < BLOCK / 32 ? scratch[lane] : 0.0;
    v = warp_reduce_sum<PP>(v, WIDTH2);
  }
  __syncthreads();
  return v;
}

template <int MODE>
__global__ void __launch_bounds__(256, kChunksMinBlocks)
trace_kernel(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned int *counter,
             unsigned long long *slots, double *partials, unsigned long long *ts) {
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  constexpr int W2 = (MODE == 4 || MODE == 7 || MODE == 9) ? 8 : 32;
  unsigned long long *mine = ts + 4 * blockIdx.x;
  if (tid == 0) mine[0] = gtime();
  const bool waiter_only = MODE == 2 && blockIdx.x == gridDim.x - 1;
  const unsigned int workers = MODE == 2 ? gridDim.x - 1 : gridDim.x;
  if (!waiter_only)
    for (int64_t c = blockIdx.x; c < chunks; c += workers) {
      double acc = lane_sum_tiles<P, 4, kUnroll, true, true>(x, n, c, chunks, tid, 256, 0.0);
      acc = block_reduce_w<P, 256, W2>(acc, scratch);
      if (tid == 0) {
        mine[1] = gtime();
        if (MODE == 1) partials[c] = acc;
        else if (MODE == 5) publish_keep(slots, c, acc);
        else publish_slot(slots, c, acc);
      }
    }
  if (MODE == 1) {
    __syncthreads();
    const bool last = last_block_ticket(counter, 0, gridDim.x);
    if (tid == 0) mine[2] = gtime();
    if (!last) return;
  } else {
    if (tid == 0) mine[2] = gtime();
    if (blockIdx.x != gridDim.x - 1) return;
  }
  unsigned long long *w = ts + 4 * gridDim.x;
  if (tid == 0) w[0] = gtime();
  double r;
  if (MODE == 1) {
    r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  } else if (MODE == 3) {
    if (tid >= 32) return;
    r = combine_polled<P>(0.0, slots, tid, chunks, 32);
    if (tid == 0) w[1] = gtime();
    r = warp_reduce_sum<P>(r, 32);
    if (tid == 0) {
      w[2] = gtime();
      *y = (float)r;
      __threadfence();
      w[3] = gtime();
    }
    return;
  } else if (MODE == 5) {
    r = combine_keep(slots, tid, chunks, 256);
  } else if (MODE >= 8) {
    r = combine_all(slots, tid, chunks, 256);
  } else if (MODE >= 6) {
    r = combine_seen(slots, tid, chunks, 256);
  } else {
    r = combine_polled<P>(0.0, slots, tid, chunks, 256);
  }
  __syncthreads();
  if (tid == 0) w[1] = gtime();
  r = block_reduce_w<P, 256, W2>(r, scratch);
  if (tid == 0) {
    w[2] = gtime();
    *y = (float)r;
    __threadfence();
    w[3] = gtime();
  }
  if (MODE == 6 || MODE == 7)
    for (int64_t k = tid; k < chunks; k += 256) store_slot(slots + kSlotU64 * k, 0ull, 0ull);
}

/* ---- fixed chunks, one block each (section `fixed`) ----------------------
 * The public fixed-chunk entry's schedule with redux's arithmetic: chunk c is
 * TILES contiguous tiles (4 KB each), one block per chunk on a non-persistent
 * grid, so the hardware deals chunks in index order and the blocks resident
 * at once read one sliding window (the persistent product reads ~400
 * separate streams). fp64 lanes and the block tree as in the product.
 * Finishes:
 *   FIN 0 ticket: partial, fence, one ticket per block; the last block
 *         combines every partial (combine_strided).
 *   FIN 1 polled: partial into its slot, no fence or ticket; block
 *         gridDim - 1 (dispatched last) waits for every slot.
 *   FIN 2 groups: a ticket per group of kFixedGroup chunks; a group's last
 *         block combines the group's partials, stores the group's partial
 *         and takes a ticket on counter 0; the last of those combines the
 *         groups (two small combines, the first overlapped by the stream). */
constexpr int kFixedGroup = 64;

template <int TILES, int FIN, int U = kUnroll>
__global__ void __launch_bounds__(256, kChunksMinBlocks)
fixed_sum(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned int *counters,
          double *partials, unsigned long long *slots) {
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  const int64_t chunk_len = (int64_t)TILES * 1024;
  const int64_t groups = ceil_div(chunks, kFixedGroup);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t len = n - c * chunk_len < chunk_len ? n - c * chunk_len : chunk_len;
    double acc = lane_sum_tiles<P, 4, U, true, true>(x + c * chunk_len, len, 0, 1, tid, 256, 0.0);
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (FIN == 1) {
      if (tid == 0) publish_slot(slots, c, acc);
      continue;
    }
    if (tid == 0) partials[c] = acc;
    if (FIN == 0) continue;
    const int64_t g = c / kFixedGroup;
    const int64_t in_g = chunks - g * kFixedGroup < kFixedGroup ? chunks - g * kFixedGroup : kFixedGroup;
    if (!last_block_ticket(counters, 1 + g, (unsigned)in_g)) continue;
    double r = tid < in_g ? load_partial(&partials[g * kFixedGroup + tid]) : 0.0;
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) partials[chunks + g] = r;
    if (last_block_ticket(counters, 0, (unsigned)groups)) {
      double s = combine_strided<P>(0.0, partials + chunks, tid, groups, 256);
      s = block_reduce_sum<P, 256>(s, scratch);
      if (tid == 0) *y = (float)s;
    }
  }
  if (FIN == 0) {
    __syncthreads();
    if (!last_block_ticket(counters, 0, gridDim.x)) return;
    double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) *y = (float)r;
  }
  if (FIN == 1) {
    if (blockIdx.x != gridDim.x - 1) return;
    __syncthreads();
    double r = combine_polled<P>(0.0, slots, tid, chunks, 256);
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) *y = (float)r;
  }
}


/* Persistent blocks over 8-tile chunks in window order (chunk c goes to
 * block c mod grid, so the blocks at once read grid consecutive chunks),
 * the product's lane order and block tree per chunk. MODE 0: load, add,
 * block tree, next chunk. MODE 1: the next chunk's loads are issued before
 * this chunk's adds and tree (loads in flight through the tree). MODE 2: as
 * 1, but the tree per chunk is the warp shuffles only; each warp's result
 * waits in shared memory and the warps are combined in warp order after
 * the loop (block_reduce_sum's tree, no barrier per chunk). Then one ticket
 * per block; the last block combines every chunk partial. n: a multiple
 * of 8192 here. */
constexpr int kMaxLocalChunks = 64;
template <int MODE>
__global__ void __launch_bounds__(256, 2)
persist_sum(const float *__restrict__ x, float *y, int64_t n, int64_t chunks, unsigned int *counters,
            double *partials) {
  __shared__ double scratch[256 / 32];
  __shared__ double warp_parts[MODE == 2 ? kMaxLocalChunks : 1][8];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  int64_t c = blockIdx.x;
  float4 v[8];
  if (c < chunks) {
#pragma unroll
    for (int u = 0; u < 8; ++u) v[u] = __ldcs(x4 + c * 2048 + u * 256 + tid);
  }
  int k = 0;
  for (; c < chunks; c += gridDim.x, ++k) {
    float4 w[8];
    const bool more = c + gridDim.x < chunks;
    if (MODE == 0) {
      /* v already holds this chunk */
    } else if (more) {
#pragma unroll
      for (int u = 0; u < 8; ++u) w[u] = __ldcs(x4 + (c + gridDim.x) * 2048 + u * 256 + tid);
    }
    double acc = 0.0;
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      acc += (double)v[u].x; acc += (double)v[u].y; acc += (double)v[u].z; acc += (double)v[u].w;
    }
    if (MODE == 2) {
      acc = warp_reduce_sum<P>(acc, 32);
      if (lane == 0) warp_parts[k][warp] = acc;
    } else {
      acc = block_reduce_sum<P, 256>(acc, scratch);
      if (tid == 0) partials[c] = acc;
    }
    if (MODE == 0) {
      if (more) {
#pragma unroll
        for (int u = 0; u < 8; ++u) v[u] = __ldcs(x4 + (c + gridDim.x) * 2048 + u * 256 + tid);
      }
    } else if (more) {
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = w[u];
    }
  }
  if (MODE == 2) {
    __syncthreads();
    /* chunk j's warps, combined as block_reduce_sum's warp 0 does */
    for (int j = warp; j < k; j += 8) {
      double r = lane < 8 ? warp_parts[j][lane] : 0.0;
      r = warp_reduce_sum<P>(r, 8);
      if (lane == 0) partials[blockIdx.x + (int64_t)j * gridDim.x] = r;
    }
    __syncthreads();
  }
  if (!last_block_ticket(counters, 0, gridDim.x)) return;
  double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}


/* Small fixed chunks, one block each: chunk c = BL x L float4 (BL threads,
 * L loads each, all in flight), the lane sums in load order, block tree,
 * partial, then a ticket per block; the last block combines every partial.
 * FENCE 0: __threadfence + atomicAdd (the product's ticket); FENCE 1: the
 * ticket is one atom.add.release.gpu (orders the partial's store before
 * it), the last block an acquire fence. */
template <int BL, int L, int FENCE>
__global__ void __launch_bounds__(BL, 2048 / BL)
small_sum(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counter, double *partials) {
  __shared__ double scratch[BL / 32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    float4 v[L];
#pragma unroll
    for (int u = 0; u < L; ++u) v[u] = __ldcs(x4 + c * BL * L + u * BL + tid);
    double acc = 0.0;
#pragma unroll
    for (int u = 0; u < L; ++u) {
      acc += (double)v[u].x; acc += (double)v[u].y; acc += (double)v[u].z; acc += (double)v[u].w;
    }
    acc = block_reduce_sum<P, BL>(acc, scratch);
    if (tid == 0) partials[c] = acc;
  }
  if (tid == 0) {
    unsigned int t;
    if (FENCE == 0) {
      __threadfence();
      t = atomicAdd(counter, 1u);
    } else {
      asm volatile("atom.add.release.gpu.global.u32 %0, [%1], 1;" : "=r"(t) : "l"(counter) : "memory");
    }
    is_last = t == gridDim.x - 1;
    if (is_last) *counter = 0u;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  double r = combine_strided<P>(0.0, partials, tid, chunks, BL);
  r = block_reduce_sum<P, BL>(r, scratch);
  if (tid == 0) *y = (float)r;
}


/* Persistent blocks that take chunks in order from a counter (dynamic
 * dispatch: the blocks at work read one tight window, as a non-persistent
 * grid's do, with no block launch per chunk). Chunk = L tiles of 256
 * vectors (the product's lane order and block tree per chunk). PF: the
 * next chunk's index is taken and its loads issued before this chunk's adds
 * and tree. One ticket per block at the end; the last block combines every
 * chunk partial and resets both counters. */
template <int L, bool PF>
__global__ void __launch_bounds__(256, 2)
dyn_sum(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counters, double *partials) {
  __shared__ double scratch[256 / 32];
  __shared__ unsigned int s_next[2];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  if (tid == 0) {
    s_next[0] = atomicAdd(&counters[0], 1u);
    if (PF) s_next[1] = atomicAdd(&counters[0], 1u);
  }
  __syncthreads();
  int64_t c = s_next[0];
  int64_t cn = PF ? (int64_t)s_next[1] : 0;
  __syncthreads(); /* every thread has read s_next before thread 0 rewrites it */
  float4 v[L];
  if (c < chunks) {
#pragma unroll
    for (int u = 0; u < L; ++u) v[u] = __ldcs(x4 + c * 256 * L + u * 256 + tid);
  }
  int i = 0;
  while (c < chunks) {
    float4 w[L];
    if (PF && cn < chunks) {
#pragma unroll
      for (int u = 0; u < L; ++u) w[u] = __ldcs(x4 + cn * 256 * L + u * 256 + tid);
    }
    if (tid == 0) s_next[i & 1] = PF ? (cn < chunks ? atomicAdd(&counters[0], 1u) : 0xffffffffu)
                                     : atomicAdd(&counters[0], 1u);
    double acc = 0.0;
#pragma unroll
    for (int u = 0; u < L; ++u) {
      acc += (double)v[u].x; acc += (double)v[u].y; acc += (double)v[u].z; acc += (double)v[u].w;
    }
    acc = block_reduce_sum<P, 256>(acc, scratch); /* its barrier publishes s_next */
    if (tid == 0) partials[c] = acc;
    const int64_t got = s_next[i & 1];
    ++i;
    if (PF) {
      c = cn;
      cn = got;
#pragma unroll
      for (int u = 0; u < L; ++u) v[u] = w[u];
    } else {
      c = got;
      if (c < chunks) {
#pragma unroll
        for (int u = 0; u < L; ++u) v[u] = __ldcs(x4 + c * 256 * L + u * 256 + tid);
      }
    }
  }
  if (tid == 0) {
    __threadfence();
    is_last = atomicAdd(&counters[1], 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  if (tid == 0) {
    counters[0] = 0u;
    counters[1] = 0u;
  }
  double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* Pure reads of a fixed block of BLOCK x L float4 each, all L loads in
 * flight, one block per piece (non-persistent). */
template <int BLOCK, int L, int HINT>
__global__ void __launch_bounds__(BLOCK) read_fixed(const float4 *__restrict__ x, int64_t n4, float *sink) {
  const int64_t base = (int64_t)blockIdx.x * BLOCK * L + threadIdx.x;
  float4 v[L];
#pragma unroll
  for (int u = 0; u < L; ++u)
    v[u] = base + u * BLOCK < n4 ? ld<HINT>(x + base + u * BLOCK) : make_float4(0.f, 0.f, 0.f, 0.f);
  float m = 0.0f;
#pragma unroll
  for (int u = 0; u < L; ++u) m = fold(m, v[u]);
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* ---- bulk copies into shared memory (section `bulk`) ---------------------
 * The product's 8-tile chunk, a block each, but its 32 KB arrive by one or
 * more cp.async.bulk copies (the Hopper TMA unit; no load instructions, no
 * registers in flight) into shared memory, signalled by an mbarrier. Then
 * thread t folds vector t of tiles 0..7 in order, exactly the product's lane
 * sequence, so the bits are the product's. PIECES: copies per chunk; HINT:
 * an evict-first L2 policy on the copies; FIN 0 ticket, 1 polled. n: a
 * multiple of 8192 here. sm_90 only (this program is built for sm_90a). */
__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

template <int PIECES, bool HINT>
__device__ __forceinline__ void bulk_chunk(float4 *buf, const float4 *src, unsigned long long *bar, unsigned bytes) {
  const unsigned b = smem_addr(bar);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  unsigned long long pol = 0;
  if (HINT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  const unsigned piece = bytes / PIECES;
#pragma unroll
  for (int k = 0; k < PIECES; ++k) {
    const unsigned dst = smem_addr(buf) + k * piece;
    const char *s = reinterpret_cast<const char *>(src) + (size_t)k * piece;
    if (HINT)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst),
          "l"(s), "r"(piece), "r"(b), "l"(pol)
          : "memory");
    else
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                   "l"(s), "r"(piece), "r"(b)
                   : "memory");
  }
}
__device__ __forceinline__ void bulk_wait(unsigned long long *bar) {
  const unsigned b = smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(b)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void bulk_init(unsigned long long *bar) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
}

template <int PIECES, bool HINT, int FIN>
__global__ void __launch_bounds__(256)
bulk_sum(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counters, double *partials,
         unsigned long long *slots) {
  extern __shared__ float4 buf[]; /* 8 tiles x 256 float4, then padding that caps residency */
  __shared__ unsigned long long bar;
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  const int64_t c = blockIdx.x;
  bulk_init(&bar);
  if (tid == 0) bulk_chunk<PIECES, HINT>(buf, reinterpret_cast<const float4 *>(x) + c * 2048, &bar, 32768u);
  bulk_wait(&bar);
  double acc = 0.0;
#pragma unroll
  for (int u = 0; u < 8; ++u) {
    const float4 v = buf[u * 256 + tid];
    acc += (double)v.x; acc += (double)v.y; acc += (double)v.z; acc += (double)v.w;
  }
  acc = block_reduce_sum<P, 256>(acc, scratch);
  if (FIN == 1) {
    if (tid == 0) publish_slot(slots, c, acc);
    if (c != chunks - 1) return;
    double r = combine_polled<P>(0.0, slots, tid, chunks, 256);
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) *y = (float)r;
    return;
  }
  if (tid == 0) partials[c] = acc;
  if (!last_block_ticket(counters, 0, (unsigned)chunks)) return;
  double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* The pure read of the same: the chunk's bulk copies and the wait, no sum. */
template <int PIECES, bool HINT>
__global__ void __launch_bounds__(256) bulk_read(const float *__restrict__ x, float *sink) {
  extern __shared__ float4 buf[];
  __shared__ unsigned long long bar;
  bulk_init(&bar);
  if (threadIdx.x == 0) bulk_chunk<PIECES, HINT>(buf, reinterpret_cast<const float4 *>(x) + (int64_t)blockIdx.x * 2048, &bar, 32768u);
  bulk_wait(&bar);
  const float4 v = buf[threadIdx.x];
  if (v.x == 12345.0f) sink[blockIdx.x] = v.y;
}

/* Resident blocks that keep S bulk copies of 32 KB chunks in flight while
 * they fold and reduce earlier ones (the copies need no registers, so the
 * block tree no longer stops the reads). Block b takes chunks b, b + grid,
 * ... (window order); each chunk's partial is the product's (same lanes,
 * same tree); one ticket per block, the last block combines every partial
 * in chunk order: the product's bits. */
template <int S>
__device__ __forceinline__ void bulk_wait_phase(unsigned long long *bar, unsigned phase) {
  const unsigned b = smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(b), "r"(phase)
        : "memory");
  } while (!done);
}

template <int S>
__global__ void __launch_bounds__(256)
bulk_pipe(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counters, double *partials) {
  extern __shared__ float4 buf[]; /* S stages of 8 tiles x 256 float4 */
  __shared__ unsigned long long bar[S];
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const int64_t G = gridDim.x;
  if (tid == 0) {
    for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < S; ++s) {
      const int64_t c = blockIdx.x + (int64_t)s * G;
      if (c < chunks) bulk_chunk<1, true>(buf + s * 2048, x4 + c * 2048, &bar[s], 32768u);
    }
  int k = 0;
  for (int64_t c = blockIdx.x; c < chunks; c += G, ++k) {
    const int s = k % S;
    bulk_wait_phase<S>(&bar[s], (unsigned)((k / S) & 1));
    double acc = 0.0;
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const float4 v = buf[s * 2048 + u * 256 + tid];
      acc += (double)v.x; acc += (double)v.y; acc += (double)v.z; acc += (double)v.w;
    }
    __syncthreads(); /* stage s read by every thread (and scratch free) */
    if (tid == 0) {
      const int64_t cn = c + (int64_t)S * G;
      if (cn < chunks) bulk_chunk<1, true>(buf + s * 2048, x4 + cn * 2048, &bar[s], 32768u);
    }
    acc = block_reduce_sum<P, 256>(acc, scratch);
    if (tid == 0) partials[c] = acc;
  }
  __syncthreads();
  if (!last_block_ticket(counters, 0, (unsigned)G)) return;
  double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* The product's 8-tile chunk read by W x 256 threads (section `split`):
 * group g of 256 threads loads tiles [g * 8/W, (g + 1) * 8/W) (vector t of
 * each), groups 1.. park theirs in shared memory, and the first 256 threads
 * fold tiles 0..7 in order: lane t adds exactly the product's sequence, and
 * the block tree is the product's (block_reduce_sum<P, 256>; the other
 * warps only pass its barriers), so the bits are the product's. What
 * changes is the read: 512 x 4 or 1024 x 2 loads instead of 256 x 8 (the
 * pure reads of those patterns are faster on the H100 and the H200).
 * FIN 0 ticket, 1 polled. n: a multiple of 8192 here. */
__device__ __forceinline__ void add4(double &acc, float4 v) {
  acc += (double)v.x; acc += (double)v.y; acc += (double)v.z; acc += (double)v.w;
}

template <int W, int FIN>
__global__ void __launch_bounds__(256 * W)
split_sum(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counters, double *partials,
          unsigned long long *slots) {
  constexpr int L = 8 / W; /* tiles a thread loads */
  __shared__ float4 park[(W - 1) * L][256];
  __shared__ double scratch[8 * W]; /* warps past the 8th write here unread */
  const int tid = threadIdx.x, lane = tid & 255, group = tid >> 8;
  const int64_t c = blockIdx.x;
  const float4 *x4 = reinterpret_cast<const float4 *>(x) + c * 2048;
  float4 v[L];
#pragma unroll
  for (int u = 0; u < L; ++u) v[u] = __ldcs(x4 + (group * L + u) * 256 + lane);
  if (group > 0) {
#pragma unroll
    for (int u = 0; u < L; ++u) park[(group - 1) * L + u][lane] = v[u];
  }
  __syncthreads();
  double acc = 0.0;
  if (group == 0) {
#pragma unroll
    for (int u = 0; u < L; ++u) add4(acc, v[u]);
#pragma unroll
    for (int t = 0; t < (W - 1) * L; ++t) add4(acc, park[t][lane]);
  }
  acc = block_reduce_sum<P, 256>(acc, scratch);
  if (FIN == 1) {
    if (tid == 0) publish_slot(slots, c, acc);
    if (c != chunks - 1) return;
    double r = tid < 256 ? combine_polled<P>(0.0, slots, tid, chunks, 256) : 0.0;
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) *y = (float)r;
    return;
  }
  if (tid == 0) partials[c] = acc;
  if (!last_block_ticket(counters, 0, (unsigned)chunks)) return;
  double r = tid < 256 ? combine_strided<P>(0.0, partials, tid, chunks, 256) : 0.0;
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

/* bulk_sum with the copy issued first: thread 0 initializes the barrier,
 * fences the initialization and issues the chunk's copy before the block's
 * first barrier (bulk_sum issues it after one). Same fold, tree, finishes. */
template <int FIN>
__global__ void __launch_bounds__(256)
bulk_sum_early(const float *__restrict__ x, float *y, int64_t chunks, unsigned int *counters, double *partials,
               unsigned long long *slots) {
  extern __shared__ float4 buf[];
  __shared__ unsigned long long bar;
  __shared__ double scratch[256 / 32];
  const int tid = threadIdx.x;
  const int64_t c = blockIdx.x;
  if (tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    bulk_chunk<1, true>(buf, reinterpret_cast<const float4 *>(x) + c * 2048, &bar, 32768u);
  }
  __syncthreads(); /* the barrier is initialized before anyone waits on it */
  bulk_wait(&bar);
  double acc = 0.0;
#pragma unroll
  for (int u = 0; u < 8; ++u) add4(acc, buf[u * 256 + tid]);
  acc = block_reduce_sum<P, 256>(acc, scratch);
  if (FIN == 1) {
    if (tid == 0) publish_slot(slots, c, acc);
    if (c != chunks - 1) return;
    double r = combine_polled<P>(0.0, slots, tid, chunks, 256);
    r = block_reduce_sum<P, 256>(r, scratch);
    if (tid == 0) *y = (float)r;
    return;
  }
  if (tid == 0) partials[c] = acc;
  if (!last_block_ticket(counters, 0, (unsigned)chunks)) return;
  double r = combine_strided<P>(0.0, partials, tid, chunks, 256);
  r = block_reduce_sum<P, 256>(r, scratch);
  if (tid == 0) *y = (float)r;
}

struct Timer {
  void *fillbuf;
  cudaEvent_t a, b;
  cudaStream_t st;
  Timer(cudaStream_t s) : st(s) {
    CK(cudaMalloc(&fillbuf, 256u << 20));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  /* median and mean (us) of `reps` samples, each after a 256 MiB write */
  std::pair<double, double> time(const std::function<void()> &f, int reps = 60) {
    const std::vector<double> v = samples(f, reps);
    double mean = 0;
    for (double t : v) mean += t;
    return {v[v.size() / 2], mean / v.size()};
  }
  /* `reps` samples (us), sorted, each after a 256 MiB write */
  std::vector<double> samples(const std::function<void()> &f, int reps) {
    for (int i = 0; i < 3; ++i) f();
    CK(cudaStreamSynchronize(st));
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) {
      CK(cudaStreamSynchronize(st));
      CK(cudaMemsetAsync(fillbuf, i & 0xff, 256u << 20, st)); /* still running when `a` is recorded */
      CK(cudaEventRecord(a, st));
      f();
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      v.push_back(ms * 1e3);
    }
    CK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    return v;
  }
};

/* What every section shares: the stream, the timer, the buffers. */
struct Bench {
  Timer &T;
  cudaStream_t st;
  float *x, *y, *sink;
  void *ws;
  size_t ws_cap;
  unsigned int *persist;
  int64_t nmax;
  bool only_redux; /* VARIANTS_ONLY_REDUX: time only the product among the sums */
};

void section_read(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x;
  float *sink = b.sink;
  printf("== streaming reads (no sum), GB/s from the median\n");
  for (int64_t n : {(int64_t)52428800, (int64_t)1 << 26, (int64_t)1 << 27, b.nmax}) {
    const int64_t n4 = n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    struct R { const char *name; std::function<void()> f; };
    std::vector<R> rs = {
        {"grid b256 u1 cs", [&] { read_grid<256, 1, H_CS><<<fill(read_grid<256, 1, H_CS>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"grid b256 u1 def", [&] { read_grid<256, 1, H_DEF><<<fill(read_grid<256, 1, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"grid b256 u4 cs", [&] { read_grid<256, 4, H_CS><<<fill(read_grid<256, 4, H_CS>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"grid b256 u4 def", [&] { read_grid<256, 4, H_DEF><<<fill(read_grid<256, 4, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"grid b256 u4 na256", [&] { read_grid<256, 4, H_NA256><<<fill(read_grid<256, 4, H_NA256>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"grid b512 u4 def", [&] { read_grid<512, 4, H_DEF><<<fill(read_grid<512, 4, H_DEF>, 512), 512, 0, st>>>(x4, n4, sink); }},
        {"grid b256 u8 def", [&] { read_grid<256, 8, H_DEF><<<fill(read_grid<256, 8, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"slab b256 u4 cs", [&] { read_slab<256, 4, H_CS><<<fill(read_slab<256, 4, H_CS>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"slab b256 u4 def", [&] { read_slab<256, 4, H_DEF><<<fill(read_slab<256, 4, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"slab b256 u8 def", [&] { read_slab<256, 8, H_DEF><<<fill(read_slab<256, 8, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"slab b256 u4 na256", [&] { read_slab<256, 4, H_NA256><<<fill(read_slab<256, 4, H_NA256>, 256), 256, 0, st>>>(x4, n4, sink); }},
        {"slab b512 u4 def", [&] { read_slab<512, 4, H_DEF><<<fill(read_slab<512, 4, H_DEF>, 512), 512, 0, st>>>(x4, n4, sink); }},
    };
    for (auto &r : rs) {
      auto t = T.time(r.f);
      printf("read n=%-10lld %-22s median %8.2f us  mean %8.2f us  %7.1f GB/s\n", (long long)n, r.name, t.first,
             t.second, n * 4 / t.first / 1e3);
    }
  }
}

void section_parts(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  void *ws = b.ws;
  unsigned int *persist = b.persist;
    printf("== full fp32 sum taken apart (parts_kernel; redux = the product)\n");
    for (int64_t n : {(int64_t)1638400, (int64_t)3276800, (int64_t)6553600, (int64_t)13107200, (int64_t)26214400,
                      (int64_t)52428800}) {
      const redux_shape s{1, n, 1};
      const int64_t chunks = plan_chunks(s, REDUX_F32, REDUX_FULL).chunks; /* the product's plan */
      double *parts = reinterpret_cast<double *>(ws);
      const size_t wsb = redux_cuda_sum_workspace_bytes(REDUX_FULL, s, REDUX_F32, REDUX_F32);
      struct V { std::string name; std::function<void()> f; };
      std::vector<V> vs;
      vs.push_back({"redux", [&] {
                      redux_cuda_sum(REDUX_FULL, x, y, ws, wsb, persist, REDUX_CUDA_STREAM_COUNTERS, s, REDUX_F32,
                                     REDUX_F32, 0, st);
                    }});
      const int g0 = grid_for(parts_kernel<0>, chunks, 0), g1 = grid_for(parts_kernel<1>, chunks, 0);
      const int g2 = grid_for(parts_kernel<2>, chunks, 0), g3 = grid_for(parts_kernel<3>, chunks, 0);
      vs.push_back({"parts 0 loop", [=] { parts_kernel<0><<<g0, 256, 0, st>>>(x, y, n, chunks, persist, parts); }});
      vs.push_back({"parts 1 +tree", [=] { parts_kernel<1><<<g1, 256, 0, st>>>(x, y, n, chunks, persist, parts); }});
      vs.push_back({"parts 2 +ticket", [=] { parts_kernel<2><<<g2, 256, 0, st>>>(x, y, n, chunks, persist, parts); }});
      vs.push_back({"parts 3 +combine", [=] { parts_kernel<3><<<g3, 256, 0, st>>>(x, y, n, chunks, persist, parts); }});
      unsigned long long *slots = reinterpret_cast<unsigned long long *>(static_cast<char *>(ws) + (32u << 20));
      CK(cudaMemset(slots, 0xff, chunks * 8));
      CK(cudaDeviceSynchronize());
      const int gp = grid_for(poll_kernel<0>, chunks, 0), gf = grid_for(pdl_first, chunks, 0);
      vs.push_back({"poll", [=] { poll_kernel<0><<<gp, 256, 0, st>>>(x, y, n, chunks, slots); }});
      vs.push_back({"poll sleep 100", [=] { poll_kernel<100><<<gp, 256, 0, st>>>(x, y, n, chunks, slots); }});
      vs.push_back({"poll sleep 500", [=] { poll_kernel<500><<<gp, 256, 0, st>>>(x, y, n, chunks, slots); }});
      vs.push_back({"poll sleep 2000", [=] { poll_kernel<2000><<<gp, 256, 0, st>>>(x, y, n, chunks, slots); }});
      unsigned long long *pslots = reinterpret_cast<unsigned long long *>(static_cast<char *>(ws) + (40u << 20));
      CK(cudaMemset(pslots, 0, chunks * 16));
      CK(cudaDeviceSynchronize());
      const int gt = grid_for(ticket_slots_kernel, chunks, 0);
      vs.push_back({"ticket+slots", [=] { ticket_slots_kernel<<<gt, 256, 0, st>>>(x, y, n, chunks, persist, pslots); }});
      vs.push_back({"pdl", [=] { launch_pdl(x, y, n, chunks, parts, gf, true, st); }});
      vs.push_back({"two kernels", [=] { launch_pdl(x, y, n, chunks, parts, gf, false, st); }});
      for (int g : {1, 3, 37}) { /* other grids: the same bits, and no hang */
        poll_kernel<0><<<g, 256, 0, st>>>(x, y, n, chunks, slots);
        CK(cudaStreamSynchronize(st));
        float out = 0;
        CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
        printf("parts n=%-10lld poll grid %-8d y=%.9g\n", (long long)n, g, out);
        ticket_slots_kernel<<<g, 256, 0, st>>>(x, y, n, chunks, persist, pslots);
        CK(cudaStreamSynchronize(st));
        CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
        printf("parts n=%-10lld ticket+slots grid %-8d y=%.9g\n", (long long)n, g, out);
      }
      for (int round = 0; round < 2; ++round)
        for (auto &v : vs) {
          auto t = T.time(v.f);
          float out = 0;
          CK(cudaStreamSynchronize(st));
          CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
          printf("parts n=%-10lld %-18s median %8.2f us  mean %8.2f us  y=%.9g\n", (long long)n, v.name.c_str(),
                 t.first, t.second, out);
        }
    }
}

void section_trace(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  void *ws = b.ws;
    printf("== the finish on a clock (trace_kernel; medians over 100 calls, us; t0 = first block's entry)\n");
    printf("trace %-10s %-14s %7s %7s %7s %7s %7s %7s %7s %7s %7s %6s  %s\n", "n", "mode", "event", "entry",
           "tree50", "treeMax", "seen", "tree2", "store", "end", "launch", "wLast", "y");
    const char *mode_names[] = {"poll", "ticket", "poll+waiter", "poll warp", "poll w2=8", "poll keep", "poll late reset",
                                "late reset w2=8", "poll all", "poll all w2=8"};
    unsigned long long *ts;
    CK(cudaMalloc(&ts, 8 * 4 * 4096));
    unsigned long long *tslots = reinterpret_cast<unsigned long long *>(static_cast<char *>(ws) + (48u << 20));
    double *tparts = reinterpret_cast<double *>(static_cast<char *>(ws) + (56u << 20));
    unsigned int *tcount = reinterpret_cast<unsigned int *>(static_cast<char *>(ws) + (60u << 20));
    CK(cudaMemset(tcount, 0, 256));
    for (int64_t n : {(int64_t)1638400, (int64_t)3276800, (int64_t)6553600, (int64_t)13107200, (int64_t)26214400,
                      (int64_t)52428800}) {
      const redux_shape s{1, n, 1};
      const int64_t chunks = plan_chunks(s, REDUX_F32, REDUX_FULL).chunks;
      CK(cudaMemset(tslots, 0, chunks * 16));
      for (int mode = 0; mode < 10; ++mode) {
        if (getenv("TRACE_MODES") && !strchr(getenv("TRACE_MODES"), '0' + mode)) continue;
        auto k = mode == 0 ? trace_kernel<0> : mode == 1 ? trace_kernel<1> : mode == 2 ? trace_kernel<2>
                 : mode == 3 ? trace_kernel<3> : mode == 4 ? trace_kernel<4> : mode == 5 ? trace_kernel<5>
                 : mode == 6 ? trace_kernel<6> : mode == 7 ? trace_kernel<7> : mode == 8 ? trace_kernel<8>
                 : trace_kernel<9>;
        int g = grid_for(k, chunks, 0);
        if (mode == 2) g = (int)std::min<int64_t>(chunks, device_fit(reinterpret_cast<const void *>(k), 0) - 1) + 1;
        std::vector<double> ev, entry, t50, tmax, seen, tree2, store, end, launch, wl;
        float out = 0;
        for (int rep = 0; rep < 103; ++rep) {
          CK(cudaStreamSynchronize(st));
          CK(cudaMemsetAsync(T.fillbuf, rep & 0xff, 256u << 20, st));
          CK(cudaEventRecord(T.a, st));
          k<<<g, 256, 0, st>>>(x, y, n, chunks, tcount, tslots, tparts, ts);
          CK(cudaEventRecord(T.b, st));
          CK(cudaEventSynchronize(T.b));
          if (rep < 3) continue;
          float ms = 0;
          CK(cudaEventElapsedTime(&ms, T.a, T.b));
          std::vector<unsigned long long> h(4 * (g + 1));
          CK(cudaMemcpy(h.data(), ts, h.size() * 8, cudaMemcpyDeviceToHost));
          CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
          const int workers = mode == 2 ? g - 1 : g;
          unsigned long long t0 = ~0ull, e1 = 0;
          std::vector<double> td;
          int last_b = 0;
          for (int b = 0; b < g; ++b) { t0 = std::min(t0, h[4 * b]); e1 = std::max(e1, h[4 * b]); }
          for (int b = 0; b < workers; ++b) {
            td.push_back((h[4 * b + 1] - t0) * 1e-3);
            if (h[4 * b + 1] > h[4 * last_b + 1]) last_b = b;
          }
          std::sort(td.begin(), td.end());
          const unsigned long long *wv = h.data() + 4 * g;
          const double tm = td.back();
          ev.push_back(ms * 1e3);
          entry.push_back((e1 - t0) * 1e-3);
          t50.push_back(td[td.size() / 2]);
          tmax.push_back(tm);
          seen.push_back((wv[1] - t0) * 1e-3 - tm);
          tree2.push_back((wv[2] - wv[1]) * 1e-3);
          store.push_back((wv[3] - wv[2]) * 1e-3);
          end.push_back((wv[3] - t0) * 1e-3);
          launch.push_back(ms * 1e3 - (wv[3] - t0) * 1e-3);
          wl.push_back(last_b == g - 1 ? 1.0 : 0.0);
        }
        auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
        double wsum = 0;
        for (double v : wl) wsum += v;
        printf("trace %-10lld %-14s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %5.0f%%  %.9g\n",
               (long long)n, mode_names[mode], med(ev), med(entry), med(t50), med(tmax), med(seen), med(tree2),
               med(store), med(end), med(launch), 100.0 * wsum / wl.size(), out);
      }
    }
    printf("# event: the competition-style time; entry: last block's entry; tree50 / treeMax: median and last\n"
           "# block's tree done (all its loads returned); seen: the finishing block has every partial, after\n"
           "# treeMax; tree2: its tree; store: its final store performed; end: that moment; launch: event - end;\n"
           "# wLast: calls where the last tree was the finishing block's own.\n");
    CK(cudaFree(ts));
}

void section_launch(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  void *ws = b.ws;
    printf("== launch costs\n");
    auto t = T.time([&] { empty_kernel<<<1, 32, 0, st>>>(); });
    printf("empty                median %8.2f us  mean %8.2f us\n", t.first, t.second);
    t = T.time([&] { cudaMemsetAsync(ws, 0, 256, st); empty_kernel<<<1, 32, 0, st>>>(); });
    printf("memset+empty         median %8.2f us  mean %8.2f us\n", t.first, t.second);
}

void section_sum(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  void *ws = b.ws;
  unsigned int *persist = b.persist;
  printf("== full fp32 sum\n");
  const int64_t sizes[] = {1638400, 3276800, 6553600, 13107200, 26214400, 52428800, b.nmax};
  for (int64_t n : sizes) {
    redux_shape s{1, n, 1};
    const size_t wsb = redux_cuda_sum_workspace_bytes(REDUX_FULL, s, REDUX_F32, REDUX_F32);
    struct V { std::string name; std::function<void()> f; };
    std::vector<V> vs;
    vs.push_back({"redux", [&] {
                    redux_cuda_sum(REDUX_FULL, x, y, ws, wsb, persist, REDUX_CUDA_STREAM_COUNTERS, s, REDUX_F32, REDUX_F32, 0, st);
                  }});
    vs.push_back({"redux +memset", [&] {
                    redux_cuda_sum(REDUX_FULL, x, y, ws, wsb, nullptr, 0, s, REDUX_F32, REDUX_F32, 0, st);
                  }});
    if (!b.only_redux) {
    const size_t w6 = redux_cuda_ladder_workspace_bytes(REDUX_RUNG_LAST_BLOCK, n);
    vs.push_back({"sum_last_block", [&] { redux_cuda_ladder_sum(REDUX_RUNG_LAST_BLOCK, x, y, n, ws, w6, 0, st); }});
    const size_t w7 = redux_cuda_ladder_workspace_bytes(REDUX_RUNG_CUB, n);
    vs.push_back({"cub", [&] { redux_cuda_ladder_sum(REDUX_RUNG_CUB, x, y, n, ws, w7, 0, st); }});
    for (int target : {1024, 2048, 4096}) {
      for (int u : {4, 8}) {
        const int64_t tile = 256 * u * 4;
        const int64_t tiles = ceil_div(n, tile);
        const int64_t per = std::max<int64_t>(1, ceil_div(tiles, target));
        const int64_t chunk = per * tile, chunks = ceil_div(n, chunk);
        unsigned int *cnt = static_cast<unsigned int *>(ws);
        double *parts = reinterpret_cast<double *>(static_cast<char *>(ws) + 256);
        auto k_m = u == 4 ? blockticket_kernel<4, false, 256> : blockticket_kernel<8, false, 256>;
        auto k_r = u == 4 ? blockticket_kernel<4, true, 256> : blockticket_kernel<8, true, 256>;
        const int gm = grid_for(k_m, chunks, 0), gr = grid_for(k_r, chunks, 0);
        char name[96];
        snprintf(name, sizeof name, "blockticket T%d u%d +memset", target, u);
        vs.push_back({name, [=] {
                        cudaMemsetAsync(cnt, 0, 4, st);
                        k_m<<<gm, 256, 0, st>>>(x, y, n, chunk, chunks, cnt, parts);
                      }});
        snprintf(name, sizeof name, "blockticket T%d u%d +reset", target, u);
        vs.push_back({name, [=] { k_r<<<gr, 256, 0, st>>>(x, y, n, chunk, chunks, persist, parts); }});
      }
    }
    }
    for (auto &v : vs) {
      auto t = T.time(v.f);
      float out = 0;
      CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
      printf("sum n=%-10lld %-30s median %8.2f us  mean %8.2f us  %7.1f GB/s  y=%.9g\n", (long long)n,
             v.name.c_str(), t.first, t.second, n * 4 / t.first / 1e3, out);
    }
  }
}

void section_cols(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  void *ws = b.ws;
  unsigned int *persist = b.persist;
    printf("== columns\n");
    const redux_shape shapes[] = {{1, 8192, 8192}, {1, 2048, 65536}, {256, 4096, 64}};
    const redux_dtype types[] = {REDUX_F32, REDUX_F16, REDUX_F64};
    const char *tnames[] = {"fp32", "fp16", "fp64"};
    for (int ti = 0; ti < 3; ++ti) {
      const redux_dtype dt = types[ti];
      for (const redux_shape &s : shapes) {
        const size_t wsb = redux_cuda_sum_workspace_bytes(REDUX_COLS, s, dt, dt);
        const size_t nc = redux_cuda_sum_counters(REDUX_COLS, s, dt, dt);
        const double bytes = (dt == REDUX_F32 ? 4.0 : dt == REDUX_F16 ? 2.0 : 8.0) * s.outer * s.n * s.inner;
        if (wsb > b.ws_cap || nc > REDUX_CUDA_STREAM_COUNTERS || bytes > 4.0 * b.nmax) {
          printf("cols: too big\n");
          continue;
        }
        auto t = T.time([&] {
          redux_cuda_sum(REDUX_COLS, x, y, ws, wsb, persist, REDUX_CUDA_STREAM_COUNTERS, s, dt, dt, 0, st);
        });
        printf("cols %s (%lld,%lld,%lld) redux  median %8.2f us  mean %8.2f us  %7.1f GB/s  (counter words %zu)\n",
               tnames[ti], (long long)s.outer, (long long)s.n, (long long)s.inner, t.first, t.second,
               bytes / t.first / 1e3, nc);
      }
    }
}

void section_rows(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  void *ws = b.ws;
  unsigned int *persist = b.persist;
    printf("== short rows fp32\n");
    const redux_shape shapes[] = {{65536, 2048, 1}, {2097152, 64, 1}};
    for (const redux_shape &s : shapes) {
      const size_t wsb = redux_cuda_sum_workspace_bytes(REDUX_ROWS, s, REDUX_F32, REDUX_F32);
      auto t = T.time([&] {
        redux_cuda_sum(REDUX_ROWS, x, y, ws, wsb, persist, REDUX_CUDA_STREAM_COUNTERS, s, REDUX_F32, REDUX_F32, 0, st);
      });
      const double bytes = 4.0 * s.outer * s.n;
      printf("rows fp32 (%lld,%lld) redux  median %8.2f us  mean %8.2f us  %7.1f GB/s\n", (long long)s.outer,
             (long long)s.n, t.first, t.second, bytes / t.first / 1e3);
    }
}


/* What the sections fixed, occ, persist and small time: named launches,
 * sums among them checked against the fp64 reference rounded to fp32. */
struct Timed {
  std::string name;
  bool sum;
  std::function<void()> f;
};

/* fp64 sum of h[0, n): the reference of a prefix of the input. */
double prefix_sum(const std::vector<float> &h, int64_t n) {
  double ref = 0;
  for (int64_t i = 0; i < n; ++i) ref += h[(size_t)i];
  return ref;
}

/* Times each launch and prints median, mean, bandwidth and the check. */
/* want_bits: when given, sums whose name starts with want_prefix are also
 * compared bit for bit with *want_bits (a tree they must reproduce). */
void print_timed(Timer &T, const char *tag, int round, int64_t n, double ref, const float *y,
                 const std::vector<Timed> &vs, const unsigned int *want_bits = nullptr,
                 const char *want_prefix = "") {
  for (const auto &v : vs) {
    auto t = T.time(v.f);
    char tail[64] = "";
    if (v.sum) {
      float out = 0;
      CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
      unsigned int bits;
      memcpy(&bits, &out, 4);
      const bool checked = want_bits && v.name.rfind(want_prefix, 0) == 0;
      snprintf(tail, sizeof tail, "  %s%s", out == (float)ref ? "= ref" : "!= REF",
               !checked ? "" : bits == *want_bits ? "  same bits" : "  BITS DIFFER");
    }
    printf("%s r%d n=%-10lld %-28s median %8.2f us  mean %8.2f us  %7.1f GB/s%s\n", tag, round, (long long)n,
           v.name.c_str(), t.first, t.second, n * 4 / t.first / 1e3, tail);
  }
}

/* The device scratch of those sections, and a host copy of the input's
 * first host_n elements for their references. Counters and slots zeroed:
 * the kernels put them back to zero. */
struct Scratch {
  std::vector<float> h;
  unsigned int *cnt = nullptr;
  double *parts = nullptr;
  unsigned long long *slots = nullptr;
  Scratch(const float *x, int64_t host_n) : h((size_t)host_n) {
    CK(cudaMemcpy(h.data(), x, h.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMalloc(&cnt, 65536 * 4));
    CK(cudaMemset(cnt, 0, 65536 * 4));
    CK(cudaMalloc(&parts, (size_t)1 << 22));
    CK(cudaMalloc(&slots, (size_t)32 << 20));
    CK(cudaMemset(slots, 0, (size_t)32 << 20));
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch() {
    cudaFree(cnt);
    cudaFree(parts);
    cudaFree(slots);
  }
};

/* The competition's six benchmark sizes (fp32 elements). */
constexpr int64_t kSixSizes[] = {1638400, 3276800, 6553600, 13107200, 26214400, 52428800};

/* FIXED_ROUNDS, or the section's default. */
int rounds_or(int dflt) { return getenv("FIXED_ROUNDS") ? atoi(getenv("FIXED_ROUNDS")) : dflt; }

/* A timed pure read of x4[0, n4): blocks of BL threads, L 16-byte loads a
 * thread, a block per BL x L vectors, evict-first; named "read bBL lL". */
template <int BL, int L>
Timed read_fixed_timed(const float4 *x4, int64_t n4, float *sink, cudaStream_t st) {
  return {"read b" + std::to_string(BL) + " l" + std::to_string(L), false, [=] {
            read_fixed<BL, L, H_CS><<<(unsigned)ceil_div(n4, (int64_t)BL * L), BL, 0, st>>>(x4, n4, sink);
          }};
}

/* The product's fp32 sum of family `fam` over b.x viewed as shape s, into y. */
Timed product_family_timed(const Bench &b, const char *name, bool sum, redux_family fam, redux_shape s, float *y) {
  const size_t wsb = redux_cuda_sum_workspace_bytes(fam, s, REDUX_F32, REDUX_F32);
  const float *x = b.x;
  void *ws = b.ws;
  unsigned int *persist = b.persist;
  const cudaStream_t st = b.st;
  return {name, sum, [=] {
            redux_cuda_sum(fam, x, y, ws, wsb, persist, REDUX_CUDA_STREAM_COUNTERS, s, REDUX_F32, REDUX_F32, 0, st);
          }};
}

/* The product's full sum of x[0, n), and the probe's read of it. */
Timed product_timed(const Bench &b, int64_t n) {
  return product_family_timed(b, "redux", true, REDUX_FULL, redux_shape{1, n, 1}, b.y);
}
Timed probe_timed(const Bench &b, int64_t n) {
  const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
  float *sink = b.sink;
  const cudaStream_t st = b.st;
  return {"probe grid b256 u4 cs", false, [=] {
            read_grid<256, 4, H_CS><<<fill(read_grid<256, 4, H_CS>, 256), 256, 0, st>>>(x4, n / 4, sink);
          }};
}

void section_fixed(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== fixed chunks, one block each (non-persistent) vs the product and the probe\n");
  /* fp64 reference of every prefix timed here */
  const int64_t sizes[] = {1638400, 3276800, 6553600, 13107200, 26214400, 52428800, (int64_t)1 << 28};
  const Scratch sc(x, b.nmax);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  unsigned long long *slots = sc.slots;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n), probe_timed(b, n)};
      vs.push_back({"probe grid b256 u4 def", false, [&] {
                      read_grid<256, 4, H_DEF><<<fill(read_grid<256, 4, H_DEF>, 256), 256, 0, st>>>(x4, n4, sink);
                    }});
      vs.push_back({"read grid b1024 u2 cs g4288", false,
                    [&] { read_grid<1024, 2, H_CS><<<4288, 1024, 0, st>>>(x4, n4, sink); }});
#define FIXED_READ(BL, L, H, NAME)                                                                       \
  vs.push_back({NAME, false, [&] {                                                                      \
                  read_fixed<BL, L, H><<<(unsigned)ceil_div(n4, (int64_t)BL * L), BL, 0, st>>>(x4, n4, sink); \
                }});
      FIXED_READ(256, 8, H_CS, "read fixed b256 l8 cs")
      FIXED_READ(256, 8, H_DEF, "read fixed b256 l8 def")
      FIXED_READ(256, 16, H_CS, "read fixed b256 l16 cs")
      FIXED_READ(512, 4, H_CS, "read fixed b512 l4 cs")
      FIXED_READ(1024, 2, H_CS, "read fixed b1024 l2 cs")
      FIXED_READ(1024, 4, H_CS, "read fixed b1024 l4 cs")
#undef FIXED_READ
#define FIXED_SUM(TL, FIN, NAME)                                                                            \
  vs.push_back({NAME, true, [&] {                                                                          \
                  const int64_t chunks = ceil_div(n, (int64_t)TL * 1024);                                 \
                  fixed_sum<TL, FIN><<<(unsigned)chunks, 256, 0, st>>>(x, y, n, chunks, cnt, parts, slots); \
                }});
      FIXED_SUM(8, 0, "fixed t8 ticket")
      FIXED_SUM(8, 1, "fixed t8 polled")
      FIXED_SUM(8, 2, "fixed t8 groups")
      FIXED_SUM(16, 0, "fixed t16 ticket")
      FIXED_SUM(16, 1, "fixed t16 polled")
      FIXED_SUM(16, 2, "fixed t16 groups")
      FIXED_SUM(32, 2, "fixed t32 groups")
#undef FIXED_SUM
      print_timed(T, "fixed", round, n, ref, y, vs);
    }
  }
}

/* Dynamic shared memory that leaves room for `blocks` blocks of `kernel`
 * per SM (a way to cap residency); sets the kernel's attribute. Returns the
 * bytes, and in *got the blocks per SM the occupancy API then reports. */
template <typename K>
size_t occ_smem(K kernel, int block, int blocks, int *got) {
  int dev = 0, sm_smem = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sm_smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
  cudaFuncAttributes fa{};
  CK(cudaFuncGetAttributes(&fa, kernel));
  size_t smem = blocks <= 0 ? 0 : (size_t)sm_smem / blocks - 1024 - fa.sharedSizeBytes - 16;
  if (blocks > 0 && (size_t)sm_smem / (blocks + 1) >= smem + 1024 + fa.sharedSizeBytes) smem = 0;
  int optin = 0;
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  /* the attribute is per kernel: allow the most, each launch asks for its own */
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)fa.sharedSizeBytes));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(got, kernel, block, smem));
  return smem;
}

void section_occ(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== residency: blocks per SM and loads in flight (fixed chunks, non-persistent)\n");
  const int64_t sizes[] = {1638400, 6553600, 26214400, 52428800};
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  unsigned long long *slots = sc.slots;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n), probe_timed(b, n)};
#define OCC_READ(BL, L, H, OCC)                                                                          \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(read_fixed<BL, L, H>, BL, OCC, &got);                                     \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "read b%d l%d %s occ%d", BL, L, H == H_CS ? "cs" : "def", got);             \
    vs.push_back({nm, false, [&, sm] {                                                                   \
                    read_fixed<BL, L, H><<<(unsigned)ceil_div(n4, (int64_t)BL * L), BL, sm, st>>>(x4, n4, sink); \
                  }});                                                                                   \
  }
      OCC_READ(1024, 2, H_CS, 0)
      OCC_READ(1024, 2, H_DEF, 0)
      OCC_READ(1024, 1, H_CS, 0)
      OCC_READ(1024, 2, H_CS, 1)
      OCC_READ(512, 2, H_CS, 0)
      OCC_READ(256, 2, H_CS, 0)
      OCC_READ(256, 4, H_CS, 0)
      OCC_READ(256, 8, H_CS, 2)
      OCC_READ(256, 8, H_CS, 3)
      OCC_READ(256, 8, H_CS, 4)
      OCC_READ(256, 4, H_CS, 4)
      OCC_READ(256, 4, H_CS, 6)
#undef OCC_READ
#define OCC_SUM(FIN, U, OCC)                                                                              \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(fixed_sum<8, FIN, U>, 256, OCC, &got);                                    \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "fixed t8 %s u%d occ%d", FIN == 0 ? "ticket" : "polled", U, got);           \
    vs.push_back({nm, true, [&, sm] {                                                                    \
                    const int64_t chunks = ceil_div(n, (int64_t)8 * 1024);                              \
                    fixed_sum<8, FIN, U><<<(unsigned)chunks, 256, sm, st>>>(x, y, n, chunks, cnt, parts, slots);   \
                  }});                                                                                   \
  }
      OCC_SUM(0, 8, 0)
      OCC_SUM(0, 8, 2)
      OCC_SUM(0, 8, 3)
      OCC_SUM(0, 8, 4)
      OCC_SUM(0, 4, 0)
      OCC_SUM(0, 4, 4)
      OCC_SUM(0, 4, 6)
      OCC_SUM(0, 2, 0)
      OCC_SUM(1, 8, 2)
      OCC_SUM(1, 8, 3)
#undef OCC_SUM
      print_timed(T, "occ", round, n, ref, y, vs);
    }
  }
}

void section_persist(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== persistent window blocks over 8-tile chunks; reads by block size and residency\n");
  const int64_t sizes[] = {1638400, 6553600, 26214400, 52428800};
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  const std::vector<float> &h = sc.h;
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n)};
#define P_READ(BL, L, OCC)                                                                               \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(read_fixed<BL, L, H_CS>, BL, OCC, &got);                                  \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "read b%d l%d occ%d", BL, L, got);                                          \
    vs.push_back({nm, false, [&, sm] {                                                                   \
                    read_fixed<BL, L, H_CS><<<(unsigned)ceil_div(n4, (int64_t)BL * L), BL, sm, st>>>(x4, n4, sink); \
                  }});                                                                                   \
  }
      P_READ(1024, 1, 0)
      P_READ(1024, 1, 1)
      P_READ(512, 1, 0)
      P_READ(512, 1, 3)
      P_READ(256, 1, 0)
      P_READ(256, 2, 4)
#undef P_READ
#define P_SUM(MODE, OCC)                                                                                  \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(persist_sum<MODE>, 256, OCC, &got);                                       \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "persist mode%d occ%d", MODE, got);                                         \
    const int64_t chunks = n / 8192;                                                                     \
    const int g = (int)std::min<int64_t>(chunks, (int64_t)sms * got);                                    \
    vs.push_back({nm, true, [&, sm, g, chunks] {                                                         \
                    persist_sum<MODE><<<g, 256, sm, st>>>(x, y, n, chunks, cnt, parts);                  \
                  }});                                                                                   \
  }
      P_SUM(0, 2) P_SUM(0, 3) P_SUM(0, 4)
      P_SUM(1, 1) P_SUM(1, 2) P_SUM(1, 3)
      P_SUM(2, 1) P_SUM(2, 2) P_SUM(2, 3)
#undef P_SUM
      print_timed(T, "persist", round, n, ref, y, vs);
    }
  }
}

void section_small(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== small fixed chunks, one block each, ticket per block\n");
  const int64_t sizes[] = {1638400, 6553600, 26214400, 52428800};
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n)};
      {
        int got = 0;
        const size_t sm = occ_smem(read_fixed<1024, 1, H_CS>, 1024, 0, &got);
        vs.push_back({"read b1024 l1", false, [&, sm] {
                        read_fixed<1024, 1, H_CS><<<(unsigned)ceil_div(n4, (int64_t)1024), 1024, sm, st>>>(x4, n4, sink);
                      }});
      }
#define S_SUM(BL, L, F, OCC)                                                                              \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(small_sum<BL, L, F>, BL, OCC, &got);                                      \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "small b%d l%d f%d occ%d", BL, L, F, got);                                  \
    const int64_t chunks = n4 / (BL * L);                                                                \
    vs.push_back({nm, true, [&, sm, chunks] {                                                            \
                    small_sum<BL, L, F><<<(unsigned)chunks, BL, sm, st>>>(x, y, chunks, cnt, parts);     \
                  }});                                                                                   \
  }
      S_SUM(1024, 1, 0, 2) S_SUM(1024, 1, 1, 2)
      S_SUM(1024, 2, 0, 2) S_SUM(1024, 2, 1, 2)
      S_SUM(1024, 4, 1, 2)
      S_SUM(512, 2, 1, 4) S_SUM(512, 2, 1, 3)
      S_SUM(256, 4, 0, 4) S_SUM(256, 4, 1, 4) S_SUM(256, 4, 1, 6)
      S_SUM(256, 2, 1, 4) S_SUM(256, 2, 1, 8)
      S_SUM(256, 8, 1, 3) S_SUM(256, 8, 1, 2)
#undef S_SUM
      int sms = 0;
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
#define D_SUM(L, PF, OCC)                                                                                 \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = occ_smem(dyn_sum<L, PF>, 256, OCC, &got);                                          \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "dyn l%d pf%d occ%d", L, PF ? 1 : 0, got);                                  \
    const int64_t chunks = n4 / (256 * L);                                                               \
    const int g = (int)std::min<int64_t>(chunks, (int64_t)sms * got);                                    \
    vs.push_back({nm, true, [&, sm, chunks, g] {                                                         \
                    dyn_sum<L, PF><<<g, 256, sm, st>>>(x, y, chunks, cnt, parts);                        \
                  }});                                                                                   \
  }
      D_SUM(8, true, 2) D_SUM(8, false, 2) D_SUM(8, false, 3) D_SUM(8, false, 4)
      D_SUM(4, true, 2) D_SUM(4, true, 3) D_SUM(4, true, 4) D_SUM(4, false, 4) D_SUM(4, false, 6)
      D_SUM(2, true, 4) D_SUM(2, true, 6)
#undef D_SUM
      print_timed(T, "small", round, n, ref, y, vs);
    }
  }
}

/* Bulk copies (TMA) against the product's loads: the same chunks, tree and
 * finishes (see bulk_sum). occ: blocks per SM (dynamic shared memory caps
 * it; 32 KB of the chunk each). */
void section_bulk(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== bulk copies into shared memory (TMA), 8-tile chunks a block each\n");
  const int64_t sizes[] = {1638400, 6553600, 26214400, 52428800};
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  unsigned long long *slots = sc.slots;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  int dev = 0, sm_smem = 0, optin = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sm_smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  /* dynamic bytes for `occ` blocks per SM (0: as many as 32 KB allow) */
  auto smem_for = [&](const void *k, int occ, int *got) {
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k));
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)fa.sharedSizeBytes));
    size_t sm = 32768;
    if (occ > 0) {
      const size_t cap = (size_t)sm_smem / occ - 1024 - fa.sharedSizeBytes - 16;
      if (cap > sm) sm = cap;
    }
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(got, k, 256, sm));
    return sm;
  };
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const int64_t chunks = n / 8192;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n), probe_timed(b, n)};
      vs.push_back({"read fixed b1024 l2 cs", false, [&] {
                      read_fixed<1024, 2, H_CS><<<(unsigned)ceil_div(n4, (int64_t)2048), 1024, 0, st>>>(x4, n4, sink);
                    }});
      vs.push_back({"read fixed b256 l8 cs", false, [&] {
                      read_fixed<256, 8, H_CS><<<(unsigned)ceil_div(n4, (int64_t)2048), 256, 0, st>>>(x4, n4, sink);
                    }});
      vs.push_back({"fixed t8 ticket", true, [&] {
                      fixed_sum<8, 0><<<(unsigned)chunks, 256, 0, st>>>(x, y, n, chunks, cnt, parts, slots);
                    }});
#define B_READ(PC, HI, OCC)                                                                               \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = smem_for((const void *)bulk_read<PC, HI>, OCC, &got);                              \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "bulk read p%d h%d occ%d", PC, HI ? 1 : 0, got);                            \
    vs.push_back({nm, false, [&, sm] { bulk_read<PC, HI><<<(unsigned)chunks, 256, sm, st>>>(x, sink); }}); \
  }
#define B_SUM(PC, HI, FIN, OCC)                                                                           \
  {                                                                                                      \
    int got = 0;                                                                                         \
    const size_t sm = smem_for((const void *)bulk_sum<PC, HI, FIN>, OCC, &got);                          \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "bulk sum p%d h%d f%d occ%d", PC, HI ? 1 : 0, FIN, got);                    \
    vs.push_back({nm, true, [&, sm] {                                                                    \
                    bulk_sum<PC, HI, FIN><<<(unsigned)chunks, 256, sm, st>>>(x, y, chunks, cnt, parts, slots); \
                  }});                                                                                   \
  }
      B_READ(1, true, 0) B_READ(1, true, 2) B_READ(1, true, 3) B_READ(4, true, 0) B_READ(1, false, 0)
      B_SUM(1, true, 0, 0) B_SUM(1, true, 0, 2) B_SUM(1, true, 0, 3) B_SUM(1, true, 0, 4)
      B_SUM(4, true, 0, 0) B_SUM(8, true, 0, 0) B_SUM(1, false, 0, 0)
      B_SUM(1, true, 1, 0) B_SUM(1, true, 1, 3)
      int sms = 0;
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
#define B_PIPE(S, OCC)                                                                                    \
  {                                                                                                      \
    cudaFuncAttributes fa{};                                                                             \
    CK(cudaFuncGetAttributes(&fa, bulk_pipe<S>));                                                        \
    CK(cudaFuncSetAttribute(bulk_pipe<S>, cudaFuncAttributeMaxDynamicSharedMemorySize,                   \
                            optin - (int)fa.sharedSizeBytes));                                           \
    const size_t sm = (size_t)S * 32768;                                                                 \
    int got = 0;                                                                                         \
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, bulk_pipe<S>, 256, sm));                      \
    const int per = got < OCC ? got : OCC;                                                               \
    const int g = (int)std::min<int64_t>(chunks, (int64_t)sms * per);                                   \
    char nm[64];                                                                                         \
    snprintf(nm, sizeof nm, "bulk pipe s%d occ%d", S, per);                                             \
    vs.push_back({nm, true, [&, sm, g] { bulk_pipe<S><<<g, 256, sm, st>>>(x, y, chunks, cnt, parts); }}); \
  }
      B_PIPE(2, 1) B_PIPE(3, 1) B_PIPE(4, 1) B_PIPE(6, 1) B_PIPE(2, 2) B_PIPE(3, 2) B_PIPE(2, 3)
#undef B_PIPE
#undef B_READ
#undef B_SUM
      print_timed(T, "bulk", round, n, ref, y, vs);
    }
  }
}

/* The product's chunk read by more threads a block (split_sum), and the
 * bulk copy issued before the block's first barrier (bulk_sum_early),
 * against the product, its prototype (fixed t8) and the pure reads of the
 * same patterns. Every sum here has the product's bits (checked: "= ref"
 * compares with the fp64 reference rounded; the product's own line shows
 * whether that holds for this input). */
void section_split(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== the 8-tile chunk read by 512 or 1024 threads; the bulk copy issued first\n");
  const int64_t sizes[] = {1638400, 6553600, 26214400, 52428800};
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  unsigned long long *slots = sc.slots;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  int dev = 0, optin = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
  for (auto k : {(const void *)bulk_sum_early<0>, (const void *)bulk_sum_early<1>}) {
    cudaFuncAttributes fa{};
    CK(cudaFuncGetAttributes(&fa, k));
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - (int)fa.sharedSizeBytes));
  }
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const int64_t chunks = n / 8192;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs{product_timed(b, n), probe_timed(b, n)};
#define SPLIT_READ(BL, L, NAME)                                                                          \
  vs.push_back({NAME, false, [&] {                                                                      \
                  read_fixed<BL, L, H_CS><<<(unsigned)ceil_div(n4, (int64_t)BL * L), BL, 0, st>>>(x4, n4, sink); \
                }});
      SPLIT_READ(256, 8, "read fixed b256 l8 cs")
      SPLIT_READ(512, 4, "read fixed b512 l4 cs")
      SPLIT_READ(1024, 2, "read fixed b1024 l2 cs")
#undef SPLIT_READ
      vs.push_back({"fixed t8 ticket", true, [&] {
                      fixed_sum<8, 0><<<(unsigned)chunks, 256, 0, st>>>(x, y, n, chunks, cnt, parts, slots);
                    }});
      vs.push_back({"fixed t8 polled", true, [&] {
                      fixed_sum<8, 1><<<(unsigned)chunks, 256, 0, st>>>(x, y, n, chunks, cnt, parts, slots);
                    }});
#define SPLIT_SUM(W, FIN, NAME)                                                                          \
  vs.push_back({NAME, true, [&] {                                                                       \
                  split_sum<W, FIN><<<(unsigned)chunks, 256 * W, 0, st>>>(x, y, chunks, cnt, parts, slots); \
                }});
      SPLIT_SUM(2, 0, "split w2 (512 x 4) ticket")
      SPLIT_SUM(2, 1, "split w2 (512 x 4) polled")
      SPLIT_SUM(4, 0, "split w4 (1024 x 2) ticket")
      SPLIT_SUM(4, 1, "split w4 (1024 x 2) polled")
#undef SPLIT_SUM
      vs.push_back({"bulk early ticket", true, [&] {
                      bulk_sum_early<0><<<(unsigned)chunks, 256, 32768, st>>>(x, y, chunks, cnt, parts, slots);
                    }});
      vs.push_back({"bulk early polled", true, [&] {
                      bulk_sum_early<1><<<(unsigned)chunks, 256, 32768, st>>>(x, y, chunks, cnt, parts, slots);
                    }});
      print_timed(T, "split", round, n, ref, y, vs);
    }
  }
}


/* ---- the public H100 entry's schedule (section `tiles`) -------------------
 * From its public description: blocks of 1024 threads, tiles of 2048
 * contiguous float4 (32 KB), two loads a thread a tile, blocks grid-stride
 * over tiles. ACC 0: fp32 lanes and tree, one float2 atomicAdd a block into
 * one of 4 slots, integer ticket, the last block adds the slots (the entry).
 * ACC 1: the same schedule with fp64 lanes and tree, each block's partial
 * stored, ticket, the last block combines the partials in block order
 * (deterministic for a grid fixed by the shape). n: a multiple of 8192. */
__device__ __forceinline__ float warp_sum_f32(float v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}
template <int ACC>
__global__ void __launch_bounds__(1024)
tiles_sum(const float4 *__restrict__ x4, int64_t n4, float *y, unsigned int *ticket, double *partials, float2 *fslots) {
  __shared__ double sd[32];
  __shared__ float sf[32];
  __shared__ bool is_last;
  const int tid = threadIdx.x;
  const int64_t stride = (int64_t)gridDim.x * 2048;
  double accd = 0.0;
  float accf = 0.0f;
  for (int64_t i = (int64_t)blockIdx.x * 2048 + tid; i < n4; i += stride) {
    const float4 a = __ldcs(x4 + i), b = __ldcs(x4 + i + 1024);
    if (ACC == 0) {
      accf += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
    } else {
      accd += (double)a.x; accd += (double)a.y; accd += (double)a.z; accd += (double)a.w;
      accd += (double)b.x; accd += (double)b.y; accd += (double)b.z; accd += (double)b.w;
    }
  }
  if (ACC == 0) {
    accf = warp_sum_f32(accf);
    if ((tid & 31) == 0) sf[tid >> 5] = accf;
    __syncthreads();
    if (tid < 32) {
      const float v = warp_sum_f32(sf[tid]);
      if (tid == 0) {
        atomicAdd(&fslots[blockIdx.x & 3], make_float2(v, 0.0f));
        __threadfence();
        is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
      }
    }
    __syncthreads();
    if (is_last && tid == 0) {
      __threadfence();
      float s = 0.0f;
      for (int k = 0; k < 4; ++k) {
        s += __ldcg(&fslots[k].x) + __ldcg(&fslots[k].y);
        fslots[k] = make_float2(0.0f, 0.0f);
      }
      *ticket = 0;
      *y = s;
    }
    return;
  }
  accd = block_reduce_sum<P, 1024>(accd, sd);
  if (tid == 0) partials[blockIdx.x] = accd;
  if (!last_block_ticket(ticket, 0, gridDim.x)) return;
  double r = combine_strided<P>(0.0, partials, tid, gridDim.x, 1024);
  r = block_reduce_sum<P, 1024>(r, sd);
  if (tid == 0) *y = (float)r;
}

/* The rows the two 1024-thread sections (tiles, wide) time first: the
 * product, pure reads of 1024 threads x L loads a block for L = 1, 2 and
 * (with_l4) 4, and the public H100 entry's own kernel (fp32 atomics, its
 * 4288 blocks; its float2 slots are the first of sc.slots). */
std::vector<Timed> product_reads_entry(const Bench &b, int64_t n, const Scratch &sc, bool with_l4) {
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
  const int64_t n4 = n / 4;
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  float2 *fslots = reinterpret_cast<float2 *>(sc.slots);
  std::vector<Timed> vs{product_timed(b, n)};
  vs.push_back(read_fixed_timed<1024, 1>(x4, n4, sink, st));
  vs.push_back(read_fixed_timed<1024, 2>(x4, n4, sink, st));
  if (with_l4)
    vs.push_back(read_fixed_timed<1024, 4>(x4, n4, sink, st));
  vs.push_back({"entry fp32 atomics g4288", true, [=] {
                  tiles_sum<0><<<4288, 1024, 0, st>>>(x4, n4, y, cnt, parts, fslots);
                }});
  return vs;
}

void section_tiles(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  printf("== the public H100 entry's schedule: fp32 atomics (the entry) and fp64 with ordered partials\n");
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  float2 *fslots = reinterpret_cast<float2 *>(sc.slots);
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : kSixSizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const int64_t tiles = n4 / 2048;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, false);
      const int64_t chunks8 = n / 8192;
      unsigned long long *slots = sc.slots + (1 << 16); /* past the entry's float2 slots */
      vs.push_back({"fixed t8 ticket (prev tree)", true, [=] {
                      fixed_sum<8, 0><<<(unsigned)chunks8, 256, 0, st>>>(x, y, n, chunks8, cnt, parts, slots);
                    }});
      vs.push_back({"fixed t8 polled (prev tree)", true, [=] {
                      fixed_sum<8, 1><<<(unsigned)chunks8, 256, 0, st>>>(x, y, n, chunks8, cnt, parts, slots);
                    }});
      for (int per : {1, 2, 3, 4}) {
        const int g = (int)ceil_div(tiles, (int64_t)per);
        char nm[64];
        snprintf(nm, sizeof nm, "fp64 ordered %d tiles/block", per);
        vs.push_back({nm, true, [=] { tiles_sum<1><<<g, 1024, 0, st>>>(x4, n4, y, cnt, parts, fslots); }});
      }
      vs.push_back({"fp64 ordered g4288", true, [=] {
                      tiles_sum<1><<<4288, 1024, 0, st>>>(x4, n4, y, cnt, parts, fslots);
                    }});
      print_timed(T, "tiles", round, n, ref, y, vs);
    }
  }
}

/* ---- 1024-lane tiles with per-tile partials (section `wide`) -------------
 * The candidate tree: a chunk is one 32 KB tile of 2048 float4; thread t of
 * 1024 adds vector t, then vector t + 1024, in fp64; the block tree
 * (block_reduce_sum<1024>) gives the chunk's partial; the partials are
 * combined in chunk order by 1024 strided lanes and the block tree. The
 * schedule is free: a block takes T chunks (contiguous, or strided across
 * the grid) with all 2T loads in flight and reduces the T lane sums in one
 * pass of the block tree, and stores a partial per chunk, so every T and
 * every finish give the same bits. FIN 0: ticket after the block's chunks;
 * FIN 1: polled slots (finish.cuh). n: a multiple of 8192. */
/* A lane's sum of one chunk's V vectors in vector order, then the warp
 * tree; lane 0 leaves the warp's sum in sdk[warp]. */
template <int V>
__device__ __forceinline__ void wide_fold(const float4 (&v)[V], double *sdk, int lane, int warp) {
  double s = 0.0;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    s = P::add(s, v[j].x); s = P::add(s, v[j].y); s = P::add(s, v[j].z); s = P::add(s, v[j].w);
  }
  s = warp_reduce_sum<P>(s, 32);
  if (lane == 0) sdk[warp] = s;
}
template <int V, int T, int FIN, bool STRIDED, int MINB, bool SEQ>
__global__ void __launch_bounds__(1024, MINB)
wide_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned int *ticket, double *partials,
         unsigned long long *slots) {
  constexpr int64_t CH = 1024 * V; /* float4 per chunk */
  __shared__ double sd[T][32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t c0 = STRIDED ? blockIdx.x : (int64_t)blockIdx.x * T;
  const int64_t cstep = STRIDED ? gridDim.x : 1;
  const int kmax = (int)min((int64_t)T, (chunks - c0 + cstep - 1) / cstep); /* this block's chunks */
  if constexpr (SEQ) {
    /* One chunk at a time, the next chunk's loads issued before this
     * one's adds and warp tree. */
    const float4 *p = x4 + c0 * CH + tid;
    float4 cur[V];
#pragma unroll
    for (int j = 0; j < V; ++j) cur[j] = __ldcs(p + j * 1024);
#pragma unroll 1
    for (int k = 0; k < kmax; ++k) {
      float4 nxt[V];
      if (k + 1 < kmax) {
        p += cstep * CH;
#pragma unroll
        for (int j = 0; j < V; ++j) nxt[j] = __ldcs(p + j * 1024);
      }
      wide_fold<V>(cur, sd[k], lane, warp);
#pragma unroll
      for (int j = 0; j < V; ++j) cur[j] = nxt[j];
    }
  } else {
    float4 v[T][V];
#pragma unroll
    for (int k = 0; k < T; ++k)
      if (k < kmax) {
#pragma unroll
        for (int j = 0; j < V; ++j) v[k][j] = __ldcs(x4 + (c0 + k * cstep) * CH + j * 1024 + tid);
      }
#pragma unroll
    for (int k = 0; k < T; ++k) {
      if (k >= kmax) break;
      wide_fold<V>(v[k], sd[k], lane, warp);
    }
  }
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int k = 0; k < T; ++k) {
      if (k >= kmax) break;
      const double v = warp_reduce_sum<P>(sd[k][lane], 32);
      if (lane == 0) {
        if (FIN == 1) publish_slot(slots, c0 + k * cstep, v);
        else partials[c0 + k * cstep] = v;
      }
    }
  }
  double r;
  if (FIN == 1) {
    if (blockIdx.x != gridDim.x - 1) return;
    __syncthreads(); /* warp 0 has read sd: the tree below rewrites it */
    r = combine_polled<P>(0.0, slots, tid, chunks, 1024);
  } else {
    if (!last_block_ticket(ticket, 0, gridDim.x)) return;
    r = combine_strided<P>(0.0, partials, tid, chunks, 1024);
  }
  r = block_reduce_sum<P, 1024>(r, &sd[0][0]);
  if (tid == 0) *y = (float)r;
}

/* The wide tree's bits for x[0, n) (a chunk a block, ticket): what every
 * same-bits variant of sections wide, depth and lanes must give. */
unsigned int wide_tree_bits(const Bench &b, int64_t n, const Scratch &sc) {
  const int64_t chunks = n / 4 / 2048;
  wide_sum<2, 1, 0, false, 2, false><<<(unsigned)chunks, 1024, 0, b.st>>>(
      reinterpret_cast<const float4 *>(b.x), chunks, b.y, sc.cnt, sc.parts, sc.slots + (1 << 16));
  CK(cudaStreamSynchronize(b.st));
  unsigned int want;
  CK(cudaMemcpy(&want, b.y, 4, cudaMemcpyDeviceToHost));
  return want;
}

void section_wide(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y;
  printf("== 1024-lane 32 KB tiles, a partial per tile: T tiles a block, ticket or polled finish (same bits)\n");
  const Scratch sc(x, 52428800);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  unsigned long long *slots = sc.slots + (1 << 16); /* past the entry's float2 slots */
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : kSixSizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      /* The bits every wide variant must give: T = 1, ticket. */
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, true);
#define WIDE(VV, TT, FIN, STR, MINB, SEQ, NAME)                                                          \
  vs.push_back({NAME, true, [=] {                                                                           \
                  const int64_t ch = n4 / (1024 * VV);                                                      \
                  wide_sum<VV, TT, FIN, STR, MINB, SEQ><<<(unsigned)ceil_div(ch, (int64_t)TT), 1024, 0, st>>>( \
                      x4, ch, y, cnt, parts, slots);                                                        \
                }})
      WIDE(2, 1, 0, false, 2, false, "wide T1 ticket");
      WIDE(2, 1, 1, false, 2, false, "wide T1 polled");
      WIDE(2, 2, 1, false, 2, false, "wide T2 polled");
      WIDE(2, 2, 1, false, 2, true, "wide T2 polled seq");
      WIDE(2, 2, 1, true, 2, false, "wide T2 polled strided");
      WIDE(2, 4, 1, false, 2, true, "wide T4 polled seq");
      print_timed(T, "wide", round, n, ref, y, vs, &want, "wide");
      /* 16 KB chunks (a vector a lane): a tree of their own. */
      wide_sum<1, 1, 0, false, 2, false><<<(unsigned)(n4 / 1024), 1024, 0, st>>>(x4, n4 / 1024, y, cnt, parts, slots);
      CK(cudaStreamSynchronize(st));
      unsigned int want_half;
      CK(cudaMemcpy(&want_half, y, 4, cudaMemcpyDeviceToHost));
      vs.clear();
      WIDE(1, 1, 0, false, 2, false, "half T1 ticket");
      WIDE(1, 1, 1, false, 2, false, "half T1 polled");
      WIDE(1, 2, 0, false, 2, false, "half T2 ticket");
      WIDE(1, 2, 1, false, 2, false, "half T2 polled");
      WIDE(1, 2, 1, false, 2, true, "half T2 polled seq");
      WIDE(1, 4, 1, false, 2, false, "half T4 polled");
      WIDE(1, 4, 1, false, 2, true, "half T4 polled seq");
      print_timed(T, "wide", round, n, ref, y, vs, &want_half, "half");
#undef WIDE
    }
    /* Inputs of one wide chunk or a few: the product alone (sum_wide_short_kernel
     * up to 1024 fp32, else 1024-thread blocks). */
    for (int64_t n : {1024, 1025, 4096, 8192, 65536})
      print_timed(T, "wide", round, n, prefix_sum(h, n), y, {product_timed(b, n)});
  }
}

/* ---- loads in flight a thread (section `depth`) ---------------------------
 * On the H100 pure reads of 1024 threads x 1 load a block (16 KB) beat
 * 1024 x 2 (32 KB, the wide chunk) by ~2 us at 52.4M. Are fewer bytes in
 * flight what reads faster there? The wide tree's chunk read two ways that
 * keep its bits (no: both slower; leaderboard/HISTORY.md): DEP, tile 1's loads issued only once tile 0's adds are done (a
 * data dependency on the lane sum, so neither compiler may hoist them);
 * THREADS 512, two lanes a thread (t and t + 512), whose warp trees give
 * warps w and w + 16 of the 1024-lane tree. Polled finish, a chunk a block. */
__device__ __forceinline__ int64_t after(double s) { return s != s ? 1 : 0; } /* 0, known only once s is */

/* The 1024-lane block tree over LPT lanes a thread (lane t + k * THREADS in
 * l[k]): each lane's warp tree, then the 32 warps' values in order; the
 * result is valid in warp 0. */
template <int THREADS, int LPT>
__device__ __forceinline__ double lanes_block_tree(double (&l)[LPT], double *sd, int warp, int lane) {
#pragma unroll
  for (int k = 0; k < LPT; ++k) {
    l[k] = warp_reduce_sum<P>(l[k], 32);
    if (lane == 0) sd[warp + k * (THREADS / 32)] = l[k];
  }
  __syncthreads();
  return warp == 0 ? warp_reduce_sum<P>(sd[lane], 32) : 0.0;
}

/* The wide tree's end for a block of THREADS threads holding LPT lanes
 * each: the block tree, the chunk's polled slot, and in the grid's last
 * block the polled finish over the 1024 lanes. */
template <int THREADS, int LPT>
__device__ __forceinline__ void wide_lanes_publish_finish(double (&s)[LPT], double *sd, unsigned long long *slots,
                                                          int64_t chunks, float *y) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const double w = lanes_block_tree<THREADS, LPT>(s, sd, warp, lane);
  if (warp == 0 && lane == 0) publish_slot(slots, blockIdx.x, w);
  if (blockIdx.x != gridDim.x - 1) return;
  __syncthreads(); /* warp 0 has read sd: the tree below rewrites it */
  /* combine_polled's 1024 lanes: thread t takes lanes t + k * THREADS. */
  double rl[LPT];
#pragma unroll
  for (int k = 0; k < LPT; ++k) rl[k] = combine_polled<P, 4 / LPT>(0.0, slots, tid + k * THREADS, chunks, 1024);
  const double r = lanes_block_tree<THREADS, LPT>(rl, sd, warp, lane);
  if (warp == 0 && lane == 0) *y = (float)r;
}

template <int THREADS, bool DEP, int MINB = 2048 / THREADS>
__global__ void __launch_bounds__(THREADS, MINB)
wide_depth_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots) {
  constexpr int LPT = 1024 / THREADS; /* lanes a thread */
  __shared__ double sd[32];
  const int tid = threadIdx.x;
  const float4 *p = x4 + (int64_t)blockIdx.x * 2048 + tid;
  double s[LPT];
  float4 v0[LPT], v1[LPT];
#pragma unroll
  for (int k = 0; k < LPT; ++k) v0[k] = __ldcs(p + k * THREADS);
  if (!DEP) {
#pragma unroll
    for (int k = 0; k < LPT; ++k) v1[k] = __ldcs(p + 1024 + k * THREADS);
  }
#pragma unroll
  for (int k = 0; k < LPT; ++k) {
    s[k] = 0.0;
    s[k] = P::add(s[k], v0[k].x); s[k] = P::add(s[k], v0[k].y);
    s[k] = P::add(s[k], v0[k].z); s[k] = P::add(s[k], v0[k].w);
  }
  if (DEP) {
#pragma unroll
    for (int k = 0; k < LPT; ++k) v1[k] = __ldcs(p + 1024 + k * THREADS + after(s[k]));
  }
#pragma unroll
  for (int k = 0; k < LPT; ++k) {
    s[k] = P::add(s[k], v1[k].x); s[k] = P::add(s[k], v1[k].y);
    s[k] = P::add(s[k], v1[k].z); s[k] = P::add(s[k], v1[k].w);
  }
  wide_lanes_publish_finish<THREADS, LPT>(s, sd, slots, chunks, y);
}

/* Pure reads of the wide chunk with tile 1's load after tile 0's value. */
__global__ void __launch_bounds__(1024) read_wide_dep(const float4 *__restrict__ x4, float *sink) {
  const float4 *p = x4 + (int64_t)blockIdx.x * 2048 + threadIdx.x;
  const float4 a = __ldcs(p);
  const float m0 = fold(0.0f, a);
  const float4 b = __ldcs(p + 1024 + after((double)m0));
  const float m = fold(m0, b);
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* A 1024-thread block's tail in the pair kernels: the block tree of lane
 * sum s, its slot, and (the grid's last block) the polled finish of nslots. */
__device__ __forceinline__ void pair_reduce_publish(double s, double *sd, unsigned long long *slots, int64_t slot,
                                                    int64_t nslots, float *y) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  s = warp_reduce_sum<P>(s, 32);
  if (lane == 0) sd[warp] = s;
  __syncthreads();
  if (warp == 0) {
    const double w = warp_reduce_sum<P>(sd[lane], 32);
    if (lane == 0) publish_slot(slots, slot, w);
  }
  if (blockIdx.x != gridDim.x - 1) return;
  __syncthreads(); /* warp 0 has read sd: the tree below rewrites it */
  double r = combine_polled<P, 4>(0.0, slots, tid, nslots, 1024);
  r = block_reduce_sum<P, 1024>(r, sd);
  if (tid == 0) *y = (float)r;
}

/* The wide chunk on a cluster of two 1024-thread blocks, a 16 KB tile each
 * (the H100's fastest read: bytes a block, not bytes in flight, set its
 * speed). Rank 0 adds its tile's vector t into lane t and stores the lane
 * into rank 1's shared memory; rank 1 continues each lane with its own
 * tile's vector, so lane t adds the same elements in the same order as the
 * wide tree; rank 1 reduces and publishes. READ_ONLY: the same launch with
 * no arithmetic and no exchange (the pair's read floor). Diagnostics (wrong
 * sums, timings only): STORE false, no remote store of the lanes; BARRIER
 * false, no cluster barrier; TREE0, rank 0 also reduces its own tile and
 * publishes a slot of its own (2 x chunks slots). */
template <bool READ_ONLY, bool STORE = true, bool BARRIER = true, bool TREE0 = false>
__global__ void __launch_bounds__(1024, 2)
wide_pair_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots, float *sink) {
  namespace cg = cooperative_groups;
  __shared__ double lanes[1024];
  __shared__ double sd[32];
  const int tid = threadIdx.x;
  const unsigned rank = cg::this_cluster().block_rank();
  const int64_t chunk = blockIdx.x >> 1;
  const float4 v = __ldcs(x4 + chunk * 2048 + rank * 1024 + tid);
  if (READ_ONLY) {
    if (fold(0.0f, v) == 12345.0f) sink[blockIdx.x] = 1.0f;
    return;
  }
  double s = 0.0;
  if (rank == 0) {
    s = P::add(s, v.x); s = P::add(s, v.y); s = P::add(s, v.z); s = P::add(s, v.w);
    if (STORE) *cg::this_cluster().map_shared_rank(&lanes[tid], 1) = s;
  }
  if (BARRIER)
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (rank == 0 && !TREE0) return;
  if (rank == 1 && STORE && BARRIER) s = lanes[tid];
  if (rank == 1) { s = P::add(s, v.x); s = P::add(s, v.y); s = P::add(s, v.z); s = P::add(s, v.w); }
  pair_reduce_publish(s, sd, slots, TREE0 ? (int64_t)blockIdx.x : chunk, TREE0 ? 2 * chunks : chunks, y);
}

/* Odd blocks: rank 1's work without the pair (no cluster, no exchange);
 * even blocks: pure reads. Timings only. */
__global__ void __launch_bounds__(1024, 2)
wide_odd_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots, float *sink) {
  __shared__ double sd[32];
  const int tid = threadIdx.x;
  const int64_t chunk = blockIdx.x >> 1;
  const float4 v = __ldcs(x4 + (int64_t)blockIdx.x * 1024 + tid);
  if ((blockIdx.x & 1) == 0) {
    if (fold(0.0f, v) == 12345.0f) sink[blockIdx.x] = 1.0f;
    return;
  }
  double s = 0.0;
  s = P::add(s, v.x); s = P::add(s, v.y); s = P::add(s, v.z); s = P::add(s, v.w);
  pair_reduce_publish(s, sd, slots, chunk, chunks, y);
}

/* The pair with a split cluster barrier: each rank arrives at the start
 * (rank 1 after initialising an mbarrier in its shared memory) and waits
 * only where it must: rank 0 before its remote stores (rank 1 has started),
 * rank 1 before it exits. Rank 0's threads each store their lane into rank
 * 1's shared memory and arrive on rank 1's mbarrier (release, cluster
 * scope); rank 1 waits on its own mbarrier (acquire). Same bits as the wide
 * tree. */
__global__ void __launch_bounds__(1024, 2)
wide_pair_mbar_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots) {
  namespace cg = cooperative_groups;
  __shared__ double lanes[1024];
  __shared__ double sd[32];
  __shared__ unsigned long long bar;
  const int tid = threadIdx.x;
  const unsigned rank = cg::this_cluster().block_rank();
  const int64_t chunk = blockIdx.x >> 1;
  const unsigned bar_a = smem_addr(&bar);
  if (rank == 1 && tid == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar_a), "r"(1024) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (rank == 1) __syncthreads(); /* thread 0's init before any thread's arrive below */
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  const float4 v = __ldcs(x4 + chunk * 2048 + rank * 1024 + tid);
  double s = 0.0;
  if (rank == 0) {
    s = P::add(s, v.x); s = P::add(s, v.y); s = P::add(s, v.z); s = P::add(s, v.w);
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); /* rank 1 has started */
    unsigned r_lane, r_bar;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(r_lane) : "r"(smem_addr(&lanes[tid])));
    asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(r_bar) : "r"(bar_a));
    asm volatile("st.shared::cluster.f64 [%0], %1;" ::"r"(r_lane), "d"(s) : "memory");
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(r_bar) : "memory");
    return;
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(bar_a)
                 : "memory");
  s = lanes[tid];
  s = P::add(s, v.x); s = P::add(s, v.y); s = P::add(s, v.z); s = P::add(s, v.w);
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); /* pairs this thread's arrive */
  pair_reduce_publish(s, sd, slots, chunk, chunks, y);
}

/* Launches `kernel` on `grid` blocks of 1024 threads in clusters of two. */
template <typename K, typename... Args>
void launch_pairs(K kernel, unsigned grid, cudaStream_t st, Args... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(1024);
  cfg.stream = st;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

void section_depth(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  printf("== the wide chunk with fewer loads in flight a thread: tile 1 after tile 0 (dep), or 512 threads x 2 lanes "
         "(same bits)\n");
  const int64_t sizes[] = {1638400, 6553600, 13107200, 52428800};
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  for (auto k : {std::make_pair("read pair", (const void *)wide_pair_sum<true>),
                 std::make_pair("depth pair", (const void *)wide_pair_sum<false>),
                 std::make_pair("pair no exchange", (const void *)wide_pair_sum<false, false, false>)}) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3(6400);
    cfg.blockDim = dim3(1024);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = -1;
    CK(cudaOccupancyMaxActiveClusters(&clusters, k.second, &cfg));
    printf("depth %s: at most %d clusters of 2 at once\n", k.first, clusters);
  }
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(sc.h, n);
      const int64_t n4 = n / 4, chunks = n4 / 2048;
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, false);
      vs.push_back({"read b1024 l2 dep", false, [=] { read_wide_dep<<<(unsigned)chunks, 1024, 0, st>>>(x4, sink); }});
      vs.push_back({"depth wide T1 polled", true, [=] {
                      wide_sum<2, 1, 1, false, 2, false><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, cnt,
                                                                                           parts, slots);
                    }});
      vs.push_back({"depth b1024", true, [=] { wide_depth_sum<1024, false><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
      vs.push_back({"depth b1024 dep", true, [=] { wide_depth_sum<1024, true><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
      vs.push_back({"depth b512", true, [=] { wide_depth_sum<512, false><<<(unsigned)chunks, 512, 0, st>>>(x4, chunks, y, slots); }});
      vs.push_back({"depth b512 dep", true, [=] { wide_depth_sum<512, true><<<(unsigned)chunks, 512, 0, st>>>(x4, chunks, y, slots); }});
      vs.push_back({"read pair l1", false, [=] {
                      launch_pairs(wide_pair_sum<true>, (unsigned)(2 * chunks), st, x4, chunks, y, slots, sink);
                    }});
      vs.push_back({"depth pair", true, [=] {
                      launch_pairs(wide_pair_sum<false>, (unsigned)(2 * chunks), st, x4, chunks, y, slots, sink);
                    }});
      vs.push_back({"depth pair mbarrier", true, [=] {
                      launch_pairs(wide_pair_mbar_sum, (unsigned)(2 * chunks), st, x4, chunks, y, slots);
                    }});
      vs.push_back({"pair no exchange (wrong sum)", false, [=] {
                      launch_pairs(wide_pair_sum<false, false, false>, (unsigned)(2 * chunks), st, x4, chunks, y,
                                   slots, sink);
                    }});
      vs.push_back({"pair barrier only (wrong)", false, [=] {
                      launch_pairs(wide_pair_sum<false, false, true>, (unsigned)(2 * chunks), st, x4, chunks, y,
                                   slots, sink);
                    }});
      vs.push_back({"pair trees on both (wrong)", false, [=] {
                      launch_pairs(wide_pair_sum<false, false, false, true>, (unsigned)(2 * chunks), st, x4, chunks,
                                   y, slots, sink);
                    }});
      vs.push_back({"odd trees no cluster (wrong)", false, [=] {
                      wide_odd_sum<<<(unsigned)(2 * chunks), 1024, 0, st>>>(x4, chunks, y, slots, sink);
                    }});
      print_timed(T, "depth", round, n, ref, y, vs, &want, "depth");
    }
  }
}

/* A wide-tree lane in fp64: vector t of tile 0, then of tile 1, element by
 * element (the product's lane order, so its bits). */
__device__ __forceinline__ double wide_lane_of(float4 t0, float4 t1) {
  double s = 0.0;
  s = P::add(s, t0.x); s = P::add(s, t0.y); s = P::add(s, t0.z); s = P::add(s, t0.w);
  s = P::add(s, t1.x); s = P::add(s, t1.y); s = P::add(s, t1.z); s = P::add(s, t1.w);
  return s;
}

/* ---- the block tree's second level deferred (section `defer`) -----------
 * On the H100 a block tree costs more than its arithmetic: trees on half of
 * the 16 KB blocks of a pure read took 3.2 us more at 52.4M (section depth,
 * "odd trees"), and the wide tree is 1.5-2 us over the 1024 x 2 read. The
 * hypothesis: the tail of a block (its warps' shuffle trees, the barrier,
 * warp 0's tree over the 32 warps, the slot) keeps the block's slot on the
 * SM while nothing of it is in flight. Here each warp publishes its own
 * warp sum (a polled word, as the chunk slots are) and leaves: no barrier.
 * The second level of chunk c (the same warp_reduce_sum over the 32 warp
 * sums in warp order, so the wide tree's bits) is done by warp 0 of the
 * block of chunk c + LAG, right after issuing its own loads, while they are
 * in flight; the last LAG chunks' second levels by ceil(LAG / 32) blocks
 * launched after the chunks (a chunk a warp), the last of which combines
 * the chunk slots (the polled finish). LAG is a schedule, not the bits.
 * MODE 0: that sum. Timings only (wrong sums): MODE 1, the warp sums stored
 * and no second level, no finish; MODE 2, the product's block tree and a
 * plain store of its partial, no finish; MODE 3, the fold alone. */
/* Warp words are polled like the chunk slots: st_slot / ld_slot (above). */

/* The second level of chunk c by one warp: waits for its 32 warp words,
 * empties them, reduces them in warp order and publishes the chunk slot. */
__device__ __forceinline__ void defer_second_level(int64_t c, unsigned long long *words, unsigned long long *slots,
                                                   int lane) {
  unsigned long long *w = words + c * 32 + lane;
  unsigned long long u = ld_slot(w);
  while (u == 0) u = ld_slot(w);
  st_slot(w, 0ull);
  double v = __longlong_as_double((long long)~u);
  v = warp_reduce_sum<P>(v, 32);
  if (lane == 0) publish_slot(slots, c, v);
}

template <int MODE>
__global__ void __launch_bounds__(1024, 2)
defer_sum(const float4 *__restrict__ x4, int64_t chunks, int64_t lag, float *y, unsigned long long *slots,
          unsigned long long *words, double *parts, float *sink) {
  __shared__ double sd[32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t b = blockIdx.x;
  if (b < chunks) {
    const float4 *p = x4 + b * 2048 + tid;
    const float4 v0 = __ldcs(p), v1 = __ldcs(p + 1024);
    if (MODE == 0 && warp == 0 && b >= lag) defer_second_level(b - lag, words, slots, lane);
    double s = wide_lane_of(v0, v1);
    if (MODE == 3) {
      if (s == 12345.0) sink[b] = 1.0f;
      return;
    }
    if (MODE == 2) {
      s = block_reduce_sum<P, 1024, false>(s, sd);
      if (tid == 0) parts[b] = s;
      return;
    }
    s = warp_reduce_sum<P>(s, 32);
    if (lane == 0) {
      if (MODE == 1) parts[b * 32 + warp] = s;
      else st_slot(words + b * 32 + warp, slot_word(s));
    }
    return;
  }
  /* The blocks after the chunks: the last min(lag, chunks) second levels. */
  const int64_t first = chunks - (lag < chunks ? lag : chunks);
  const int64_t c = first + (b - chunks) * 32 + warp;
  if (c < chunks) defer_second_level(c, words, slots, lane);
  if (b != gridDim.x - 1) return;
  __syncthreads();
  double r = combine_polled<P, 4>(0.0, slots, tid, chunks, 1024);
  r = block_reduce_sum<P, 1024>(r, sd);
  if (tid == 0) *y = (float)r;
}

/* ---- where the polled finish's time goes (section `defer`, continued) ----
 * Section defer's diagnostics on the H100: the wide tree with its block tree
 * and a plain store of each partial but no finish runs at the 1024 x 2 read
 * (74.2 against 74.8 us at 52.4M), the product 76.8: the finish, not the
 * block tree, is the 2.5 us. Variants of the finish, all the wide tree's
 * chunks and lanes and combine_polled's order (the same bits):
 * FIN 0 (wrong sum, timings only): each block publishes its slot into a
 *   slot area nobody polls, no finishing block (the slot store's price);
 * FIN 1: the last chunk's block combines each lane's slots below
 *   chunks - lag while its own loads are in flight, then the rest;
 * FIN 2: a dedicated finishing block launched after the chunks (grid
 *   chunks + 1) polls and combines from its dispatch, BATCH slots in
 *   flight a lane. */
template <int FIN, int BATCH = 4>
__global__ void __launch_bounds__(1024, 2)
finish_sum(const float4 *__restrict__ x4, int64_t chunks, int64_t lag, float *y, unsigned long long *slots,
           unsigned long long *junk) {
  __shared__ double sd[32];
  const int tid = threadIdx.x;
  const int64_t b = blockIdx.x;
  if (FIN == 2 && b == chunks) {
    double r = combine_polled<P, BATCH>(0.0, slots, tid, chunks, 1024);
    r = block_reduce_sum<P, 1024>(r, sd);
    if (tid == 0) *y = (float)r;
    return;
  }
  const float4 *p = x4 + b * 2048 + tid;
  const float4 v0 = __ldcs(p), v1 = __ldcs(p + 1024);
  const bool finisher = FIN == 1 && b == chunks - 1;
  double r = 0.0;
  int64_t rest = tid; /* the lane's first slot not yet combined */
  if (finisher) {
    const int64_t early = chunks - lag;
    if (early > 0) {
      r = combine_polled<P, BATCH>(0.0, slots, tid, early, 1024);
      if (tid < early) rest = tid + ceil_div(early - tid, (int64_t)1024) * 1024;
    }
  }
  double s = wide_lane_of(v0, v1);
  s = block_reduce_sum<P, 1024, false>(s, sd);
  if (tid == 0) publish_slot(FIN == 0 ? junk : slots, b, s);
  if (!finisher) return;
  __syncthreads(); /* warp 0 has read sd */
  r = combine_polled<P, BATCH>(r, slots, rest, chunks, 1024);
  r = block_reduce_sum<P, 1024>(r, sd);
  if (tid == 0) *y = (float)r;
}

void add_finish_variants(std::vector<Timed> &vs, const float4 *x4, int64_t chunks, int resident, float *y,
                         unsigned int *cnt, double *parts, unsigned long long *slots, unsigned long long *junk,
                         cudaStream_t st) {
  const unsigned g = (unsigned)chunks;
  vs.push_back({"fin product's (last block)", true, [=] {
                  wide_sum<2, 1, 1, false, 2, false><<<g, 1024, 0, st>>>(x4, chunks, y, cnt, parts, slots);
                }});
  vs.push_back({"fin ticket", true, [=] {
                  wide_sum<2, 1, 0, false, 2, false><<<g, 1024, 0, st>>>(x4, chunks, y, cnt, parts, slots);
                }});
  vs.push_back({"slot, no finish (wrong)", false, [=] {
                  finish_sum<0><<<g, 1024, 0, st>>>(x4, chunks, 0, y, slots, junk);
                }});
  for (int64_t lag : {(int64_t)resident, (int64_t)2 * resident})
    vs.push_back({"fin early prefix lag " + std::to_string(lag), true, [=] {
                    finish_sum<1><<<g, 1024, 0, st>>>(x4, chunks, lag, y, slots, junk);
                  }});
  vs.push_back({"fin dedicated block b4", true, [=] {
                  finish_sum<2, 4><<<g + 1, 1024, 0, st>>>(x4, chunks, 0, y, slots, junk);
                }});
  vs.push_back({"fin dedicated block b8", true, [=] {
                  finish_sum<2, 8><<<g + 1, 1024, 0, st>>>(x4, chunks, 0, y, slots, junk);
                }});
}

void section_defer(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  unsigned long long *words = sc.slots + (1 << 20); /* 8 MB in: 6400 x 32 words = 1.6 MB */
  unsigned long long *junk = sc.slots + (3 << 19);  /* 12 MB in: slots nobody polls */
  double *parts = sc.parts;
  const int resident = fill(defer_sum<0>, 1024);
  printf("== the wide tree with its second level deferred to a later block (same bits); %d blocks resident\n",
         resident);
  const int rounds = rounds_or(2);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : kSixSizes) {
      const double ref = prefix_sum(sc.h, n);
      const int64_t chunks = n / 8192;
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, false);
      for (int m : {1, 2, 4}) {
        const int64_t lag = (int64_t)resident * m / 2;
        const unsigned grid = (unsigned)(chunks + ceil_div(lag < chunks ? lag : chunks, (int64_t)32));
        vs.push_back({"fin deferred lag " + std::to_string(lag), true, [=] {
                        defer_sum<0><<<grid, 1024, 0, st>>>(x4, chunks, lag, y, slots, words, parts, sink);
                      }});
      }
      vs.push_back({"warp words only (wrong)", false, [=] {
                      defer_sum<1><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, 0, y, slots, words, parts, sink);
                    }});
      vs.push_back({"block tree, no finish (wrong)", false, [=] {
                      defer_sum<2><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, 0, y, slots, words, parts, sink);
                    }});
      vs.push_back({"fold only (wrong)", false, [=] {
                      defer_sum<3><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, 0, y, slots, words, parts, sink);
                    }});
      add_finish_variants(vs, x4, chunks, resident, y, sc.cnt, sc.parts, slots, junk, st);
      print_timed(T, "defer", round, n, ref, y, vs, &want, "fin");
    }
  }
}

/* ---- the wide tree on smaller blocks (section `lanes`) ---------------------
 * The wide chunk (32 KB, 1024 lanes, the product's bits) on blocks of 1024,
 * 512 or 256 threads holding 1, 2 or 4 lanes each (wide_depth_sum, every
 * load in flight), beside the previous tree's 256 x 8 chunks (other bits)
 * and pure reads of both block shapes. The question: at 3.28M (400 chunks,
 * 1.5 waves of two 1024-thread blocks an SM on 132 SMs) do 256-thread
 * blocks, all resident at once, read like the chunked entry's 256 x 8? MINB:
 * blocks an SM the compiler leaves registers for (4: 64 registers). */
void section_lanes(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  const float *x = b.x;
  printf("== the wide chunk on 1024, 512 or 256 threads (1, 2, 4 lanes a thread; same bits)\n");
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  unsigned int *cnt = sc.cnt;
  double *parts = sc.parts;
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : kSixSizes) {
      const double ref = prefix_sum(sc.h, n);
      const int64_t n4 = n / 4, chunks = n4 / 2048;
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs{product_timed(b, n)};
      vs.push_back(read_fixed_timed<1024, 2>(x4, n4, sink, st));
      vs.push_back(read_fixed_timed<256, 8>(x4, n4, sink, st));
      vs.push_back({"fixed t8 polled (prev tree)", true, [=] {
                      fixed_sum<8, 1><<<(unsigned)chunks, 256, 0, st>>>(x, y, n, chunks, cnt, parts, slots);
                    }});
      vs.push_back({"lanes b1024", true, [=] {
                      wide_depth_sum<1024, false><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots);
                    }});
      vs.push_back({"lanes b512", true, [=] {
                      wide_depth_sum<512, false><<<(unsigned)chunks, 512, 0, st>>>(x4, chunks, y, slots);
                    }});
      vs.push_back({"lanes b256 minb4", true, [=] {
                      wide_depth_sum<256, false, 4><<<(unsigned)chunks, 256, 0, st>>>(x4, chunks, y, slots);
                    }});
      vs.push_back({"lanes b256 minb6", true, [=] {
                      wide_depth_sum<256, false, 6><<<(unsigned)chunks, 256, 0, st>>>(x4, chunks, y, slots);
                    }});
      vs.push_back({"lanes b256 minb8", true, [=] {
                      wide_depth_sum<256, false, 8><<<(unsigned)chunks, 256, 0, st>>>(x4, chunks, y, slots);
                    }});
      print_timed(T, "lanes", round, n, ref, y, vs, &want, "lanes");
    }
  }
}

/* A warp's 4 column sums a lane (columns 4 (lane % VR) ..) reduced over the
 * lanes of one column group (offsets 16 down to VR); lanes < VR leave them
 * in warp_row[4 lane + e]. */
template <int VR>
__device__ __forceinline__ void fold_column_groups(double (&s)[4], double *warp_row, int lane) {
#pragma unroll
  for (int off = 16; off >= VR; off /= 2)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[e] = P::combine(s[e], __shfl_down_sync(0xffffffffu, s[e], off));
  if (lane < VR)
#pragma unroll
    for (int e = 0; e < 4; ++e) warp_row[lane * 4 + e] = s[e];
}

/* Slice o's R outputs from its cps chunk partials (partial of chunk c,
 * column col at (o * cps + c) * R + col), by the block's `warps` warps, a
 * warp per column: lane l adds chunks l, l + 32, ... in order, then the
 * warp's shuffle tree. POLLED: from the slots, else from partials. */
template <int R, bool POLLED>
__device__ __forceinline__ void finish_slice(float *y, int64_t o, int64_t cps, const double *partials,
                                             unsigned long long *slots, int lane, int warp, int warps) {
  for (int col = warp; col < R; col += warps) {
    double r = POLLED ? combine_polled<P, 4>(0.0, slots + kSlotU64 * (o * cps * R + col), lane * R, cps * R, 32 * R)
                      : combine_strided<P>(0.0, partials + o * cps * R + col, lane * R, cps * R, 32 * R);
    r = warp_reduce_sum<P>(r, 32);
    if (lane == 0) y[o * R + col] = (float)r;
  }
}

/* Slice o's R outputs from its G chunk partials (G = cps, a power of two up
 * to 32; other bits than finish_slice): every slot of the slice loaded at
 * once, a thread per (column, chunk), the G chunks of a column on adjacent
 * lanes added by a shuffle tree (pairs of neighbours first). One L2 round
 * trip a slice instead of one a column per warp. */
template <int R, int G>
__device__ __forceinline__ void finish_slice_parallel(float *y, int64_t o, unsigned long long *slots, int threads) {
  static_assert(G >= 1 && G <= 32 && 32 % G == 0, "chunks of a column on one warp's adjacent lanes");
  for (int i = threadIdx.x; i < R * G; i += threads) {
    const int col = i / G, chunk = i % G;
    unsigned long long *slot = slots + kSlotU64 * ((o * G + chunk) * R + col);
    slot_words w = load_slot<double>(slot);
    while (!slot_full(w)) w = load_slot<double>(slot);
    store_slot(slot, 0ull, 0ull);
    double v;
    slot_value(w, &v);
#pragma unroll
    for (int off = 1; off < G; off *= 2) {
      const double u = __shfl_down_sync(0xffffffffu, v, off);
      if (chunk % (2 * off) == 0) v = P::combine(v, u);
    }
    if (chunk == 0) y[o * R + col] = (float)v;
  }
}

/* finish_slice_parallel's tree for slices [first, first + count) at once:
 * each thread loads all its slots (up to NB) before it waits on any, so a
 * group of slices costs one L2 round trip. count * R * G <= NB * threads. */
template <int R, int G, int NB>
__device__ __forceinline__ void finish_slices_parallel(float *y, int64_t first, int count,
                                                       unsigned long long *slots, int threads) {
  const int total = count * R * G;
  slot_words w[NB];
#pragma unroll
  for (int b = 0; b < NB; ++b) {
    const int i = threadIdx.x + b * threads;
    if (i < total) w[b] = load_slot<double>(slots + kSlotU64 * ((first * G + i / R / G * G + i % G) * R + i / G % R));
  }
#pragma unroll
  for (int b = 0; b < NB; ++b) {
    const int i = threadIdx.x + b * threads;
    if (i >= total) continue; /* total is a multiple of 32: whole warps skip */
    const int64_t o = first + i / (R * G);
    const int col = i / G % R, chunk = i % G;
    unsigned long long *slot = slots + kSlotU64 * ((o * G + chunk) * R + col);
    while (!slot_full(w[b])) w[b] = load_slot<double>(slot);
    store_slot(slot, 0ull, 0ull);
    double v;
    slot_value(w[b], &v);
#pragma unroll
    for (int off = 1; off < G; off *= 2) {
      const double u = __shfl_down_sync(0xffffffffu, v, off);
      if (chunk % (2 * off) == 0) v = P::combine(v, u);
    }
    if (chunk == 0) y[o * R + col] = (float)v;
  }
}

/* ---- narrow column sums at the full sum's pattern (section `narrow`) -------
 * Columns [outer, n, inner] -> [outer, inner] whose rows are VR 16-byte
 * vectors (VR a power of two up to 32: rows of 16-512 B) read like the wide
 * full sum: a chunk is 2048 vectors (32 KB, 2048 / VR whole rows of one
 * slice), a 1024-thread block per chunk launched in index order, thread t
 * adding vector t, then t + 1024 (the same column group, t % VR) in fp64.
 * The lanes of one column group are reduced by warp shuffles (offsets 16
 * down to VR), the 32 warps' values of a column by one warp's shuffle tree,
 * so a chunk leaves R = 4 VR column partials after one block barrier (the
 * product's column kernel runs log2(TY) barriers a chunk). A slice's chunk
 * partials (a chunk's R side by side, so a block stores whole lines: with
 * a column's chunks side by side instead, every block wrote R lines 512 B
 * apart and the H100 ran 152-176 us against the product's 103) are
 * combined in chunk order by a warp per column (lane l takes
 * chunks l, l + 32, ..., then the shuffle tree): FIN 0 by the last block of
 * the slice to take a ticket on the slice's counter, FIN 1 by the block of
 * the slice's last chunk (dispatched after the slice's others) polling the
 * slots. Both finishes give the same bits (another tree than the product's
 * column kernel). */
template <int VR, int FIN, bool SEQ = false>
__global__ void __launch_bounds__(1024, 2)
narrow_cols_sum(const float4 *__restrict__ x4, int64_t n, int64_t cps, float *y, unsigned int *counters,
                double *partials, unsigned long long *slots) {
  static_assert(VR >= 1 && VR <= 32 && 32 % VR == 0, "rows of 1-32 vectors");
  constexpr int R = VR * 4;     /* columns of a slice */
  constexpr int K = 2048 / VR;  /* rows of a chunk */
  __shared__ double sd[32][R + 1]; /* + 1: a warp's reads of one column hit 16 banks, not one */
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t o = blockIdx.x / cps, c = blockIdx.x % cps;
  const int64_t rows_here = n - c * K < K ? n - c * K : K;
  const float4 *base = x4 + (o * n + c * K) * VR + tid;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  const float4 a = tid / VR < rows_here ? __ldcs(base) : zero;
  const float4 b = tid / VR + 1024 / VR < rows_here ? __ldcs(base + 1024) : zero;
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  s[0] = P::add(P::add(s[0], a.x), b.x);
  s[1] = P::add(P::add(s[1], a.y), b.y);
  s[2] = P::add(P::add(s[2], a.z), b.z);
  s[3] = P::add(P::add(s[3], a.w), b.w);
  fold_column_groups<VR>(s, sd[warp], lane);
  __syncthreads();
  if (SEQ) {
    /* Timing only (other bits): thread col adds the 32 warps' values in
     * order, no shuffles. */
    if (tid < R) {
      double v = 0.0;
#pragma unroll 8
      for (int w = 0; w < 32; ++w) v = P::combine(v, sd[w][tid]);
      if (FIN == 1) publish_slot(slots, (o * cps + c) * R + tid, v);
      else partials[(o * cps + c) * R + tid] = v;
    }
  } else {
    for (int col = warp; col < R; col += 32) {
      const double v = warp_reduce_sum<P>(sd[lane][col], 32);
      if (lane == 0) {
        if (FIN == 1) publish_slot(slots, (o * cps + c) * R + col, v);
        else partials[(o * cps + c) * R + col] = v;
      }
    }
  }
  if (FIN == 1) {
    if (c != cps - 1) return;
  } else {
    __syncthreads(); /* every warp's partials stored before thread 0's fence and ticket */
    if (!last_block_ticket(counters, o, (unsigned)cps)) return;
  }
  finish_slice<R, FIN == 1>(y, o, cps, partials, slots, lane, warp, 32);
}

/* Chunks of THREADS x RPT vectors (32-256 KB) with RPT rows a thread
 * (other bits): thread t adds vectors t + THREADS k (k = 0 .. RPT - 1, one
 * column group) in order, loads issued eight at a time, so the chunk's tree
 * starts from THREADS x 4 values and a byte of input publishes RPT / 8
 * times fewer slots than the 8-row form. The warps' values of a column are
 * added in warp order by one thread. FIN 0: the block of the slice's last
 * chunk finishes it as FIN 1 above (waiting for the slice's other blocks);
 * FIN 1: the same block finishes the slice `defer` slices back instead
 * (same bits, less waiting); FIN 2: no finish (timing only, slots never
 * read: give it slots no other variant uses); FIN 3: finish_slice_parallel
 * (other bits); FIN 4 GS: groups of GS slices by finish_slices_parallel
 * (FIN 3's bits), deferred by `defer` groups; FIN 5: FIN 3's finish of the
 * slice `defer` back, run under this block's first loads (the last `defer`
 * slices finish their own at the end); FIN 6: no block that streams
 * finishes; `defer` extra blocks at the end of the grid (dispatched after
 * every streaming block, so in the last wave) finish slices f, f + defer,
 * ... by FIN 3's parallel finish (FIN 3's bits); FIN 7: the same, groups
 * of 4 slices a finishing round (finish_slices_parallel); FIN 8: FIN 6 with
 * one thread waiting, with a backoff, for the slice's last slot before the
 * block loads them all. <VR, 256, 8> is stop 29's
 * eight-rows form. */
template <int VR, int THREADS, int RPT, int FIN = 0>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS)
narrow_rows_cols_sum(const float4 *__restrict__ x4, int64_t n, int64_t cps, float *y, unsigned long long *slots,
                     int64_t defer = 0) {
  static_assert(VR >= 1 && VR <= 32 && 32 % VR == 0, "rows of 1-32 vectors");
  static_assert(RPT % 8 == 0, "loads go eight at a time");
  constexpr int R = VR * 4, K = THREADS * RPT / VR, WARPS = THREADS / 32;
  __shared__ double sd[WARPS][R + 1];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if constexpr (FIN == 6 || FIN == 7 || FIN == 8) {
    const int64_t streaming = (int64_t)gridDim.x - defer;
    if ((int64_t)blockIdx.x >= streaming) {
      if (cps != 8) __trap();
      const int64_t slices = streaming / cps;
      if (FIN == 6) {
        for (int64_t so = blockIdx.x - streaming; so < slices; so += defer)
          finish_slice_parallel<R, 8>(y, so, slots, THREADS);
      } else if (FIN == 8) {
        /* FIN 8: one thread waits (with a backoff) for the slice's last
         * slot before the block loads them all: less polling beside the
         * streaming blocks. */
        for (int64_t so = blockIdx.x - streaming; so < slices; so += defer) {
          if (tid == 0) {
            const unsigned long long *gate = slots + kSlotU64 * ((so * 8 + 7) * R + R - 1);
            while (!slot_full(load_slot<double>(gate))) __nanosleep(256);
          }
          __syncthreads();
          finish_slice_parallel<R, 8>(y, so, slots, THREADS);
        }
      } else {
        /* FIN 7: groups of 4 slices, all their slots loaded at once */
        for (int64_t g = blockIdx.x - streaming; g * 4 < slices; g += defer)
          finish_slices_parallel<R, 8, 4 * R * 8 / THREADS>(y, g * 4, (int)(slices - g * 4 < 4 ? slices - g * 4 : 4),
                                                            slots, THREADS);
      }
      return;
    }
  }
  const int64_t o = blockIdx.x / cps, c = blockIdx.x % cps;
  const int64_t rows_here = n - c * K < K ? n - c * K : K;
  const float4 *base = x4 + (o * n + c * K) * VR + tid;
  double s[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll 1
  for (int k0 = 0; k0 < RPT; k0 += 8) {
    float4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      v[k] = (tid + THREADS * (k0 + k)) / VR < rows_here ? __ldcs(base + THREADS * (k0 + k))
                                                         : make_float4(0.f, 0.f, 0.f, 0.f);
    /* FIN 5: the slice `defer` back is finished while this block's first
     * loads are in flight (the slot stores' asm orders them after). */
    if (FIN == 5 && k0 == 0 && c == cps - 1 && o >= defer) {
      if (cps != 8) __trap();
      finish_slice_parallel<R, 8>(y, o - defer, slots, THREADS);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      s[0] = P::add(s[0], v[k].x); s[1] = P::add(s[1], v[k].y);
      s[2] = P::add(s[2], v[k].z); s[3] = P::add(s[3], v[k].w);
    }
  }
  fold_column_groups<VR>(s, sd[warp], lane);
  __syncthreads();
  for (int col = tid; col < R; col += THREADS) {
    double w = 0.0;
#pragma unroll
    for (int q = 0; q < WARPS; ++q) w = P::combine(w, sd[q][col]);
    publish_slot(slots, (o * cps + c) * R + col, w);
  }
  if (c != cps - 1 || FIN == 2 || FIN >= 6) return;
  if (FIN == 5) {
    if (o >= (int64_t)(gridDim.x / cps) - defer) finish_slice_parallel<R, 8>(y, o, slots, THREADS);
    return;
  }
  if (FIN >= 3 && cps != 8) __trap(); /* the parallel finishes below are built for 8 chunks a slice */
  if (FIN == 3) {
    finish_slice_parallel<R, 8>(y, o, slots, THREADS);
    return;
  }
  if constexpr (FIN >= 4) {
    /* Groups of GS = FIN / 4 slices finished at once (parallel tree) by the
     * block of the group's last chunk, deferred by `defer` groups; the
     * grid's last block finishes the last `defer` + 1 groups. */
    constexpr int GS = FIN / 4;
    const int64_t slices = gridDim.x / cps;
    if ((o + 1) % GS != 0 && o != slices - 1) return;
    const int64_t g = o / GS;
    if (g >= defer) finish_slices_parallel<R, 8, 8>(y, (g - defer) * GS, GS, slots, THREADS);
    if (o == slices - 1)
      for (int64_t h = g - defer + 1 > 0 ? g - defer + 1 : 0; h <= g; ++h)
        finish_slices_parallel<R, 8, 8>(y, h * GS, (int)(slices - h * GS < GS ? slices - h * GS : GS), slots, THREADS);
    return;
  }
  if (FIN == 1) {
    /* Deferred: this block finishes slice o - defer, whose blocks were
     * dispatched defer slices earlier (so have mostly ended), and the last
     * `defer` slices their own. */
    const int64_t slices = gridDim.x / cps;
    if (o >= defer) finish_slice<R, true>(y, o - defer, cps, nullptr, slots, lane, warp, WARPS);
    if (o >= slices - defer) finish_slice<R, true>(y, o, cps, nullptr, slots, lane, warp, WARPS);
    return;
  }
  finish_slice<R, true>(y, o, cps, nullptr, slots, lane, warp, WARPS);
}

/* A timed launch of narrow_rows_cols_sum<16, THREADS, RPT, FIN> over shape
 * s (sv vectors a slice); FIN 2 computes no outputs, so it is not checked. */
template <int THREADS, int RPT, int FIN = 0>
Timed narrow_rows_timed(const char *name, const float4 *x4, redux_shape s, int64_t sv, float *ys,
                        unsigned long long *slots, cudaStream_t st, int64_t defer = 0) {
  const int64_t c = ceil_div(sv, (int64_t)THREADS * RPT);
  return {name, FIN != 2, [=] {
            narrow_rows_cols_sum<16, THREADS, RPT, FIN>
                <<<(unsigned)(s.outer * c + (FIN >= 6 ? defer : 0)), THREADS, 0, st>>>(x4, s.n, c, ys, slots, defer);
          }};
}

void section_narrow(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *sink = b.sink;
  const float *x = b.x;
  printf("== narrow column sums at the full sum's pattern: a block per 32 KB chunk of whole rows (1024 threads x 2 "
         "rows), or per 32-256 KB chunk (256-1024 threads x 8-64 rows)\n");
  const redux_shape shapes[] = {{256, 4096, 64}, {2048, 1024, 32}};
  int64_t most = 0;
  for (const redux_shape &s : shapes) most = std::max(most, s.outer * s.n * s.inner);
  const Scratch sc(x, most);
  float *ys;
  CK(cudaMalloc(&ys, (size_t)2 << 20));
  std::vector<float> got((size_t)1 << 19);
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round) {
    for (const redux_shape &s : shapes) {
      const int64_t total = s.outer * s.n * s.inner, outs = s.outer * s.inner;
      const int64_t vr = s.inner / 4, cps = ceil_div(s.n * vr, (int64_t)2048);
      const unsigned grid = (unsigned)(s.outer * cps);
      std::vector<double> ref((size_t)outs, 0.0);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t r = 0; r < s.n; ++r)
          for (int64_t i = 0; i < s.inner; ++i) ref[(size_t)(o * s.inner + i)] += sc.h[(size_t)((o * s.n + r) * s.inner + i)];
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      unsigned int *cnt = sc.cnt;
      double *parts = sc.parts;
      unsigned long long *slots = sc.slots;
      std::vector<Timed> vs;
      vs.push_back(product_family_timed(b, "redux cols", true, REDUX_COLS, s, ys));
      vs.push_back(product_family_timed(b, "redux full (1 out)", false, REDUX_FULL, redux_shape{1, total, 1}, ys));
      vs.push_back(read_fixed_timed<1024, 2>(x4, total / 4, sink, st));
      vs.push_back(read_fixed_timed<1024, 1>(x4, total / 4, sink, st));
      vs.push_back(read_fixed_timed<256, 8>(x4, total / 4, sink, st));
      vs.push_back(read_fixed_timed<1024, 8>(x4, total / 4, sink, st));
      vs.push_back(read_fixed_timed<256, 32>(x4, total / 4, sink, st));
      if (vr == 16) {
        vs.push_back({"narrow ticket", true, [=] {
                        narrow_cols_sum<16, 0><<<grid, 1024, 0, st>>>(x4, s.n, cps, ys, cnt, parts, slots);
                      }});
        vs.push_back({"narrow polled", true, [=] {
                        narrow_cols_sum<16, 1><<<grid, 1024, 0, st>>>(x4, s.n, cps, ys, cnt, parts, slots);
                      }});
        vs.push_back({"seq polled (other bits)", true, [=] {
                        narrow_cols_sum<16, 1, true><<<grid, 1024, 0, st>>>(x4, s.n, cps, ys, cnt, parts, slots);
                      }});
        /* Rows a thread x threads: chunks of 32-256 KB, the finishes named
         * at narrow_rows_cols_sum (variant order as measured). */
        const int64_t sv = s.n * vr;
        vs.push_back(narrow_rows_timed<256, 8>("rows8 b256 32K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<256, 32>("rows32 b256 128K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<256, 64>("rows64 b256 256K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<512, 16>("rows16 b512 128K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<1024, 8>("rows8 b1024 128K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<512, 8>("rows8 b512 64K (other)", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<512, 32>("rows32 b512 256K (other)", x4, s, sv, ys, slots, st));
        /* Deferrals: by the slices the device runs at once, and half that. */
        int fit512 = 0, sms = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit512, narrow_rows_cols_sum<16, 512, 16, 1>, 512, 0));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        const int64_t defer_full = ceil_div((int64_t)fit512 * sms, ceil_div(sv, (int64_t)512 * 16));
        char name[48];
        for (const int64_t d : {defer_full / 2, defer_full}) {
          snprintf(name, sizeof name, "rows16 b512 defer %lld", (long long)d);
          vs.push_back(narrow_rows_timed<512, 16, 1>(name, x4, s, sv, ys, slots, st, d));
        }
        vs.push_back(narrow_rows_timed<512, 16, 3>("rows16 b512 par finish", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<512, 16, 16>("rows16 b512 group4 d0", x4, s, sv, ys, slots, st, 0));
        vs.push_back(narrow_rows_timed<512, 16, 16>("rows16 b512 group4 d1", x4, s, sv, ys, slots, st, 1));
        vs.push_back(narrow_rows_timed<512, 16, 32>("rows16 b512 group8 d1", x4, s, sv, ys, slots, st, 1));
        vs.push_back(narrow_rows_timed<512, 16, 8>("rows16 b512 group2 d1", x4, s, sv, ys, slots, st, 1));
        vs.push_back(narrow_rows_timed<1024, 8, 3>("rows8 b1024 par finish", x4, s, sv, ys, slots, st));
        vs.push_back(narrow_rows_timed<256, 32, 3>("rows32 b256 par finish", x4, s, sv, ys, slots, st));
        for (const int64_t d : {(int64_t)4, defer_full}) {
          snprintf(name, sizeof name, "rows16 b512 par under loads d%lld", (long long)d);
          vs.push_back(narrow_rows_timed<512, 16, 5>(name, x4, s, sv, ys, slots, st, d));
        }
        for (const int64_t d : {(int64_t)4, ceil_div((int64_t)fit512 * sms, ceil_div(sv, (int64_t)256 * 32)) * 2}) {
          snprintf(name, sizeof name, "rows32 b256 par under loads d%lld", (long long)d);
          vs.push_back(narrow_rows_timed<256, 32, 5>(name, x4, s, sv, ys, slots, st, d));
        }
        for (const int64_t f : {(int64_t)16, (int64_t)32, (int64_t)64, (int64_t)128, (int64_t)256}) {
          snprintf(name, sizeof name, "rows16 b512 finishers %lld", (long long)f);
          vs.push_back(narrow_rows_timed<512, 16, 6>(name, x4, s, sv, ys, slots, st, f));
        }
        for (const int64_t f : {(int64_t)128, (int64_t)256}) {
          snprintf(name, sizeof name, "rows16 b512 gated finishers %lld", (long long)f);
          vs.push_back(narrow_rows_timed<512, 16, 8>(name, x4, s, sv, ys, slots, st, f));
        }
        for (const int64_t f : {(int64_t)16, (int64_t)32, (int64_t)64}) {
          snprintf(name, sizeof name, "rows16 b512 finishers x4 %lld", (long long)f);
          vs.push_back(narrow_rows_timed<512, 16, 7>(name, x4, s, sv, ys, slots, st, f));
        }
        for (const int64_t f : {(int64_t)32, (int64_t)64}) {
          snprintf(name, sizeof name, "rows32 b256 finishers %lld", (long long)f);
          vs.push_back(narrow_rows_timed<256, 32, 6>(name, x4, s, sv, ys, slots, st, f));
        }
        /* No finish: slots no other variant uses (it never empties them). */
        vs.push_back(narrow_rows_timed<512, 16, 2>("rows16 b512 no finish", x4, s, sv, ys,
                                                   slots + ((size_t)8 << 20) / 8, st));
        vs.push_back(narrow_rows_timed<1024, 16>("rows16 b1024 256K (other)", x4, s, sv, ys, slots, st));
      } else {
        vs.push_back({"narrow ticket", true, [=] {
                        narrow_cols_sum<8, 0><<<grid, 1024, 0, st>>>(x4, s.n, cps, ys, cnt, parts, slots);
                      }});
        vs.push_back({"narrow polled", true, [=] {
                        narrow_cols_sum<8, 1><<<grid, 1024, 0, st>>>(x4, s.n, cps, ys, cnt, parts, slots);
                      }});
      }
      std::vector<unsigned int> first_bits;
      for (const auto &v : vs) {
        auto t = T.time(v.f);
        char tail[96] = "";
        if (v.sum) {
          CK(cudaMemcpy(got.data(), ys, outs * 4, cudaMemcpyDeviceToHost));
          int64_t off_ref = 0;
          for (int64_t k = 0; k < outs; ++k) off_ref += got[(size_t)k] != (float)ref[(size_t)k];
          std::vector<unsigned int> bits((size_t)outs);
          memcpy(bits.data(), got.data(), outs * 4);
          const char *same = "";
          if (v.name.rfind("narrow", 0) == 0) {
            if (first_bits.empty()) first_bits = bits;
            else same = first_bits == bits ? "  same bits" : "  BITS DIFFER";
          }
          snprintf(tail, sizeof tail, "  %lld of %lld != ref%s", (long long)off_ref, (long long)outs, same);
        }
        printf("narrow r%d (%lld,%lld,%lld) %-26s median %8.2f us  mean %8.2f us  %7.1f GB/s%s\n", round,
               (long long)s.outer, (long long)s.n, (long long)s.inner, v.name.c_str(), t.first, t.second,
               total * 4 / t.first / 1e3, tail);
      }
    }
  }
  cudaFree(ys);
}

/* ---- column sums in short blocks (section `strip`) ------------------------
 * Stop 43's question: the column family's blocks are long-lived (512 KB
 * each, one wave), and long-lived blocks read 268 MB 3-7 us slower than
 * short ones dispatched in index order (section `read`: grid-stride and
 * slab reads 71.4-73.8 us against 66.5-69.5 for 32-128 KB blocks, H200).
 * Short blocks need their partials combined cheaply. A block reads K =
 * THREADS * RPT / VR rows of one strip of R = 4 VR columns (a 128-256 KB
 * chunk); CL chunks hold all n = CL * K rows of the strip. Inside a block:
 * the lanes of a column group folded by shuffles, the warps' values of a
 * column by GG = min(THREADS / R, warps) threads (consecutive warps in
 * order, then a shuffle tree). Other bits than the product's column kernel.
 * ORDER 0 (strip order): the CL chunks of a strip are one cluster, run in
 * index order (slice, strip); MODE 0 combines a column's CL partials in
 * rank order from distributed shared memory (no global partials, no fence,
 * no ticket); 1: no finish (timing only); 2: the same loads, no arithmetic
 * (the pattern's pure read).
 * ORDER 1 (window order): consecutive blocks take one row chunk's strips
 * side by side, so the blocks at work read one window of rows; MODE 1 and
 * 2 as above; 3: polled slots, finished by `fin` blocks launched last; 4:
 * by the block of the strip's last chunk; 5: slots published, never read;
 * 6: plain stores of the partials, never read (5, 6: timing only); 7:
 * plain stores and a ticket, the strip's last block finishing; 8: as 7
 * with no ticket, the last chunk's block reading at once (timing only: it
 * may read partials not yet stored). Finishes: finish_strip_coalesced. */
/* Strip sg's R outputs from its CL chunk partials (partial of chunk c,
 * column col at (sg * CL + c) * R + col), coalesced: thread (gq, col) adds
 * chunks [gq * PER, (gq + 1) * PER) of column col in order, all PER loads in
 * flight (a warp reads 32 adjacent partials), then thread col adds the
 * THREADS / R runs in order. POLLED: from the slots (waiting for each,
 * emptying it), else plain partials. Called by every thread of the block. */
template <int R, int CL, int THREADS, bool POLLED>
__device__ __forceinline__ void finish_strip_coalesced(float *y, int64_t sg, unsigned long long *slots) {
  constexpr int GROUPS = THREADS / R, PER = CL / GROUPS;
  static_assert(GROUPS >= 1 && CL % GROUPS == 0, "whole runs of chunks");
  __shared__ double runs[GROUPS][R];
  const int col = threadIdx.x % R, gq = threadIdx.x / R;
  double r = 0.0;
  if (POLLED) {
    slot_words w[PER];
#pragma unroll
    for (int k = 0; k < PER; ++k) w[k] = load_slot<double>(slots + kSlotU64 * ((sg * CL + gq * PER + k) * R + col));
#pragma unroll
    for (int k = 0; k < PER; ++k) {
      unsigned long long *slot = slots + kSlotU64 * ((sg * CL + gq * PER + k) * R + col);
      while (!slot_full(w[k])) w[k] = load_slot<double>(slot);
      store_slot(slot, 0ull, 0ull);
      double v;
      slot_value(w[k], &v);
      r = P::combine(r, v);
    }
  } else {
    const double *parts = reinterpret_cast<const double *>(slots);
    double v[PER];
#pragma unroll
    for (int k = 0; k < PER; ++k) v[k] = load_partial(&parts[(sg * CL + gq * PER + k) * R + col]);
#pragma unroll
    for (int k = 0; k < PER; ++k) r = P::combine(r, v[k]);
  }
  runs[gq][col] = r;
  __syncthreads();
  if ((int)threadIdx.x < R) {
    double t = runs[0][col];
#pragma unroll
    for (int q = 1; q < GROUPS; ++q) t = P::combine(t, runs[q][col]);
    y[sg * R + col] = (float)t;
  }
  __syncthreads(); /* runs is rewritten by the next strip */
}

/* RPT < 8 (section `short`): 2048 threads an SM (two 1024-thread or four
 * 512-thread blocks), so 32 registers, like the fastest pure read's. */
template <int VR, int THREADS, int RPT, int CL, int MODE, int ORDER = 0>
__global__ void __launch_bounds__(THREADS, (RPT < 8 ? 2048 : 1024) / THREADS)
strip_cols_sum(const float4 *__restrict__ x4, int64_t n, int64_t inner4, float *y, float *sink,
               unsigned long long *slots = nullptr, int64_t fin = 0, unsigned int *cnt = nullptr) {
  constexpr int R = 4 * VR, WARPS = THREADS / 32, K = THREADS * RPT / VR, G = THREADS / R;
  static_assert(32 % VR == 0 && (RPT % 8 == 0 || RPT < 8), "whole column groups in a warp; loads eight at a time");
  constexpr int LB = RPT < 8 ? RPT : 8; /* loads in flight */
  constexpr int GG = G < WARPS ? G : WARPS; /* threads a column's warp values are split over */
  static_assert(GG >= 1 && GG <= 32 && WARPS % GG == 0 && (R * GG) % 32 == 0 && R % CL == 0,
                "GG threads per column fold whole warps");
  __shared__ double sd[WARPS][R + 1];
  __shared__ double part[R];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t strips = inner4 / VR;
  static_assert(ORDER == 0 || MODE != 0, "the window order has no cluster finish");
  if constexpr (MODE == 3) {
    if ((int64_t)blockIdx.x >= (int64_t)gridDim.x - fin) {
      /* a finishing block, dispatched after every streaming block */
      const int64_t streaming = (int64_t)gridDim.x - fin;
      for (int64_t sg = blockIdx.x - streaming; sg < streaming / CL; sg += fin)
        finish_strip_coalesced<R, CL, THREADS, true>(y, sg, slots);
      return;
    }
  }
  /* ORDER 0: clusters are CL consecutive blocks (the rank is the chunk);
   * ORDER 1 (window): consecutive blocks take a chunk's strips in order. */
  const int64_t cl = ORDER == 0 ? blockIdx.x / CL : (blockIdx.x / strips) / CL;
  const int64_t o = ORDER == 0 ? cl / strips : cl, strip = ORDER == 0 ? cl % strips : blockIdx.x % strips;
  const int c = (int)(ORDER == 0 ? blockIdx.x % CL : (blockIdx.x / strips) % CL);
  const float4 *p = x4 + (o * n + (int64_t)c * K + tid / VR) * inner4 + strip * VR + tid % VR;
  const int64_t step = (int64_t)(THREADS / VR) * inner4;
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  float m = 0.0f;
#pragma unroll 1
  for (int k0 = 0; k0 < RPT; k0 += LB) {
    float4 v[LB];
#pragma unroll
    for (int k = 0; k < LB; ++k) v[k] = __ldcs(p + (k0 + k) * step);
#pragma unroll
    for (int k = 0; k < LB; ++k) {
      if (MODE == 2) {
        m = fold(m, v[k]);
      } else {
        s[0] = P::add(s[0], v[k].x); s[1] = P::add(s[1], v[k].y);
        s[2] = P::add(s[2], v[k].z); s[3] = P::add(s[3], v[k].w);
      }
    }
  }
  if (MODE == 2) {
    if (m == 12345.0f) sink[blockIdx.x] = m;
    return;
  }
  fold_column_groups<VR>(s, sd[warp], lane);
  __syncthreads();
  if (tid < R * GG) { /* whole warps */
    const int col = tid / GG, g = tid % GG;
    double w = 0.0;
#pragma unroll
    for (int q = g * (WARPS / GG); q < (g + 1) * (WARPS / GG); ++q) w = P::combine(w, sd[q][col]);
#pragma unroll
    for (int off = GG / 2; off > 0; off /= 2) w = P::combine(w, __shfl_down_sync(0xffffffffu, w, off));
    if (g == 0) {
      const int64_t item = ((o * strips + strip) * CL + c) * R + col;
      if (MODE == 3 || MODE == 4 || MODE == 5) publish_slot(slots, item, w);
      else if (MODE == 6 || MODE == 7 || MODE == 8) reinterpret_cast<double *>(slots)[item] = w;
      else part[col] = w;
    }
  }
  /* all of a strip's slots loaded at once (one L2 round trip, not R * CL / THREADS) */
  if constexpr (MODE == 4) {
    if (c == CL - 1) finish_strip_coalesced<R, CL, THREADS, true>(y, o * strips + strip, slots);
  }
  if constexpr (MODE == 7 || MODE == 8) {
    /* the ticket (8: none, the last chunk's block reads at once) */
    const int64_t sg = o * strips + strip;
    __syncthreads();
    if (MODE == 8 ? c != CL - 1 : !last_block_ticket(cnt, sg, (unsigned)CL)) return;
    finish_strip_coalesced<R, CL, THREADS, false>(y, sg, slots);
  }
  if (MODE >= 3) return;
  if (MODE == 1) {
    __syncthreads();
    if (part[tid % R] == 12345.0) sink[blockIdx.x] = 1.0f;
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  constexpr int PER = R / CL;
  if (tid < PER) {
    const int col = c * PER + tid;
    double r = 0.0;
#pragma unroll
    for (int q = 0; q < CL; ++q) r = P::combine(r, *cluster.map_shared_rank(part + col, (unsigned)q));
    y[o * inner4 * 4 + strip * R + col] = (float)r;
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
#endif
}

template <int VR, int THREADS, int RPT, int CL, int MODE, int ORDER = 0>
Timed strip_timed(const char *name, const float4 *x4, redux_shape s, float *y, float *sink, cudaStream_t st,
                  unsigned long long *slots = nullptr, int64_t fin = 0, unsigned int *cnt = nullptr) {
  constexpr int64_t K = (int64_t)THREADS * RPT / VR;
  if (s.n != CL * K || s.inner % (4 * VR) != 0) {
    fprintf(stderr, "strip %s: n %lld is not %d x %lld rows\n", name, (long long)s.n, CL, (long long)K);
    exit(1);
  }
  auto kernel = strip_cols_sum<VR, THREADS, RPT, CL, MODE, ORDER>;
  const unsigned grid = (unsigned)(s.outer * (s.inner / (4 * VR)) * CL);
  const int64_t inner4 = s.inner / 4;
  if (ORDER == 1)
    return {name, MODE == 3 || MODE == 4 || MODE == 7 || MODE == 8, [=] {
              kernel<<<grid + (unsigned)(MODE == 3 ? fin : 0), THREADS, 0, st>>>(x4, s.n, inner4, y, sink, slots, fin,
                                                                                  cnt);
            }};
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = CL;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(THREADS);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int clusters = -1;
  CK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  char full[96];
  snprintf(full, sizeof full, "%s [%d fit]", name, clusters);
  return {full, MODE == 0, [=] {
            /* cfg's attribute pointer is rebuilt here: the one above is gone */
            cudaLaunchAttribute a = attr;
            cudaLaunchConfig_t c = cfg;
            c.attrs = &a;
            c.stream = st;
            CK(cudaLaunchKernelEx(&c, kernel, x4, s.n, inner4, y, sink, (unsigned long long *)nullptr, (int64_t)0,
                                  (unsigned int *)nullptr));
          }};
}

/* The strip-order trio of one shape: cluster finish, no finish, pure read. */
template <int VR, int THREADS, int RPT, int CL>
void push_strip_trio(std::vector<Timed> &vs, const std::string &tag, const float4 *x4, redux_shape s, float *y,
                     float *sink, cudaStream_t st) {
  vs.push_back(strip_timed<VR, THREADS, RPT, CL, 0>((tag + " cl" + std::to_string(CL)).c_str(), x4, s, y, sink, st));
  vs.push_back(strip_timed<VR, THREADS, RPT, CL, 1>((tag + " no finish").c_str(), x4, s, y, sink, st));
  vs.push_back(strip_timed<VR, THREADS, RPT, CL, 2>((tag + " read").c_str(), x4, s, y, sink, st));
}

/* The fp64 column sums of host copy h viewed as shape s. */
std::vector<double> column_reference(const std::vector<float> &h, redux_shape s) {
  std::vector<double> ref((size_t)(s.outer * s.inner), 0.0);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t r = 0; r < s.n; ++r)
      for (int64_t i = 0; i < s.inner; ++i) ref[(size_t)(o * s.inner + i)] += h[(size_t)((o * s.n + r) * s.inner + i)];
  return ref;
}

/* A column sum's outs outputs ys against ref: how many differ; then ys is
 * set to NaN, so a variant that writes nothing fails the next check. */
int64_t column_outputs_off_ref(float *ys, const std::vector<double> &ref, int64_t outs, std::vector<float> &got) {
  CK(cudaMemcpy(got.data(), ys, outs * 4, cudaMemcpyDeviceToHost));
  int64_t off_ref = 0;
  for (int64_t k = 0; k < outs; ++k) off_ref += got[(size_t)k] != (float)ref[(size_t)k];
  CK(cudaMemset(ys, 0xff, outs * 4));
  return off_ref;
}

/* Times each variant of vs over shape s and prints a line "label rROUND
 * (shape) name ...", a sum's outputs checked (column_outputs_off_ref). */
void time_column_variants(Timer &T, const std::vector<Timed> &vs, const char *label, int width, int round,
                          redux_shape s, const std::vector<double> &ref, float *ys, std::vector<float> &got) {
  const int64_t total = s.outer * s.n * s.inner, outs = s.outer * s.inner;
  for (const auto &v : vs) {
    auto t = T.time(v.f);
    char tail[96] = "";
    if (v.sum)
      snprintf(tail, sizeof tail, "  %lld of %lld != ref", (long long)column_outputs_off_ref(ys, ref, outs, got),
               (long long)outs);
    printf("%s r%d (%lld,%lld,%lld) %-*s median %8.2f us  mean %8.2f us  %7.1f GB/s%s\n", label, round,
           (long long)s.outer, (long long)s.n, (long long)s.inner, width, v.name.c_str(), t.first, t.second,
           total * 4 / t.first / 1e3, tail);
  }
}

/* The frame of sections strip and short: each round, for each column
 * target, the product's column and full sums and two pure reads, then the
 * section's variants (add(vs, s, x4, sc, ys)), timed and checked. */
template <typename Add>
void column_section(Bench &b, const char *label, int width, int rounds, Add add) {
  const redux_shape shapes[] = {{1, 8192, 8192}, {256, 4096, 64}};
  const Scratch sc(b.x, (int64_t)8192 * 8192);
  float *ys;
  CK(cudaMalloc(&ys, (size_t)1 << 20));
  std::vector<float> got((size_t)1 << 18);
  for (int round = 0; round < rounds; ++round) {
    for (const redux_shape &s : shapes) {
      const int64_t total = s.outer * s.n * s.inner;
      const std::vector<double> ref = column_reference(sc.h, s);
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      std::vector<Timed> vs;
      vs.push_back(product_family_timed(b, "redux cols", true, REDUX_COLS, s, ys));
      vs.push_back(product_family_timed(b, "redux full (1 out)", false, REDUX_FULL, redux_shape{1, total, 1}, ys));
      vs.push_back(read_fixed_timed<1024, 2>(x4, total / 4, b.sink, b.st));
      vs.push_back(read_fixed_timed<1024, 8>(x4, total / 4, b.sink, b.st));
      add(vs, s, x4, sc, ys);
      time_column_variants(b.T, vs, label, width, round, s, ref, ys, got);
    }
  }
  cudaFree(ys);
}

void section_strip(Bench &b) {
  const cudaStream_t st = b.st;
  float *sink = b.sink;
  printf("== column strips: short blocks in index order, a cluster per strip, the finish in distributed shared "
         "memory (other bits)\n");
  column_section(b, "strip", 34, rounds_or(3), [&](std::vector<Timed> &vs, const redux_shape &s, const float4 *x4,
                                                   const Scratch &sc, float *ys) {
    /* slots no finishing variant uses (5, 6 leave theirs full) */
    unsigned long long *spare = sc.slots + ((size_t)8 << 20) / 8;
    if (s.inner == 8192) {
      /* strips of 32 columns (128 B of a row), 1024 rows a block, 8 a cluster */
      push_strip_trio<8, 512, 16, 8>(vs, "strip32 b512 r16", x4, s, ys, sink, st);
      vs.push_back(strip_timed<8, 1024, 8, 8, 0>("strip32 b1024 r8 cl8", x4, s, ys, sink, st));
      vs.push_back(strip_timed<8, 256, 32, 8, 0>("strip32 b256 r32 cl8", x4, s, ys, sink, st));
      /* 16 columns (64 B), 2048 rows a block, 4 a cluster */
      vs.push_back(strip_timed<4, 512, 16, 4, 0>("strip16 b512 r16 cl4", x4, s, ys, sink, st));
      vs.push_back(strip_timed<4, 512, 16, 4, 2>("strip16 b512 r16 read", x4, s, ys, sink, st));
      /* 32 columns, 2048 rows a block (256 KB), 4 a cluster */
      vs.push_back(strip_timed<8, 512, 32, 4, 0>("strip32 b512 r32 cl4", x4, s, ys, sink, st));
      /* the window: 128 columns (512 B of a row), 256 rows a block (128
       * KB), the blocks of a row chunk in strip order; no finish */
      vs.push_back(strip_timed<32, 512, 16, 32, 2, 1>("win128 b512 r16 read", x4, s, ys, sink, st));
      vs.push_back(strip_timed<32, 512, 16, 32, 1, 1>("win128 b512 r16 no finish", x4, s, ys, sink, st));
      vs.push_back(strip_timed<32, 256, 32, 32, 2, 1>("win128 b256 r32 read", x4, s, ys, sink, st));
      vs.push_back(strip_timed<32, 256, 32, 32, 1, 1>("win128 b256 r32 no finish", x4, s, ys, sink, st));
      for (const int64_t f : {(int64_t)16, (int64_t)32, (int64_t)64}) {
        char name[48];
        snprintf(name, sizeof name, "win128 b512 r16 finishers %lld", (long long)f);
        vs.push_back(strip_timed<32, 512, 16, 32, 3, 1>(name, x4, s, ys, sink, st, sc.slots, f));
        snprintf(name, sizeof name, "win128 b256 r32 finishers %lld", (long long)f);
        vs.push_back(strip_timed<32, 256, 32, 32, 3, 1>(name, x4, s, ys, sink, st, sc.slots, f));
      }
      vs.push_back(strip_timed<32, 512, 16, 32, 4, 1>("win128 b512 r16 last finishes", x4, s, ys, sink, st, sc.slots));
      vs.push_back(strip_timed<32, 512, 16, 32, 5, 1>("win128 b512 r16 publish only", x4, s, ys, sink, st,
                                                      spare));
      vs.push_back(strip_timed<32, 512, 16, 32, 6, 1>("win128 b512 r16 store only", x4, s, ys, sink, st,
                                                      spare));
      vs.push_back(strip_timed<32, 512, 16, 32, 7, 1>("win128 b512 r16 ticket", x4, s, ys, sink, st,
                                                      spare, 0, sc.cnt));
      vs.push_back(strip_timed<32, 256, 32, 32, 7, 1>("win128 b256 r32 ticket", x4, s, ys, sink, st,
                                                      spare, 0, sc.cnt));
      vs.push_back(strip_timed<32, 512, 16, 32, 8, 1>("win128 b512 r16 last reads unsynced", x4, s, ys, sink, st,
                                                      spare, 0, sc.cnt));
      vs.push_back(strip_timed<32, 256, 32, 32, 4, 1>("win128 b256 r32 last finishes", x4, s, ys, sink, st, sc.slots));
      vs.push_back(strip_timed<32, 1024, 8, 32, 2, 1>("win128 b1024 r8 read", x4, s, ys, sink, st));
      vs.push_back(strip_timed<32, 256, 64, 16, 2, 1>("win128 b256 r64 read (256K)", x4, s, ys, sink, st));
      vs.push_back(strip_timed<32, 256, 128, 8, 2, 1>("win128 b256 r128 read (512K)", x4, s, ys, sink, st));
    } else {
      /* the whole 64-column row, 512 rows a block (128 KB), 8 a cluster */
      push_strip_trio<16, 512, 16, 8>(vs, "strip64 b512 r16", x4, s, ys, sink, st);
      vs.push_back(strip_timed<16, 1024, 8, 8, 0>("strip64 b1024 r8 cl8", x4, s, ys, sink, st));
      vs.push_back(strip_timed<16, 256, 32, 8, 0>("strip64 b256 r32 cl8", x4, s, ys, sink, st));
      vs.push_back(strip_timed<16, 512, 32, 4, 0>("strip64 b512 r32 cl4", x4, s, ys, sink, st));
      vs.push_back(strip_timed<16, 1024, 16, 4, 0>("strip64 b1024 r16 cl4", x4, s, ys, sink, st));
      /* stop 31's best prototype: 512 x 16 chunks, 256 dedicated finishing blocks */
      vs.push_back(narrow_rows_timed<512, 16, 6>("rows16 b512 finishers 256", x4, s, s.n * 16, ys, sc.slots, st, 256));
    }
  });
}

/* ---- column sums in the fastest read's blocks (section `short`) ---------
 * Stop 44's question: a pure read of 268 MB in one-shot blocks of 1024
 * threads x 2 loads (32 KB a block, two blocks an SM) takes 66.5-67.2 us on
 * the H200, against 70.1-70.4 for stop 43's 128 KB window blocks
 * (512 x 16) and 69.2 for the product's full sum. Would column sums in such
 * blocks keep that read? strip_cols_sum<VR, THREADS, RPT, CL, MODE, 1>
 * with RPT 2 or 4 (two or four blocks an SM, 32 registers): a block is
 * THREADS x RPT / VR rows of a strip of 4 VR columns, chunk c of CL, in the
 * window order; modes as named at strip_cols_sum (other bits than the
 * product). A set: pure read (2), the fold and plain stores (6), polled
 * slots with finishing blocks launched last (3), a ticket (7). */
template <int VR, int THREADS, int RPT, int CL>
void push_short_set(std::vector<Timed> &vs, const std::string &tag, const float4 *x4, redux_shape s, float *y,
                    float *sink, cudaStream_t st, unsigned long long *slots, unsigned long long *spare,
                    unsigned int *cnt, std::initializer_list<int64_t> finishers, bool ticket = true) {
  vs.push_back(strip_timed<VR, THREADS, RPT, CL, 2, 1>((tag + " read").c_str(), x4, s, y, sink, st));
  vs.push_back(strip_timed<VR, THREADS, RPT, CL, 6, 1>((tag + " store only").c_str(), x4, s, y, sink, st, spare));
  /* none: 1024 x 2's finishes took 88-115 us (stop 44, call 1); 128-column
   * strips of 512 x 4 would finish 32 slots a thread under 32 registers */
  if (finishers.size() == 0) return;
  for (const int64_t f : finishers)
    vs.push_back(strip_timed<VR, THREADS, RPT, CL, 3, 1>((tag + " finishers " + std::to_string(f)).c_str(), x4, s, y,
                                                         sink, st, slots, f));
  if (ticket)
    vs.push_back(strip_timed<VR, THREADS, RPT, CL, 7, 1>((tag + " ticket").c_str(), x4, s, y, sink, st, spare, 0, cnt));
}

void section_short(Bench &b) {
  const cudaStream_t st = b.st;
  float *sink = b.sink;
  printf("== column sums in 32-64 KB blocks (1024 x 2, 512 x 4, 1024 x 4), window order, the finishes of section "
         "strip (other bits)\n");
  column_section(b, "short", 32, rounds_or(2), [&](std::vector<Timed> &vs, const redux_shape &s, const float4 *x4,
                                                   const Scratch &sc, float *ys) {
    /* polled slots below 16 MB (at most 128 x 8192 of 16 B); plain partials above */
    unsigned long long *spare = sc.slots + ((size_t)16 << 20) / 8;
    if (s.inner == 8192) {
      push_short_set<8, 1024, 2, 32>(vs, "win32 b1024 r2", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {});
      push_short_set<8, 512, 4, 32>(vs, "win32 b512 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {64, 128});
      push_short_set<16, 512, 4, 64>(vs, "win64 b512 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {128}, false);
      push_short_set<16, 1024, 4, 32>(vs, "win64 b1024 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {64, 128});
      push_short_set<32, 512, 4, 128>(vs, "win128 b512 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {});
      /* stop 43's best (128 KB blocks) */
      vs.push_back(strip_timed<32, 512, 16, 32, 3, 1>("win128 b512 r16 finishers 64", x4, s, ys, sink, st,
                                                      sc.slots, 64));
    } else {
      push_short_set<16, 1024, 2, 32>(vs, "slice b1024 r2", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {});
      push_short_set<16, 512, 4, 32>(vs, "slice b512 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {128, 256});
      push_short_set<16, 1024, 4, 16>(vs, "slice b1024 r4", x4, s, ys, sink, st, sc.slots, spare, sc.cnt, {128, 256});
      /* stop 43's best: 512 x 16 blocks, a cluster of 8 per slice */
      vs.push_back(strip_timed<16, 512, 16, 8, 0>("strip64 b512 r16 cl8", x4, s, ys, sink, st));
    }
  });
}

/* ---- the strips tree against its prototype (section `gap`) ---------------
 * Stop 44: the product's strips kernel took 73.70 us at (256, 4096, 64)
 * against its prototype's 71.81 in one call (0.4 us apart at (8192,
 * 8192)), and 72.3 or 73.6 at the torch level from call to call. At that
 * shape the two differ in the finishing blocks (the product's one an SM,
 * 132, for 256 segments; the prototype's 128) and the slots' place (the
 * product's stream counters; the bench's buffer). Each variant here is
 * timed GAP_REPS times a round (each sample after the L2-evicting fill) and
 * printed with its percentiles: a bimodal variant shows a p25-p75 split. */
void section_gap(Bench &b) {
  const cudaStream_t st = b.st;
  const int reps = getenv("GAP_REPS") ? atoi(getenv("GAP_REPS")) : 200;
  const bool only_target = getenv("GAP_TARGET_ONLY") != nullptr; /* (256, 4096, 64) alone, for ncu */
  printf("== the strips tree against its prototype: finishers and the slots' place, percentiles of %d samples\n", reps);
  const Scratch sc(b.x, (int64_t)8192 * 8192);
  float *ys;
  CK(cudaMalloc(&ys, (size_t)1 << 20));
  std::vector<float> got((size_t)1 << 18);
  /* the product's slots sit at the stream counters' start; the prototype's
   * use the bench's buffer or the same counters (both leave them empty) */
  unsigned long long *counters = reinterpret_cast<unsigned long long *>(b.persist);
  for (int round = 0; round < rounds_or(2); ++round) {
    for (const redux_shape s : {redux_shape{1, 8192, 8192}, redux_shape{256, 4096, 64}}) {
      if (only_target && s.inner != 64) continue;
      const std::vector<double> ref = column_reference(sc.h, s);
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      std::vector<Timed> vs;
      vs.push_back(product_family_timed(b, "redux cols", true, REDUX_COLS, s, ys));
      vs.push_back(read_fixed_timed<1024, 2>(x4, s.outer * s.n * s.inner / 4, b.sink, st));
      /* the prototype's chunk count is a template argument: 32 at (8192, 8192), 16 at (256, 4096, 64) */
      const auto add_prototypes = [&](auto chunks_c) {
        constexpr int CH = decltype(chunks_c)::value;
        for (const int64_t f : {(int64_t)128, (int64_t)132, (int64_t)256}) {
          const std::string tag = "proto finishers " + std::to_string(f);
          vs.push_back(strip_timed<16, 1024, 4, CH, 3, 1>(tag.c_str(), x4, s, ys, b.sink, st, sc.slots, f));
          if (f == 128)
            vs.push_back(strip_timed<16, 1024, 4, CH, 3, 1>((tag + " counters").c_str(), x4, s, ys, b.sink, st,
                                                            counters, f));
        }
      };
      if (s.inner == 8192) add_prototypes(std::integral_constant<int, 32>{});
      else add_prototypes(std::integral_constant<int, 16>{});
      const int64_t total = s.outer * s.n * s.inner, outs = s.outer * s.inner;
      for (const auto &v : vs) {
        const std::vector<double> t = b.T.samples(v.f, reps);
        const auto pct = [&](int q) { return t[(t.size() - 1) * q / 100]; };
        const int64_t off_ref = v.sum ? column_outputs_off_ref(ys, ref, outs, got) : 0;
        printf("gap r%d (%lld,%lld,%lld) %-34s p10 %7.2f p25 %7.2f p50 %7.2f p75 %7.2f p90 %7.2f us  %7.1f GB/s",
               round, (long long)s.outer, (long long)s.n, (long long)s.inner, v.name.c_str(), pct(10), pct(25),
               pct(50), pct(75), pct(90), total * 4 / pct(50) / 1e3);
        if (v.sum) printf("  %lld of %lld != ref", (long long)off_ref, (long long)outs);
        printf("\n");
      }
    }
  }
  cudaFree(ys);
}

/* ---- the order a block's loads issue in (section `order`) ----------------
 * On the H100 the 1024 x 2 read (32 KB a block, the wide chunk) is ~2.5%
 * slower than 1024 x 1 (16 KB) at every size from 13.1M: a rate, not a tail
 * (HISTORY, stop 36's table). Each thread issues its tile-0 and tile-1 loads
 * back to back, so an SM's requests alternate between two 16 KB windows.
 * ORDER 0: that (the product's order); ORDER 1: a barrier between the two
 * tiles' loads, so every tile-0 request of the block issues before any
 * tile-1 one (the same lanes, the same bits); ORDER 2 (other bits): thread
 * t reads vectors 2t and 2t + 1, 32 contiguous bytes; ORDER 3: odd warps
 * issue tile 1 first (the same bits). Loads are asm volatile so that no
 * compiler moves them across the barrier. */
__device__ __forceinline__ float4 ld_cs_ordered(const float4 *p) {
  float4 v;
  asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

/* Chunk c's two vectors for this thread, in ORDER's issue order; a is the
 * lane's first vector, b its second. */
template <int ORDER>
__device__ __forceinline__ void load_chunk_ordered(const float4 *__restrict__ x4, int64_t c, float4 &a, float4 &b) {
  const float4 *base = x4 + c * 2048;
  const int t = threadIdx.x;
  if constexpr (ORDER == 2) {
    a = ld_cs_ordered(base + 2 * t);
    b = ld_cs_ordered(base + 2 * t + 1);
  } else if constexpr (ORDER == 3) {
    if ((t >> 5) & 1) {
      b = ld_cs_ordered(base + 1024 + t);
      a = ld_cs_ordered(base + t);
    } else {
      a = ld_cs_ordered(base + t);
      b = ld_cs_ordered(base + 1024 + t);
    }
  } else {
    a = ld_cs_ordered(base + t);
    if (ORDER == 1) __syncthreads();
    b = ld_cs_ordered(base + 1024 + t);
  }
}

template <int ORDER>
__global__ void __launch_bounds__(1024, 2) read_ordered(const float4 *__restrict__ x4, float *sink) {
  float4 a, b;
  load_chunk_ordered<ORDER>(x4, blockIdx.x, a, b);
  const float m = fold(fold(0.0f, a), b);
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* The wide tree's sum with ORDER's loads: block tree, polled slot, and a
 * dedicated finishing block (block `chunks`, 8 slots in flight a lane), as
 * the product launches 52.4M. */
template <int ORDER>
__global__ void __launch_bounds__(1024, 2)
sum_ordered(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots) {
  __shared__ double sd[32];
  if (blockIdx.x == chunks) {
    double r = combine_polled<P, 8>(0.0, slots, threadIdx.x, chunks, 1024);
    r = block_reduce_sum<P, 1024>(r, sd);
    if (threadIdx.x == 0) *y = (float)r;
    return;
  }
  float4 a, b;
  load_chunk_ordered<ORDER>(x4, blockIdx.x, a, b);
  double s = wide_lane_of(a, b);
  s = block_reduce_sum<P, 1024, false>(s, sd);
  if (threadIdx.x == 0) publish_slot(slots, blockIdx.x, s);
}

void section_order(Bench &b) {
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  printf("== the order a 32 KB block's loads issue in: back to back, tile by tile, contiguous pairs, odd warps "
         "swapped\n");
  using ReadK = void (*)(const float4 *, float *);
  using SumK = void (*)(const float4 *, int64_t, float *, unsigned long long *);
  /* the wide tree's lanes but for contiguous pairs, whose sum row is named
   * "sum" (print_timed checks the bits of "fin" rows only) */
  const struct { const char *name; ReadK read; SumK sum; bool lanes; } orders[] = {
      {"back to back", read_ordered<0>, sum_ordered<0>, true},
      {"tile by tile (barrier)", read_ordered<1>, sum_ordered<1>, true},
      {"contiguous pairs", read_ordered<2>, sum_ordered<2>, false},
      {"odd warps swapped", read_ordered<3>, sum_ordered<3>, true}};
  for (int round = 0; round < rounds_or(2); ++round) {
    for (int64_t n : {(int64_t)13107200, (int64_t)26214400, (int64_t)52428800}) {
      const double ref = prefix_sum(sc.h, n);
      const int64_t chunks = n / 8192;
      const unsigned g = (unsigned)chunks;
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, false);
      vs.push_back(read_fixed_timed<512, 2>(x4, n / 4, sink, st));
      vs.push_back(read_fixed_timed<512, 1>(x4, n / 4, sink, st));
      for (const auto &o : orders) {
        const ReadK k = o.read;
        vs.push_back({std::string("read ") + o.name, false, [=] { k<<<g, 1024, 0, st>>>(x4, sink); }});
      }
      for (const auto &o : orders) {
        const SumK k = o.sum;
        vs.push_back({std::string(o.lanes ? "fin " : "sum ") + o.name, true,
                      [=] { k<<<g + 1, 1024, 0, st>>>(x4, chunks, y, slots); }});
      }
      print_timed(b.T, "order", round, n, ref, y, vs, &want, "fin");
    }
  }
}

/* ---- wide chunks on resident blocks, 32 KB an SM in flight (section `resident`) ----
 * Section order on the H100 at 52.4M: reads with 32 KB in flight an SM
 * (1024 x 1 and 512 x 1 blocks) take 72.6-73.4 us, with 64 KB an SM
 * (1024 x 2, 512 x 2) 74.7-75.5, whatever the block size or the order the
 * loads issue in: the device's bytes in flight set the rate (the H200 ranks
 * these reads otherwise: HISTORY "Stop 46"). The wide chunk
 * is 32 KB a block, so a block per chunk puts 64 KB an SM in flight (two
 * blocks), and one block an SM idles between blocks (96 us, section occ).
 * Here G resident blocks of 1024 threads each hold one wide chunk's two
 * loads a thread in flight, and issue the next chunk's as soon as the
 * current one's arrive, before its tree; chunks are taken in index order
 * (DYN: from an atomic counter, fetched a chunk ahead; else block b takes
 * b, b + G, ...). SUM: the wide tree's lanes, block tree and slots (the same
 * bits) and a finishing block launched after the G streamers, which polls
 * with a pause; else a pure read. Each launch takes a fresh counter word.
 * The lanes are written out here, not wide_lane_of: with that helper both
 * kernels compile to other SASS (scheduling) than the binary measured in
 * stop 46. */
/* combine_polled's order (finish.cuh) over slots first, first + STRIDE,
 * ..., pausing SLEEP_NS between polls of a slot not yet full: a finisher
 * that starts with the kernel, long before the slots fill (here and in
 * section stream). */
template <int STRIDE, int SLEEP_NS>
__device__ double combine_polled_sleeping(unsigned long long *slots, int64_t first, int64_t count) {
  double r = 0.0;
  for (int64_t k = first; k < count; k += STRIDE) {
    slot_words w = load_slot<double>(slots + kSlotU64 * k);
    while (!slot_full(w)) {
      __nanosleep(SLEEP_NS);
      w = load_slot<double>(slots + kSlotU64 * k);
    }
    store_slot(slots + kSlotU64 * k, 0ull, 0ull);
    double v;
    slot_value(w, &v);
    r = P::combine(r, v);
  }
  return r;
}

template <bool DYN, bool SUM>
__global__ void __launch_bounds__(1024, 2)
resident_wide(const float4 *__restrict__ x4, int64_t chunks, unsigned int *ctr, float *y,
              unsigned long long *slots, float *sink) {
  __shared__ double sd[32];
  __shared__ long long next[2];
  const int tid = threadIdx.x;
  const int64_t G = gridDim.x - (SUM ? 1 : 0);
  if (SUM && blockIdx.x == G) {
    double r = combine_polled_sleeping<1024, 64>(slots, tid, chunks);
    r = block_reduce_sum<P, 1024>(r, sd);
    if (tid == 0) *y = (float)r;
    return;
  }
  int64_t c = blockIdx.x;
  if (c >= chunks) return;
  float4 a = ld_cs_ordered(x4 + c * 2048 + tid), b = ld_cs_ordered(x4 + c * 2048 + 1024 + tid);
  if (DYN && tid == 0) next[0] = G + (long long)atomicAdd(ctr, 1u);
  int k = 0;
  float m = 0.0f;
  for (;;) {
    int64_t n = c + G;
    unsigned int ticket = 0;
    if (DYN) {
      __syncthreads(); /* next[k] written */
      n = next[k];
    }
    float4 a2 = make_float4(0.f, 0.f, 0.f, 0.f), b2 = a2;
    if (n < chunks) {
      a2 = ld_cs_ordered(x4 + n * 2048 + tid);
      b2 = ld_cs_ordered(x4 + n * 2048 + 1024 + tid);
    }
    /* the fetch after n: issued now, its value stored after the tree */
    if (DYN && tid == 0 && n < chunks) ticket = atomicAdd(ctr, 1u);
    if (SUM) {
      double s = 0.0;
      s = P::add(s, a.x); s = P::add(s, a.y); s = P::add(s, a.z); s = P::add(s, a.w);
      s = P::add(s, b.x); s = P::add(s, b.y); s = P::add(s, b.z); s = P::add(s, b.w);
      s = block_reduce_sum<P, 1024>(s, sd);
      if (tid == 0) publish_slot(slots, c, s);
    } else {
      m = fold(fold(m, a), b);
    }
    if (n >= chunks) break;
    if (DYN && tid == 0) next[k ^ 1] = G + (long long)ticket;
    k ^= 1;
    c = n;
    a = a2;
    b = b2;
  }
  if (!SUM && m == 12345.0f) sink[blockIdx.x] = m;
}

/* The same with one barrier a chunk: chunk numbers fetched two ahead into a
 * ring of 4 (thread 0 never waits on a fetch), and the block tree's warp
 * results double-buffered, so the one barrier serves the ring, the tree's
 * second level (warp 0, after it) and the buffers' reuse. MODE 0: a pure
 * read with that loop; 1: the sum, finishing block polling every 64 ns;
 * 2: the same, polling every 512 ns; 3 (wrong sum, timing only): slots
 * published, no finishing block. */
template <int MODE>
__global__ void __launch_bounds__(1024, 2)
resident_ring(const float4 *__restrict__ x4, int64_t chunks, unsigned int *ctr, float *y,
              unsigned long long *slots, float *sink) {
  __shared__ double sd[2][32];
  __shared__ long long ring[4];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool finisher_launched = MODE == 1 || MODE == 2;
  const int64_t G = gridDim.x - (finisher_launched ? 1 : 0);
  if (finisher_launched && blockIdx.x == G) {
    double r = MODE == 1 ? combine_polled_sleeping<1024, 64>(slots, tid, chunks)
                          : combine_polled_sleeping<1024, 512>(slots, tid, chunks);
    r = block_reduce_sum<P, 1024>(r, sd[0]);
    if (tid == 0) *y = (float)r;
    return;
  }
  int64_t c = blockIdx.x;
  if (c >= chunks) return;
  float4 a = ld_cs_ordered(x4 + c * 2048 + tid), b = ld_cs_ordered(x4 + c * 2048 + 1024 + tid);
  unsigned int ahead = 0; /* the fetch for the chunk after next, stored one chunk later */
  if (tid == 0) {
    ring[1] = G + (long long)atomicAdd(ctr, 1u);
    ahead = atomicAdd(ctr, 1u);
  }
  __syncthreads();
  float m = 0.0f;
  for (int i = 0;; ++i) {
    const int64_t n = ring[(i + 1) & 3];
    float4 a2 = make_float4(0.f, 0.f, 0.f, 0.f), b2 = a2;
    if (n < chunks) {
      a2 = ld_cs_ordered(x4 + n * 2048 + tid);
      b2 = ld_cs_ordered(x4 + n * 2048 + 1024 + tid);
    }
    unsigned int fetched = 0;
    if (tid == 0 && n < chunks) fetched = atomicAdd(ctr, 1u);
    if (MODE == 0) {
      m = fold(fold(m, a), b);
    } else {
      double s = 0.0;
      s = P::add(s, a.x); s = P::add(s, a.y); s = P::add(s, a.z); s = P::add(s, a.w);
      s = P::add(s, b.x); s = P::add(s, b.y); s = P::add(s, b.z); s = P::add(s, b.w);
      s = warp_reduce_sum<P>(s, 32);
      if (lane == 0) sd[i & 1][warp] = s;
    }
    if (tid == 0) ring[(i + 2) & 3] = G + (long long)ahead;
    ahead = fetched;
    __syncthreads();
    if (MODE != 0 && warp == 0) {
      const double v = warp_reduce_sum<P>(sd[i & 1][lane], 32);
      if (lane == 0) publish_slot(slots, c, v);
    }
    if (n >= chunks) break;
    c = n;
    a = a2;
    b = b2;
  }
  if (MODE == 0 && m == 12345.0f) sink[blockIdx.x] = m;
}

void section_resident(Bench &b) {
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  unsigned long long *junk = sc.slots + (3 << 19); /* 12 MB in */
  constexpr int kWords = 1 << 20;
  unsigned int *ctrs;
  CK(cudaMalloc(&ctrs, (size_t)kWords * 4));
  CK(cudaMemset(ctrs, 0, (size_t)kWords * 4));
  auto launches = std::make_shared<int64_t>(0);
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  printf("== wide chunks on resident blocks: G = SMs x 1 or x 2 blocks of 1024, the next chunk's loads issued on "
         "arrival, static or atomic order; %d SMs\n", sms);
  for (int round = 0; round < rounds_or(2); ++round) {
    for (int64_t n : {(int64_t)13107200, (int64_t)26214400, (int64_t)52428800}) {
      const double ref = prefix_sum(sc.h, n);
      const int64_t chunks = n / 8192;
      const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
      const unsigned int want = wide_tree_bits(b, n, sc);
      std::vector<Timed> vs = product_reads_entry(b, n, sc, false);
      using K = void (*)(const float4 *, int64_t, unsigned int *, float *, unsigned long long *, float *);
      const struct { const char *name; K k; bool sum; } forms[] = {
          {"static", resident_wide<false, false>, false}, {"atomic", resident_wide<true, false>, false},
          {"static", resident_wide<false, true>, true},   {"atomic", resident_wide<true, true>, true}};
      for (int per : {1, 2})
        for (const auto &f : forms) {
          const unsigned g = (unsigned)(sms * per) + (f.sum ? 1u : 0u);
          const K k = f.k;
          /* "fin" rows must give the wide tree's bits */
          const std::string tag = std::string(f.sum ? "fin resident " : "read resident ") + f.name + " x" +
                                  std::to_string(per);
          vs.push_back({tag, f.sum, [=] {
                          unsigned int *ctr = ctrs + (*launches)++ % kWords;
                          k<<<g, 1024, 0, st>>>(x4, chunks, ctr, y, slots, sink);
                        }});
        }
      const struct { const char *name; K k; bool sum; bool fin; } rings[] = {
          {"read ring x1", resident_ring<0>, false, false},
          {"fin ring x1 poll 64ns", resident_ring<1>, true, true},
          {"fin ring x1 poll 512ns", resident_ring<2>, true, true},
          {"ring x1 slots, no finish (wrong)", resident_ring<3>, false, false}};
      for (const auto &f : rings) {
        const unsigned g = (unsigned)sms + (f.fin ? 1u : 0u);
        const K k = f.k;
        unsigned long long *to = f.fin ? slots : junk; /* slots nobody empties go where nobody polls */
        vs.push_back({f.name, f.sum, [=] {
                        unsigned int *ctr = ctrs + (*launches)++ % kWords;
                        k<<<g, 1024, 0, st>>>(x4, chunks, ctr, y, to, sink);
                      }});
      }
      print_timed(b.T, "resident", round, n, ref, y, vs, &want, "fin");
    }
  }
  cudaFree(ctrs);
}

/* ---- slabs read from staggered steps (section `phase`) -------------------
 * The column family reads (256, 4096, 64) fp32 as 512 slabs of 512 KB, a
 * block each, every block starting at its slab's first byte; the full sum's
 * window of 32 KB chunks reads the same bytes 5-12% faster. Hypothesis:
 * blocks that walk their slabs in step share their low address bits, so
 * their requests crowd the same memory channels together. Here each block
 * walks its slab from step `start` (a function of its index), wrapping, at
 * the column kernel's load shape (256 threads x 8 16-byte loads in flight:
 * 32 KB a step). */
template <int BLOCK, int U>
__global__ void __launch_bounds__(BLOCK) read_slab_from(const float4 *__restrict__ x, int64_t per, int phases,
                                                        int mult, float *sink) {
  const int64_t steps = per / (BLOCK * U); /* per: vectors a slab, a multiple of BLOCK * U */
  const int64_t start = phases > 1 ? ((int64_t)blockIdx.x * mult % phases) * steps / phases : 0;
  const float4 *base = x + (int64_t)blockIdx.x * per + threadIdx.x;
  float m = 0.0f;
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t s = start + k < steps ? start + k : start + k - steps;
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = ld<H_CS>(base + (s * U + u) * BLOCK);
#pragma unroll
    for (int u = 0; u < U; ++u) m = fold(m, v[u]);
  }
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* The window read's one-shot blocks (BLOCK x L vectors each, all in
 * flight) taking the chunks in slab order: block b reads chunk (b % slabs)
 * * per_slab + b / slabs, so the blocks at work are spread over the slabs as
 * the column family's are, with the window's load shape and lifetime. */
template <int BLOCK, int L>
__global__ void __launch_bounds__(BLOCK) read_chunks_slab_order(const float4 *__restrict__ x, int64_t slabs,
                                                                int64_t per_slab, float *sink) {
  const int64_t chunk = (int64_t)blockIdx.x % slabs * per_slab + (int64_t)blockIdx.x / slabs;
  const float4 *base = x + chunk * BLOCK * L + threadIdx.x;
  float4 v[L];
#pragma unroll
  for (int u = 0; u < L; ++u) v[u] = ld<H_CS>(base + u * BLOCK);
  float m = 0.0f;
#pragma unroll
  for (int u = 0; u < L; ++u) m = fold(m, v[u]);
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

void section_phase(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *sink = b.sink;
  const float *x = b.x;
  const redux_shape s{256, 4096, 64};
  const int64_t total = s.outer * s.n * s.inner, n4 = total / 4;
  printf("== slabs of (256, 4096, 64) fp32 read from staggered steps: 512 blocks x 256 threads x 8 loads, "
         "16 steps of 32 KB a slab\n");
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float *ys;
  CK(cudaMalloc(&ys, (size_t)1 << 20));
  std::vector<Timed> vs;
  vs.push_back(product_family_timed(b, "redux cols", true, REDUX_COLS, s, ys));
  vs.push_back(product_family_timed(b, "redux full (1 out)", true, REDUX_FULL, redux_shape{1, total, 1}, ys));
  vs.push_back(read_fixed_timed<1024, 2>(x4, n4, sink, st));
  const int blocks = 512;
  const int64_t per = n4 / blocks;
  /* (phases, mult): start step = (block * mult % phases) * 16 / phases. */
  const int forms[][2] = {{1, 1}, {2, 1}, {4, 1}, {16, 1}, {16, 5}, {16, 7}, {512, 1}, {512, 37}};
  for (const auto &f : forms) {
    const int phases = f[0], mult = f[1];
    char name[48];
    snprintf(name, sizeof name, "slab from step: %d phases x%d", phases, mult);
    vs.push_back({name, false, [=] {
                    read_slab_from<256, 8><<<blocks, 256, 0, st>>>(x4, per, phases, mult, sink);
                  }});
  }
  /* Which of the slab's differences from the window costs: the load shape
   * (window order, 256 x 8), the spread (one-shot 1024 x 2 blocks in slab
   * order), the spread over long-lived blocks (1 MB slabs on 256 blocks of
   * 1024 x 2). */
  vs.push_back(read_fixed_timed<256, 8>(x4, n4, sink, st));
  const int64_t chunks = n4 / 2048;
  vs.push_back({"chunks b1024 l2 in slab order", false, [=] {
                  read_chunks_slab_order<1024, 2><<<(unsigned)chunks, 1024, 0, st>>>(x4, blocks, chunks / blocks,
                                                                                      sink);
                }});
  vs.push_back({"slab b1024 u2 (256 slabs)", false, [=] {
                  read_slab_from<1024, 2><<<256, 1024, 0, st>>>(x4, n4 / 256, 1, 1, sink);
                }});
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round)
    for (const auto &v : vs) {
      auto t = T.time(v.f);
      printf("phase r%d %-34s median %8.2f us  mean %8.2f us  %7.1f GB/s\n", round, v.name.c_str(), t.first,
             t.second, total * 4 / t.first / 1e3);
    }
  cudaFree(ys);
}

/* ---- streamed chunks (section `stream`) ----------------------------------
 * Measured and not taken (leaderboard/HISTORY.md): the 256-lane 8-tile
 * chunks of the previous full-sum tree (the bench's fixed_sum<8, 1> gives
 * their bits) on blocks that stay resident: block b of `streamers` takes
 * chunks b, b + streamers, ... and each thread keeps DEPTH loads running
 * ahead of its adds, across chunk boundaries. A chunk's block tree is
 * split: each warp reduces its lanes by shuffles and leaves its result in a
 * shared ring; the warp that arrives last for a chunk (a shared-memory
 * ticket) combines the warps in block_reduce_sum's order and publishes the
 * chunk's slot: no block barrier in the loop. The grid's last block streams
 * nothing: it combines the slots in chunk order while the others stream,
 * sleeping between polls. */
/* Chunks a streaming block keeps in its shared ring: how far its fastest
 * warp may run ahead of its slowest (a warp that would lap the ring waits). */
constexpr int kStreamRing = 4;
/* The finishing block's pause between polls of a slot not yet full: it
 * polls for the whole kernel, and a tight loop of L2 loads competes with
 * the stream for no gain. */
constexpr int kStreamPollSleepNs = 128;



/* Lane 0 of block_reduce_sum's second stage over warp results w[0, WARPS):
 * the same shuffle tree (warp_reduce_sum over warp_tree_width lanes, lanes
 * past WARPS holding zero), evaluated in one thread. */
template <typename P, int WARPS>
__device__ __forceinline__ typename P::acc_t warps_tree(const typename P::acc_t (&w)[WARPS]) {
  constexpr int W = warp_tree_width<WARPS>();
  typename P::acc_t v[W];
#pragma unroll
  for (int l = 0; l < W; ++l) v[l] = l < WARPS ? w[l] : P::zero();
#pragma unroll
  for (int off = W / 2; off > 0; off /= 2)
#pragma unroll
    for (int l = 0; l < off; ++l) v[l] = P::combine(v[l], v[l + off]);
  return v[0];
}

/* A streaming block's shared ring: warp results of kStreamRing chunks. */
template <typename acc_t>
struct stream_ring {
  acc_t parts[kStreamRing][kBlock / 32];
  unsigned int arrived[kStreamRing];
  unsigned int next[kStreamRing]; /* the local chunk number the entry takes next */
};

/* Called by every lane of a warp with its lane sum of local chunk k (global
 * chunk c). The warp's shuffle tree, then lane 0 files the warp's result;
 * the last warp of the block to file chunk k publishes its slot. */
template <typename P>
__device__ __forceinline__ void stream_file_chunk(typename P::acc_t acc, unsigned int k, int64_t c,
                                                  stream_ring<typename P::acc_t> &ring, unsigned long long *slots) {
  constexpr int WARPS = kBlock / 32;
  acc = warp_reduce_sum<P>(acc, 32);
  if ((threadIdx.x & 31) != 0) return;
  const int e = (int)(k % kStreamRing);
  while (*(volatile unsigned int *)&ring.next[e] != k) {
  }
  ring.parts[e][threadIdx.x >> 5] = acc;
  __threadfence_block(); /* the result before the arrival */
  if (atomicAdd(&ring.arrived[e], 1u) != WARPS - 1) return;
  __threadfence_block(); /* every warp's result after its arrival */
  typename P::acc_t w[WARPS];
#pragma unroll
  for (int i = 0; i < WARPS; ++i) w[i] = ring.parts[e][i];
  publish_slot(slots, c, warps_tree<P, WARPS>(w));
  ring.arrived[e] = 0;
  __threadfence_block(); /* the reset before the entry is handed on */
  *(volatile unsigned int *)&ring.next[e] = k + kStreamRing;
}

/* x: 16-byte aligned, n elements in `chunks` (>= 2) chunks of chunk_len
 * (kUnroll tiles; the last may be partial); slots: 2 * chunks zeroed
 * 64-bit words (finish.cuh), left zeroed. gridDim.x - 1 blocks stream, the
 * last one finishes. */
template <typename In, typename Out, int DEPTH>
__global__ void __launch_bounds__(kBlock)
sum_stream_kernel(const In *__restrict__ x, Out *__restrict__ y, int64_t n, int64_t chunks, int64_t chunk_len,
                  unsigned long long *slots) {
  using P = sum_policy<In, Out>;
  using acc_t = typename P::acc_t;
  constexpr int VEC = vec_of<In>::value;
  static_assert(kUnroll % DEPTH == 0, "DEPTH must divide a chunk's tiles");
  const int tid = threadIdx.x;
  const int64_t streamers = (int64_t)gridDim.x - 1;
  if (blockIdx.x == streamers) {
    __shared__ acc_t scratch[kBlock / 32];
    acc_t r = combine_polled_sleeping<256, kStreamPollSleepNs>(slots, tid, chunks);
    r = block_reduce_sum<P, kBlock>(r, scratch);
    if (tid == 0) *y = P::finish(r);
    return;
  }
  __shared__ stream_ring<acc_t> ring;
  if (tid < kStreamRing) {
    ring.arrived[tid] = 0;
    ring.next[tid] = (unsigned int)tid;
  }
  __syncthreads();
  const int64_t tile = (int64_t)kBlock * VEC;
  const int64_t whole = n / chunk_len; /* chunks of kUnroll whole tiles */
  const In *xt = x + (int64_t)tid * VEC;
  int64_t c = blockIdx.x;
  unsigned int k = 0;
  In ahead[DEPTH][VEC];
  if (c < whole) {
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) load_vec<In, VEC, true, true>(xt + c * chunk_len + d * tile, ahead[d]);
  }
  for (; c < whole; c += streamers, ++k) {
    const int64_t next = c + streamers;
    acc_t acc = P::zero();
#pragma unroll
    for (int j = 0; j < kUnroll; j += DEPTH) {
      In cur[DEPTH][VEC];
#pragma unroll
      for (int d = 0; d < DEPTH; ++d)
#pragma unroll
        for (int e = 0; e < VEC; ++e) cur[d][e] = ahead[d][e];
      /* The next DEPTH vectors, this chunk's or the next chunk's first,
       * go out before this group is added. */
      if (j + DEPTH < kUnroll) {
#pragma unroll
        for (int d = 0; d < DEPTH; ++d)
          load_vec<In, VEC, true, true>(xt + c * chunk_len + (j + DEPTH + d) * tile, ahead[d]);
      } else if (next < whole) {
#pragma unroll
        for (int d = 0; d < DEPTH; ++d) load_vec<In, VEC, true, true>(xt + next * chunk_len + d * tile, ahead[d]);
      }
#pragma unroll
      for (int d = 0; d < DEPTH; ++d)
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc = P::add(acc, cur[d][e]);
    }
    stream_file_chunk<P>(acc, k, c, ring, slots);
  }
  /* The partial last chunk, read by its owner as sum_chunks_kernel reads it. */
  if (c == whole && whole < chunks) {
    const acc_t acc = lane_sum_tiles<P, VEC, kUnroll, true, true>(x + whole * chunk_len, n - whole * chunk_len, 0,
                                                                  1, tid, kBlock, P::zero());
    stream_file_chunk<P>(acc, k, c, ring, slots);
  }
}

/* The section: DEPTH loads ahead per thread and streaming blocks per SM
 * (the grid: SMs x BPS streaming blocks + the finishing one) varied, beside
 * the product's launcher and the two fastest pure reads measured so far
 * (pieces of 8 KB at 4 blocks an SM, 16 KB at 2); every sum's bits against
 * fixed_sum<8, 1>'s (the same tree, so they must be equal), at the six
 * competition sizes, a ragged size and 256 MiB. */
template <int DEPTH>
Timed stream_timed(const Bench &b, int64_t n, int bps, unsigned long long *slots) {
  int dev = 0, sms = 0, fit = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, sum_stream_kernel<float, float, DEPTH>, 256, 0));
  const int64_t chunk_len = (int64_t)kUnroll * 1024;
  const int64_t chunks = ceil_div(n, chunk_len);
  const int streamers = (int)std::min<int64_t>(chunks, (int64_t)sms * bps);
  char nm[64];
  snprintf(nm, sizeof nm, "stream d%d bps%d (fit %d)", DEPTH, bps, fit);
  const float *x = b.x;
  float *y = b.y;
  const cudaStream_t st = b.st;
  return {nm, true, [=] {
            sum_stream_kernel<float, float, DEPTH><<<streamers + 1, 256, 0, st>>>(x, y, n, chunks, chunk_len, slots);
          }};
}

void section_stream(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *x = b.x, *y = b.y, *sink = b.sink;
  printf("== streamed chunks: loads ahead (d) x streaming blocks per SM (bps), bits against the product's\n");
  const int64_t sizes[] = {1638400, 3276800, 6553600, 13107200, 26214400, 52428800, 52428800 - 4093, (int64_t)1 << 26};
  const Scratch sc(x, (int64_t)1 << 26);
  unsigned long long *slots = sc.slots;
  const std::vector<float> &h = sc.h;
  const int rounds = rounds_or(2);
  const char *only = getenv("STREAM_BPS"); /* e.g. "3,4,5": the bps to time */
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const double ref = prefix_sum(h, n);
      const int64_t n4 = n / 4;
      const float4 *x4 = reinterpret_cast<const float4 *>(x);
      /* the 256-lane 8-tile tree's bits: the block-per-chunk prototype */
      const int64_t chunks8 = ceil_div(n, (int64_t)8192);
      fixed_sum<8, 1><<<(unsigned)chunks8, 256, 0, st>>>(x, y, n, chunks8, sc.cnt, sc.parts, slots);
      CK(cudaStreamSynchronize(st));
      unsigned int want = 0;
      CK(cudaMemcpy(&want, y, 4, cudaMemcpyDeviceToHost));
      std::vector<Timed> vs{product_timed(b, n)};
      vs.push_back({"read b256 l2 occ4", false, [=] {
                      read_fixed<256, 2, H_CS><<<(unsigned)ceil_div(n4, (int64_t)512), 256, 0, st>>>(x4, n4, sink);
                    }});
      vs.push_back(read_fixed_timed<1024, 1>(x4, n4, sink, st));
      for (int bps = 2; bps <= 6; ++bps) {
        char tag[8];
        snprintf(tag, sizeof tag, "%d", bps);
        if (only && !strstr(only, tag)) continue;
        vs.push_back(stream_timed<1>(b, n, bps, slots));
        vs.push_back(stream_timed<2>(b, n, bps, slots));
        vs.push_back(stream_timed<4>(b, n, bps, slots));
      }
      /* one streaming block: the bits must not move with the grid */
      if (round == 0 && n <= 3276800) {
        const int64_t chunks = ceil_div(n, (int64_t)8192);
        vs.push_back({"stream d2 one streamer", true, [=] {
                        sum_stream_kernel<float, float, 2><<<2, 256, 0, st>>>(x, y, n, chunks, 8192, slots);
                      }});
      }
      print_timed(T, "stream", round, n, ref, y, vs, &want, "stream");
    }
  }
}

/* ---- the fp32 -> fp64 conversion (section `convert`) ----------------------
 * F2F.F64.F32 runs at 16 a clock an SM on sm_80/sm_90 (the programming
 * guide's throughput table; a quarter of the fp64 add's 64), and the wide
 * chunk's 32 warps all convert when their loads land: 512 clocks of a
 * block's ~1,100 after its data arrives. An exact conversion by integer
 * ops: a float's bits u placed in a double's fields (sign on top, the 8
 * exponent bits into the low 8 of the 11, the mantissa under them) give the
 * float's value times 2^-896, subnormals included, and fma(v, 2^896, acc)
 * adds exactly x to acc with one rounding, so the lane keeps the bits of
 * acc + (double)x. Inf and NaN come out finite that way, so the elements
 * converted by integers are also added in fp32 on the side; a non-finite
 * side sum (an inf or NaN among them, or an fp32 overflow) sends the thread
 * back to the F2F path. MODE: which of the thread's 8 elements (tile k,
 * element e) go through integers: 0 none (the F2F baseline), 1 all, 2 tile
 * 1, 3 the odd elements, 4 tile 1 and element 3 of tile 0. */
__device__ __forceinline__ double scaled_double(float x) {
  const unsigned u = __float_as_uint(x);
  return __hiloint2double((int)(((u >> 3) & 0x0fffffffu) | (u & 0x80000000u)), (int)(u << 29));
}

template <int MODE>
__device__ __forceinline__ constexpr bool by_integers(int i) {
  return MODE == 1 ? true : MODE == 2 ? i >= 4 : MODE == 3 ? (i & 1) != 0 : MODE == 4 ? (i >= 4 || i == 3) : false;
}

template <int MODE>
__global__ void __launch_bounds__(1024, 2)
wide_convert_sum(const float4 *__restrict__ x4, int64_t chunks, float *y, unsigned long long *slots) {
  __shared__ double sd[32];
  const int tid = threadIdx.x;
  const float4 *p = x4 + (int64_t)blockIdx.x * 2048 + tid;
  const float4 v0 = __ldcs(p), v1 = __ldcs(p + 1024);
  const float e[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
  double s[1] = {0.0};
  float side = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    if (by_integers<MODE>(i)) {
      s[0] = __fma_rn(scaled_double(e[i]), 0x1p896, s[0]);
      side += e[i];
    } else {
      s[0] = P::add(s[0], e[i]);
    }
  }
  if (MODE != 0 && !isfinite(side)) {
    s[0] = 0.0;
#pragma unroll
    for (int i = 0; i < 8; ++i) s[0] = P::add(s[0], e[i]);
  }
  wide_lanes_publish_finish<1024, 1>(s, sd, slots, chunks, y);
}

void section_convert(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  printf("== the wide chunk with fp32 -> fp64 by F2F or by integer ops (same bits)\n");
  const Scratch sc(b.x, 52428800);
  unsigned long long *slots = sc.slots + (1 << 16);
  const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
  const auto variants = [&](int64_t n) {
    const int64_t n4 = n / 4, chunks = n4 / 2048;
    std::vector<Timed> vs{product_timed(b, n)};
    vs.push_back(read_fixed_timed<1024, 1>(x4, n4, sink, st));
    vs.push_back(read_fixed_timed<1024, 2>(x4, n4, sink, st));
    vs.push_back({"conv f2f", true, [=] { wide_convert_sum<0><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
    vs.push_back({"conv int all", true, [=] { wide_convert_sum<1><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
    vs.push_back({"conv int tile1", true, [=] { wide_convert_sum<2><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
    vs.push_back({"conv int odd", true, [=] { wide_convert_sum<3><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
    vs.push_back({"conv int 5of8", true, [=] { wide_convert_sum<4><<<(unsigned)chunks, 1024, 0, st>>>(x4, chunks, y, slots); }});
    return vs;
  };
  /* The fallback: an inf, then a NaN, then finite values whose fp32 side
   * sum overflows, then two subnormals, in one chunk; every variant must
   * give the product's bits. */
  {
    const int64_t n = 1638400, at = 12345 * 4 + 1; /* element 1 of a vector: by integers in modes 1, 3 */
    float saved[2];
    CK(cudaMemcpy(&saved[0], b.x + at, 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&saved[1], b.x + at + 4096, 4, cudaMemcpyDeviceToHost));
    const float probes[][2] = {{INFINITY, 0.f}, {NAN, 0.f}, {-INFINITY, INFINITY}, {3e38f, 3e38f}, {1e-40f, -1e-45f}};
    for (const auto &pr : probes) {
      /* at and at + 4096: the same thread's tile 0 and tile 1 */
      CK(cudaMemcpy(b.x + at, &pr[0], 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(b.x + at + 4096, &pr[1], 4, cudaMemcpyHostToDevice));
      unsigned int want = 0;
      for (const Timed &v : variants(n)) {
        if (!v.sum) continue;
        v.f();
        CK(cudaStreamSynchronize(st));
        unsigned int bits;
        CK(cudaMemcpy(&bits, y, 4, cudaMemcpyDeviceToHost));
        if (v.name == "redux") want = bits;
        printf("convert fallback (%g, %g) %-16s 0x%08x %s\n", pr[0], pr[1], v.name.c_str(), bits,
               bits == want ? "same bits" : "BITS DIFFER");
      }
    }
    CK(cudaMemcpy(b.x + at, &saved[0], 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.x + at + 4096, &saved[1], 4, cudaMemcpyHostToDevice));
  }
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : kSixSizes) {
      const double ref = prefix_sum(sc.h, n);
      const unsigned int want = wide_tree_bits(b, n, sc);
      print_timed(T, "convert", round, n, ref, y, variants(n), &want, "conv");
    }
  }
}
/* ---- L2 access policies for a streamed read (section `policy`) ----------
 * The timer's 256 MiB fill leaves the L2 full of dirty lines, which a read
 * that evicts them writes back inside the timed window. Does a load's L2
 * policy decide which lines its misses evict? Pure reads of 16 and 32 KB a
 * block under each hint, beside the product. */
template <int L, int H>
Timed read_hint_timed(const float4 *x4, int64_t n4, float *sink, cudaStream_t st, const char *hint) {
  return {"read b1024 l" + std::to_string(L) + " " + hint, false, [=] {
            read_fixed<1024, L, H><<<(unsigned)ceil_div(n4, (int64_t)1024 * L), 1024, 0, st>>>(x4, n4, sink);
          }};
}

void section_policy(Bench &b) {
  Timer &T = b.T;
  const cudaStream_t st = b.st;
  float *y = b.y, *sink = b.sink;
  printf("== pure reads under each L2 access policy, beside the product\n");
  const int64_t sizes[] = {13107200, 26214400, 52428800};
  const Scratch sc(b.x, 52428800);
  const float4 *x4 = reinterpret_cast<const float4 *>(b.x);
  const int rounds = rounds_or(3);
  for (int round = 0; round < rounds; ++round) {
    for (int64_t n : sizes) {
      const int64_t n4 = n / 4;
      std::vector<Timed> vs{product_timed(b, n)};
#define HINT_READS(H, NAME)                                   \
  vs.push_back(read_hint_timed<1, H>(x4, n4, sink, st, NAME)); \
  vs.push_back(read_hint_timed<2, H>(x4, n4, sink, st, NAME));
      HINT_READS(H_CS, "cs")
      HINT_READS(H_DEF, "def")
      HINT_READS(H_PF, "pol first")
      HINT_READS(H_CSPF, "cs pol first")
      HINT_READS(H_NAPF, "l1na pol first")
      HINT_READS(H_NCPF, "nc pol first")
      HINT_READS(H_PU, "pol unchanged")
      HINT_READS(H_PN, "pol normal")
      HINT_READS(H_LU, "lu")
#undef HINT_READS
      print_timed(T, "policy", round, n, prefix_sum(sc.h, n), y, vs);
    }
  }
}
}  // namespace

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Timer T(st);
  const int64_t nmax = (int64_t)1 << 28;
  float *x, *y, *sink;
  CK(cudaMalloc(&x, nmax * 4));
  CK(cudaMalloc(&y, 16 << 20)); /* up to 2M fp64 row or column sums */
  CK(cudaMalloc(&sink, 1 << 20));
  init_kernel<<<4096, 256, 0, st>>>(x, nmax, 1234u);
  void *ws;
  const size_t ws_cap = 64u << 20;
  CK(cudaMalloc(&ws, ws_cap));
  unsigned int *persist;
  CK(cudaMalloc(&persist, REDUX_CUDA_STREAM_COUNTERS * 4));
  CK(cudaMemset(persist, 0, REDUX_CUDA_STREAM_COUNTERS * 4));
  CK(cudaDeviceSynchronize());

  Bench b{T, st, x, y, sink, ws, ws_cap, persist, nmax, getenv("VARIANTS_ONLY_REDUX") != nullptr};
  const char *sections = getenv("VARIANTS_SECTIONS"); /* e.g. "sum": only the full sums */
  const struct { const char *name; void (*run)(Bench &); } all[] = {
      {"read", section_read},     {"parts", section_parts}, {"trace", section_trace}, {"launch", section_launch},
      {"sum", section_sum},       {"cols", section_cols},   {"rows", section_rows},
      {"fixed", section_fixed}, {"occ", section_occ}, {"persist", section_persist}, {"small", section_small},
      {"bulk", section_bulk}, {"split", section_split}, {"stream", section_stream}, {"tiles", section_tiles},
      {"wide", section_wide}, {"depth", section_depth}, {"defer", section_defer}, {"lanes", section_lanes},
      {"narrow", section_narrow}, {"convert", section_convert}, {"policy", section_policy},
      {"phase", section_phase}, {"strip", section_strip}, {"short", section_short}, {"gap", section_gap}, {"order", section_order},
      {"resident", section_resident},
  };
  for (const auto &sec : all)
    if (!sections || strstr(sections, sec.name) != nullptr) sec.run(b);
  CK(cudaDeviceSynchronize());
  return 0;
}
