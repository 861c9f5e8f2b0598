/* Shared plumbing of the CUDA kernel families (internal to csrc/cuda).
 *
 *   dispatch_pair     calls f.template operator()<In, Out>() for a supported
 *                     (input, output) dtype pair: the one list of pairs.
 *   family_plan       the shape-only decomposition of a problem into work
 *                     items, and the workspace it needs (counters, partials).
 *   grid_for          the grid a launch uses: forced, or filled from the
 *                     device's SM count and occupancy, balanced in waves.
 *   cluster_fit       thread block clusters that fit at once (0: none).
 *   last_block_ticket the single-pass finish: a block publishes its partial
 *                     and learns whether it is the last of its segment.
 */
#ifndef REDUX_CUDA_COMMON_CUH
#define REDUX_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include <type_traits>

#include "redux/redux.h"
#include "redux/reduce.cuh"

namespace redux {

/* Threads per block of every family kernel. Part of the reduction tree:
 * changing it changes the bits (never the grid). */
constexpr int kBlock = 256;

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The cache hint of a family's loads: inputs up to 256 MiB are read with
 * evict-first loads, larger ones with ordinary loads (measured crossover
 * between 256 and 512 MB, leaderboard/PERFORMANCE.md change 4). A hint:
 * never changes what is read, so never the bits. */
constexpr int64_t kStreamMaxBytes = (int64_t)256 << 20;
inline bool stream_hint(int64_t input_bytes) { return input_bytes <= kStreamMaxBytes; }

template <typename F>
redux_status dispatch_pair(redux_dtype in, redux_dtype out, F &&f) {
  if (in == out) {
    switch (in) {
      case REDUX_F32: return f.template operator()<float, float>();
      case REDUX_F64: return f.template operator()<double, double>();
      case REDUX_F16: return f.template operator()<__half, __half>();
      case REDUX_BF16: return f.template operator()<__nv_bfloat16, __nv_bfloat16>();
      case REDUX_I64: return f.template operator()<int64_t, int64_t>();
    }
  }
  if (in == REDUX_F16 && out == REDUX_F32) return f.template operator()<__half, float>();
  if (in == REDUX_BF16 && out == REDUX_F32) return f.template operator()<__nv_bfloat16, float>();
  if (in == REDUX_F32 && out == REDUX_F64) return f.template operator()<float, double>();
  return REDUX_ERR_DTYPE;
}

/* Bytes of one element of a dtype. */
inline int64_t elem_bytes(redux_dtype t) {
  return (t == REDUX_F64 || t == REDUX_I64) ? 8 : (t == REDUX_F32 ? 4 : 2);
}

struct acc_bytes_fn {
  size_t *bytes;
  template <typename In, typename Out>
  redux_status operator()() const {
    *bytes = sizeof(typename sum_policy<In, Out>::acc_t);
    return REDUX_OK;
  }
};

/* Bytes of the accumulator of an (input, output) pair; 0 if unsupported. */
inline size_t acc_bytes(redux_dtype in, redux_dtype out) {
  size_t bytes = 0;
  dispatch_pair(in, out, acc_bytes_fn{&bytes});
  return bytes;
}

/* What a family's cut of a problem needs in workspace. segments: the zeroed
 * uint32 counter words its finish uses: one ticket counter per output group
 * finished by a last block, or the slots of a polled finish (0: every work
 * item writes its outputs directly); partials: accumulators in workspace. */
struct family_plan {
  int64_t segments;
  int64_t partials;
};

/* Workspace: [segments x uint32 counters, padded to 256 B][partials]. The
 * counter room is used only when the caller passes no stream counters. */
inline size_t counters_bytes(const family_plan &p) {
  return p.segments == 0 ? 0 : (size_t)ceil_div(p.segments * 4, 256) * 256;
}
inline size_t workspace_bytes(const family_plan &p, size_t acc_bytes) {
  return p.segments == 0 ? 0 : counters_bytes(p) + (size_t)p.partials * acc_bytes;
}

/* The counter words and partials of a launch. Counters are the caller's
 * zeroed stream counters when it passed enough of them (kernels leave them
 * zeroed), else the workspace's, zeroed here on `stream`. Both must be
 * 16-byte aligned (a polled finish stores 16-byte slots there): stream
 * counters that are not are passed over, a workspace that is not is an
 * error. cudaMalloc and torch's allocator align to 256 bytes or more. */
inline redux_status check_workspace(const family_plan &p, const void *ws, size_t ws_bytes, size_t acc_bytes) {
  if (ws_bytes < workspace_bytes(p, acc_bytes)) return REDUX_ERR_SHAPE;
  if (p.segments != 0 && (uintptr_t)ws % 16 != 0) return REDUX_ERR_SHAPE;
  return REDUX_OK;
}
template <typename acc_t>
redux_status prepare_workspace(const family_plan &p, void *ws, size_t ws_bytes, unsigned int *stream_counters,
                               size_t stream_counters_len, cudaStream_t stream, unsigned int **counters,
                               acc_t **partials) {
  const redux_status ok = check_workspace(p, ws, ws_bytes, sizeof(acc_t));
  if (ok != REDUX_OK) return ok;
  *partials = p.segments ? reinterpret_cast<acc_t *>(static_cast<char *>(ws) + counters_bytes(p)) : nullptr;
  if (p.segments == 0) {
    *counters = nullptr;
  } else if (stream_counters != nullptr && stream_counters_len >= (size_t)p.segments &&
             (uintptr_t)stream_counters % 16 == 0) {
    *counters = stream_counters;
  } else {
    *counters = static_cast<unsigned int *>(ws);
    if (cudaMemsetAsync(ws, 0, counters_bytes(p), stream) != cudaSuccess) return REDUX_ERR_CUDA;
  }
  return REDUX_OK;
}

/* compute(dev) for (current device, kernel, key), cached per thread: the
 * launch questions below are asked on every launch, and a device's answer
 * never changes. One cache per kind of question (per Compute type).
 * Returns `fallback` when there is no current device. */
template <typename Compute>
inline int64_t cached_device_answer(const void *kernel, size_t key, int64_t fallback, Compute compute) {
  struct entry { const void *kernel; int dev; size_t key; int64_t value; };
  constexpr int kEntries = 64;
  thread_local entry cache[kEntries];
  thread_local int used = 0, next = 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return fallback;
  }
  for (int i = 0; i < used; ++i)
    if (cache[i].kernel == kernel && cache[i].dev == dev && cache[i].key == key) return cache[i].value;
  const int64_t value = compute(dev);
  cache[next] = entry{kernel, dev, key, value};
  next = (next + 1) % kEntries;
  if (used < kEntries) ++used;
  return value;
}

