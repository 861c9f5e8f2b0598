/* The single-pass finishes of the CUDA families (internal to csrc/cuda):
 *   last_block_ticket  a block publishes its partial(s) and learns whether
 *                      it is the last of its segment (integer atomics only);
 *   combine_strided    the finishing block adds partials in a fixed order;
 *   polled slots       partials that are their own flags: no fence, no
 *                      ticket; one block waits for every slot and combines
 *                      them in the same order (combine_polled).
 * The cluster finish of column sums lives with its kernel (sum_cols.cu). */
#ifndef REDUX_CUDA_FINISH_CUH
#define REDUX_CUDA_FINISH_CUH

#include <type_traits>

#include "common.cuh"

namespace redux {

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
 * A cheaper single-pass finish than the ticket (no fence, no atomic: 0.6 to
 * 0.9 us faster on the H200 from 6.5 to 52 MB): each work item publishes its
 * partial into a slot of the zeroed counter words with one relaxed 16-byte
 * store (two 8-byte words, each single-copy atomic), and ONE block of the
 * grid (the last one, which the hardware dispatches last) waits
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

}  // namespace redux

#endif /* REDUX_CUDA_FINISH_CUH */