/* Blocks that fit on the current device at once for `kernel`: SM count x
 * occupancy. */
inline int64_t device_fit(const void *kernel, size_t smem) {
  return cached_device_answer(kernel, smem, 1, [&](int dev) {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, smem);
    return (int64_t)(sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
  });
}

/* Clusters of `cluster` blocks of `kernel` (kBlock threads, no dynamic
 * shared memory) that fit on the current device at once; 0 when it cannot
 * run clusters: a GPU older than sm_90, or this kernel's code built from
 * PTX for an older architecture (its cluster code compiled out). */
inline int64_t cluster_fit(const void *kernel, int cluster) {
  return cached_device_answer(kernel, (size_t)cluster, 0, [&](int dev) -> int64_t {
    int major = 0;
    cudaFuncAttributes fa{};
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kernel) != cudaSuccess || major < 9 || fa.ptxVersion < 90) {
      (void)cudaGetLastError();
      return 0;
    }
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)cluster);
    cfg.blockDim = dim3(kBlock);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  });
}

/* Blocks for a launch of `kernel` over `items` work items. The grid never
 * changes the result; it is sized for speed: at most what fits on the device
 * at once, balanced so every block does the same number of items (+-1). */
template <typename K>
int grid_for(K kernel, int64_t items, int forced, size_t smem = 0) {
  if (forced > 0) return forced;
  const int64_t fit = device_fit(reinterpret_cast<const void *>(kernel), smem);
  const int64_t waves = ceil_div(items, fit);
  const int64_t g = ceil_div(items, waves);
  return (int)(g < 1 ? 1 : g);
}

/* Called by every thread of a block after thread 0 stored the block's
 * partial(s). Returns true in every thread of the block that took the last
 * of `count` tickets of segment `seg`; that block may then read every
 * partial of the segment. The last block puts the counter back to 0 (every
 * other block has taken its ticket), so counters are zero again after every
 * kernel and a stream's counters can serve all its calls.
 * Integer atomics only: the sum itself never goes through an atomic. */
__device__ __forceinline__ bool last_block_ticket(unsigned int *counters, int64_t seg,
                                                  unsigned int count) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    __threadfence(); /* publish the partials before taking the ticket */
    const unsigned int t = atomicAdd(&counters[seg], 1u);
    is_last = (t == count - 1);
    if (is_last) atomicExch(&counters[seg], 0u);
  }
  __syncthreads();
  bool last = is_last;
  if (last) __threadfence(); /* see every other block's partial */
  __syncthreads();           /* is_last may be rewritten by the next item */
  return last;
}

/* Reads a partial stored by another block of this launch: through L2 only
 * (ld.global.cg), since this SM's L1 may hold a stale copy of the line. */
__device__ __forceinline__ double load_partial(const double *p) { return __ldcg(p); }
__device__ __forceinline__ float load_partial(const float *p) { return __ldcg(p); }
__device__ __forceinline__ unsigned long long load_partial(const unsigned long long *p) { return __ldcg(p); }
__device__ __forceinline__ dd load_partial(const dd *p) {
  return dd{__ldcg(&p->hi), __ldcg(&p->lo)};
}

/* ---- the polled finish: partials that are their own flags ----------------
 * A cheaper single-pass finish than the ticket (leaderboard/PERFORMANCE.md
 * change 15): each work item publishes its partial into a slot of the zeroed
 * counter words with one relaxed 16-byte store (two 8-byte words, each
 * single-copy atomic), no fence and no ticket, and ONE
 * block of the grid (the last one, which the hardware dispatches last) waits
 * for every slot to fill, combines them in the same order as
 * combine_strided, and puts the slots back to zero. A slot is two 64-bit
 * words (room for a dd); each word holds the bitwise NOT of its value's bits,
 * so no value stores 0: the only double whose bits are all ones is a NaN,
 * and every double NaN is stored as the canonical one (a float's 32 bits
 * leave the word's high half all ones). The waiting block needs
 * every other block of the grid to make progress: the blocks it waits on
 * were dispatched before it (the same premise as CUB's decoupled
 * look-back), and it holds one block slot of the device's many.
 * Integer accumulators have no spare bit pattern: they keep the ticket. */
template <typename acc_t> struct pollable : std::false_type {};
template <> struct pollable<double> : std::true_type {};
template <> struct pollable<float> : std::true_type {};
template <> struct pollable<dd> : std::true_type {};

struct slot_words {
  unsigned long long w0, w1;
};
/* A slot's size in 64-bit words (its stride in the slots) and in the uint32
 * counter words a plan counts. */
constexpr int64_t kSlotU64 = sizeof(slot_words) / sizeof(unsigned long long);
constexpr int64_t kSlotCounterWords = sizeof(slot_words) / sizeof(unsigned int);

__device__ __forceinline__ unsigned long long slot_word(double v) {
  return ~(unsigned long long)(v != v ? 0x7fffffffffffffffll : __double_as_longlong(v));
}
__device__ __forceinline__ unsigned long long slot_word(float v) {
  return ~(unsigned long long)__float_as_uint(v); /* the high word is all ones */
}
__device__ __forceinline__ void store_slot(unsigned long long *slot, unsigned long long w0, unsigned long long w1) {
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(w0), "l"(w1) : "memory");
}
/* Loads a slot: both words for a dd, else the first (the second is then
 * taken as all ones, which is what an unused second word holds). */
template <typename acc_t>
__device__ __forceinline__ slot_words load_slot(const unsigned long long *slot) {
  slot_words w;
  if constexpr (sizeof(acc_t) > 8) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.w0), "=l"(w.w1) : "l"(slot) : "memory");
  } else {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w.w0) : "l"(slot) : "memory");
    w.w1 = ~0ull;
  }
  return w;
}

/* Publishes a work item's partial into its slot. */
__device__ __forceinline__ void publish_slot(unsigned long long *slots, int64_t item, double v) {
  store_slot(slots + kSlotU64 * item, slot_word(v), ~0ull);
}
__device__ __forceinline__ void publish_slot(unsigned long long *slots, int64_t item, float v) {
  store_slot(slots + kSlotU64 * item, slot_word(v), ~0ull);
}
__device__ __forceinline__ void publish_slot(unsigned long long *slots, int64_t item, dd v) {
  store_slot(slots + kSlotU64 * item, slot_word(v.hi), slot_word(v.lo));
}

/* Each word is single-copy atomic on its own, so a slot is full when both
 * of its words are nonzero (the second word is all ones when unused). */
__device__ __forceinline__ bool slot_full(slot_words w) { return w.w0 != 0 && w.w1 != 0; }
__device__ __forceinline__ void slot_value(slot_words w, double *v) { *v = __longlong_as_double((long long)~w.w0); }
__device__ __forceinline__ void slot_value(slot_words w, float *v) { *v = __uint_as_float((unsigned)~w.w0); }
__device__ __forceinline__ void slot_value(slot_words w, dd *v) {
  *v = dd{__longlong_as_double((long long)~w.w0), __longlong_as_double((long long)~w.w1)};
}

/* combine_strided over the slots of items first, first + stride, ... <
 * count: the same order, so the same bits, as the ticket's finish. Waits
 * for each slot to fill, and empties it. */
template <typename P, int kBatch = 8>
__device__ __forceinline__ typename P::acc_t combine_polled(typename P::acc_t r, unsigned long long *slots,
                                                            int64_t first, int64_t count, int64_t stride) {
  for (int64_t k0 = first; k0 < count; k0 += kBatch * stride) {
    slot_words w[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int64_t k = k0 + b * stride;
      if (k < count) w[b] = load_slot<typename P::acc_t>(slots + kSlotU64 * k);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int64_t k = k0 + b * stride;
      if (k >= count) continue;
      while (!slot_full(w[b])) w[b] = load_slot<typename P::acc_t>(slots + kSlotU64 * k);
      store_slot(slots + kSlotU64 * k, 0ull, 0ull);
      typename P::acc_t v;
      slot_value(w[b], &v);
      r = P::combine(r, v);
    }
  }
  return r;
}

/* Combines partials[k] for k = first, first + stride, ... < count into r,
 * in that order (the order is what the bits depend on), with kBatch loads in
 * flight at a time instead of one dependent L2 round trip per partial. */
template <typename P, int kBatch = 8>
__device__ __forceinline__ typename P::acc_t combine_strided(typename P::acc_t r,
                                                             const typename P::acc_t *partials,
                                                             int64_t first, int64_t count, int64_t stride) {
  for (int64_t k0 = first; k0 < count; k0 += kBatch * stride) {
    typename P::acc_t v[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int64_t k = k0 + b * stride;
      if (k < count) v[b] = load_partial(&partials[k]);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (k0 + b * stride < count) r = P::combine(r, v[b]);
  }
  return r;
}

/* Launch error check shared by the launchers. */
inline redux_status launch_status() {
  return cudaGetLastError() == cudaSuccess ? REDUX_OK : REDUX_ERR_CUDA;
}

}  // namespace redux

#endif /* REDUX_CUDA_COMMON_CUH */
