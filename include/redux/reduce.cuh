/* redux CUDA primitives: accumulators, loads, warp/block reductions.
 *
 * Contents
 *   acc policies   sum_policy<In, Out>: accumulator type, zero, add(element),
 *                  combine(acc, acc), finish -> Out. The accumulator follows
 *                  the OUTPUT dtype (see redux.h).
 *   reductions     reduce_policy<In, Out, R>: the policy the trees take as
 *                  their parameter: sum_policy's identity and combine, each
 *                  element mapped by R (redux_reduction) before it is
 *                  added, and finish(acc, n) (the mean divides by n);
 *                  R = REDUX_SUM_OF_VALUES is the sum.
 *   loads          load_vec<In, VEC, ALIGNED, STREAM>: VEC consecutive
 *                  elements, one 16-byte load when ALIGNED, scalar loads
 *                  otherwise; the elements come back in the same order
 *                  either way, so the arithmetic (and the bits) never depend
 *                  on alignment. STREAM: evict-first cache hint.
 *   warp_reduce    warp_reduce_sum<P>(acc, width): result valid in the first
 *                  lane of each group of `width` lanes.
 *   lane_fold      lane_fold_range<VEC, UNROLL, ALIGNED, STREAM>(..., f): calls f on
 *                  one lane's share of a contiguous range, in order (the
 *                  reduction as a parameter: lane_sum_range is its sum).
 *   lane_sum       lane_sum_range<P, VEC, UNROLL, ALIGNED, STREAM>: one lane's share of
 *                  a contiguous range read by `width` lanes in steps of
 *                  width * VEC * UNROLL elements; lane l takes vectors
 *                  l, l + width, ... of each step, in that order.
 *                  lane_sum_tiles: one lane's share of every stride-th tile
 *                  of width vectors (a shape-fixed grid-stride read).
 *                  lane_sum_column_vecs: VEC adjacent columns, one
 *                  accumulator each, down m rows `step` elements apart.
 *                  Both walk for_each_strided_vec: a group of loads in
 *                  flight before the first add.
 *   block_reduce   block_reduce_sum<P, BLOCK>(acc, scratch): result valid in
 *                  thread 0. Fixed tree: warp shuffles, then warp 0 combines
 *                  the warps' results in warp order.
 * Every reduction here is a fixed tree over thread indices: determinism is a
 * property of these functions, not of luck.
 */
#ifndef REDUX_REDUCE_CUH
#define REDUX_REDUCE_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "redux/redux.h"

namespace redux {

/* Compensated fp64 accumulator: value = hi + lo, |lo| <= ulp(hi)/2. */
struct dd {
  double hi;
  double lo;
};

__device__ __forceinline__ dd dd_add(dd a, double x) {
  /* Neumaier: exact error of hi + x, kept in lo. */
  double s = a.hi + x;
  double bp = s - a.hi;
  double err = (a.hi - (s - bp)) + (x - bp);
  return dd{s, a.lo + err};
}

__device__ __forceinline__ dd dd_combine(dd a, dd b) {
  double s = a.hi + b.hi;
  double bp = s - a.hi;
  double err = (a.hi - (s - bp)) + (b.hi - bp);
  return dd{s, (a.lo + b.lo) + err};
}

template <typename T> __device__ __forceinline__ float to_float(T v);
template <> __device__ __forceinline__ float to_float<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

/* Accumulator policy by output type. In is the element type read. */
template <typename In, typename Out> struct sum_policy;

/* float32 out: fp64 accumulator. */
template <typename In> struct sum_policy<In, float> {
  using acc_t = double;
  static __device__ __forceinline__ acc_t zero() { return 0.0; }
  static __device__ __forceinline__ acc_t add(acc_t a, In x) { return a + (double)to_float<In>(x); }
  static __device__ __forceinline__ double widen(In x) { return (double)to_float<In>(x); }
  static __device__ __forceinline__ acc_t add_wide(acc_t a, double v) { return a + v; }
  static __device__ __forceinline__ double wide_total(acc_t a) { return a; }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
  static __device__ __forceinline__ float finish(acc_t a) { return (float)a; }
};

/* float16 out: fp32 accumulator. */
template <> struct sum_policy<__half, __half> {
  using acc_t = float;
  static __device__ __forceinline__ acc_t zero() { return 0.0f; }
  static __device__ __forceinline__ acc_t add(acc_t a, __half x) { return a + __half2float(x); }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
  static __device__ __forceinline__ __half finish(acc_t a) { return __float2half_rn(a); }
};

/* bfloat16 out: fp32 accumulator. */
template <> struct sum_policy<__nv_bfloat16, __nv_bfloat16> {
  using acc_t = float;
  static __device__ __forceinline__ acc_t zero() { return 0.0f; }
  static __device__ __forceinline__ acc_t add(acc_t a, __nv_bfloat16 x) { return a + __bfloat162float(x); }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
  static __device__ __forceinline__ __nv_bfloat16 finish(acc_t a) { return __float2bfloat16_rn(a); }
};

/* float64 out of float32 (a float32 mean's sum): plain fp64, the float32-out
 * sum's accumulator unrounded; the same speed as that sum. */
template <> struct sum_policy<float, double> {
  using acc_t = double;
  static __device__ __forceinline__ acc_t zero() { return 0.0; }
  static __device__ __forceinline__ acc_t add(acc_t a, float x) { return a + (double)x; }
  static __device__ __forceinline__ double widen(float x) { return (double)x; }
  static __device__ __forceinline__ acc_t add_wide(acc_t a, double v) { return a + v; }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
  static __device__ __forceinline__ double finish(acc_t a) { return a; }
};

/* float64 out of float64: compensated fp64. */
template <> struct sum_policy<double, double> {
  using acc_t = dd;
  static __device__ __forceinline__ acc_t zero() { return dd{0.0, 0.0}; }
  static __device__ __forceinline__ acc_t add(acc_t a, double x) { return dd_add(a, x); }
  static __device__ __forceinline__ double widen(double x) { return x; }
  static __device__ __forceinline__ acc_t add_wide(acc_t a, double v) { return dd_add(a, v); }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return dd_combine(a, b); }
  /* An inf or NaN element makes hi non-finite and lo NaN (inf - inf): then
   * hi alone is torch's answer. */
  static __device__ __forceinline__ double finish(acc_t a) { return isfinite(a.hi) ? a.hi + a.lo : a.hi; }
  static __device__ __forceinline__ double wide_total(acc_t a) { return finish(a); }
};

/* int64 out: wrapping int64 (unsigned arithmetic, so overflow is defined). */
template <> struct sum_policy<int64_t, int64_t> {
  using acc_t = unsigned long long;
  static __device__ __forceinline__ acc_t zero() { return 0ull; }
  static __device__ __forceinline__ acc_t add(acc_t a, int64_t x) { return a + (unsigned long long)x; }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return a + b; }
  static __device__ __forceinline__ int64_t finish(acc_t a) { return (int64_t)a; }
};

/* What reduction R adds of an element already widened to the accumulator's
 * precision: for the mapped pairs (redux.h) fp64, where |x| and x * x of a
 * float32, float16 or bfloat16 element are exact. */
template <redux_reduction R> __device__ __forceinline__ double mapped(double v) {
  if constexpr (R == REDUX_SUM_OF_ABS) return fabs(v);
  else if constexpr (R == REDUX_SUM_OF_SQUARES) return __dmul_rn(v, v); /* rounded alone: never fused into the add */
  else return v;
}

/* The policy the trees are instantiated with: reduction R of In elements
 * into Out. The sum (and the mean) add with sum_policy's own add, so the
 * sum's code and bits are unchanged; a mapped reduction adds
 * mapped<R>(widen(x)) (sum_policy's add is add_wide(widen(x)) for the
 * mapped pairs). Identity and combine are the sum's, so are the partials
 * and every tree above the lanes; finish is the sum's but for the mean. */
template <typename In, typename Out, redux_reduction R = REDUX_SUM_OF_VALUES>
struct reduce_policy : sum_policy<In, Out> {
  using base = sum_policy<In, Out>;
  using acc_t = typename base::acc_t;
  using in_t = In;
  using out_t = Out;
  static constexpr redux_reduction reduction = R;
  static __device__ __forceinline__ acc_t add(acc_t a, In x) {
    if constexpr (R == REDUX_SUM_OF_VALUES || R == REDUX_MEAN_OF_VALUES) return base::add(a, x);
    else return base::add_wide(a, mapped<R>(base::widen(x)));
  }
  /* The output of a reduction of n elements: the sum's finish, or for the
   * mean the unrounded fp64 sum times the fp64 reciprocal of n, rounded
   * once to Out (torch's division by a scalar on CUDA, as redux.mean's
   * composite computes it: the same bits). */
  static __device__ __forceinline__ Out finish(acc_t a, int64_t n) {
    if constexpr (R == REDUX_MEAN_OF_VALUES) return (Out)(base::wide_total(a) * (1.0 / (double)n));
    else return base::finish(a);
  }
};

/* ---- shuffles for every accumulator type ---- */
__device__ __forceinline__ double shfl_down(double v, int off, int width) {
  return __shfl_down_sync(0xffffffffu, v, off, width);
}
__device__ __forceinline__ float shfl_down(float v, int off, int width) {
  return __shfl_down_sync(0xffffffffu, v, off, width);
}
__device__ __forceinline__ unsigned long long shfl_down(unsigned long long v, int off, int width) {
  return __shfl_down_sync(0xffffffffu, v, off, width);
}
__device__ __forceinline__ dd shfl_down(dd v, int off, int width) {
  return dd{__shfl_down_sync(0xffffffffu, v.hi, off, width),
            __shfl_down_sync(0xffffffffu, v.lo, off, width)};
}

/* Reduces across groups of `width` lanes (a power of two <= 32). Valid in
 * the first lane of each group. All 32 lanes must call it. */
template <typename P>
__device__ __forceinline__ typename P::acc_t warp_reduce_sum(typename P::acc_t v, int width) {
  for (int off = width / 2; off > 0; off /= 2)
    v = P::combine(v, shfl_down(v, off, width));
  return v;
}

/* Reduces over a block of BLOCK threads. Valid in thread 0. `scratch` holds
 * BLOCK/32 accumulators. Ends with a barrier, so scratch may be reused
 * (TRAILING_BARRIER false: a block that never reuses scratch, or puts its
 * own barrier before it, lets warps 1.. leave without waiting for warp 0).
 * Warp 0 combines the warps' results with a shuffle tree only as wide as
 * the warp count (rounded up to a power of two: 3 levels for 8 warps, not
 * 5). Lane 0's result is the one the full 32-lane tree gives: the levels it
 * skips would only add P::zero() from lanes >= WIDTH to lanes 0..WIDTH-1,
 * exact for every accumulator here (an accumulator starts at +0 and never
 * becomes -0), and the remaining levels pair the same lanes. Two fewer
 * dependent shuffle levels on the finishing block's critical path. */
template <int WARPS>
__host__ __device__ constexpr int warp_tree_width() {
  int w = 1;
  while (w < WARPS) w *= 2;
  return w;
}
template <typename P, int BLOCK, bool TRAILING_BARRIER = true>
__device__ __forceinline__ typename P::acc_t block_reduce_sum(typename P::acc_t v,
                                                              typename P::acc_t *scratch) {
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be whole warps");
  constexpr int WARPS = BLOCK / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_reduce_sum<P>(v, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < WARPS ? scratch[lane] : P::zero();
    v = warp_reduce_sum<P>(v, warp_tree_width<WARPS>());
  }
  if (TRAILING_BARRIER) __syncthreads();
  return v;
}

/* ---- loads ---- */
template <typename In> struct vec_of { static constexpr int value = 16 / (int)sizeof(In); };

/* Reads VEC consecutive elements starting at p. ALIGNED: p is 16-byte aligned
 * and VEC * sizeof(In) == 16, so one vector load; STREAM marks it evict-first
 * (ld.global.cs), else it is an ordinary cached load. Measured on the H200:
 * streaming loads read 210 MB faster, ordinary loads 1 GiB. The hint never
 * changes what is read, so never the bits. */
template <typename In, int VEC, bool ALIGNED, bool STREAM>
__device__ __forceinline__ void load_vec(const In *__restrict__ p, In (&out)[VEC]) {
  if constexpr (ALIGNED) {
    static_assert(VEC * sizeof(In) == 16, "aligned loads are 16 bytes");
    uint4 raw;
    if constexpr (STREAM) raw = __ldcs(reinterpret_cast<const uint4 *>(p));
    else raw = *reinterpret_cast<const uint4 *>(p);
    const In *e = reinterpret_cast<const In *>(&raw);
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = e[i];
  } else {
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = p[i];
  }
}

/* Calls add(v) for the VEC elements at p, p + step, ..., p + (m - 1) * step,
 * in that order. The trip count comes first, so each group of UNROLL
 * vectors is loaded before any of it is added: UNROLL loads in flight. (A
 * loop that tests its bound after every vector cannot hoist a load above
 * the test keeps one in flight, and reads far below the DRAM ceiling.) ALIGNED: p is 16-byte aligned and so is step * sizeof(In). */
template <int VEC, int UNROLL, bool ALIGNED, bool STREAM, typename In, typename Add>
__device__ __forceinline__ void for_each_strided_vec(const In *__restrict__ p, int64_t m, int64_t step, Add add) {
  int64_t k = 0;
  for (; k + UNROLL <= m; k += UNROLL, p += UNROLL * step) {
    In v[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) load_vec<In, VEC, ALIGNED, STREAM>(p + u * step, v[u]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) add(v[u]);
  }
  for (; k < m; ++k, p += step) {
    In v[VEC];
    load_vec<In, VEC, ALIGNED, STREAM>(p, v);
    add(v);
  }
}

/* Adds lane `lane`'s elements of tiles first, first + stride, ... of
 * base[0, n) to acc, in that tile order. A tile is `width` vectors of VEC
 * elements; lane l owns vector l of each tile. UNROLL tiles are loaded before
 * they are added (UNROLL loads in flight). The product's chunks call it with
 * stride 1 on their own contiguous run of tiles (sum_chunks.cu); a stride > 1
 * deals tiles round robin. In the partial last tile (n not a multiple of the tile), each
 * lane reads its elements one by one, in the same order. ALIGNED: base is
 * 16-byte aligned. */
template <typename P, int VEC, int UNROLL, bool ALIGNED, bool STREAM, typename In>
__device__ __forceinline__ typename P::acc_t lane_sum_tiles(const In *__restrict__ base, int64_t n, int64_t first,
                                                            int64_t stride, int lane, int width,
                                                            typename P::acc_t acc) {
  const int64_t tile = (int64_t)width * VEC;
  const int64_t whole = n / tile; /* tiles wholly inside [0, n) */
  /* This lane's vector in tile `first`, and the step to the next tile. */
  const In *p = base + first * tile + (int64_t)lane * VEC;
  const int64_t step = stride * tile;
  /* Whole tiles of this chunk: first, first + stride, ... < whole. */
  const int64_t m = first < whole ? (whole - first + stride - 1) / stride : 0;
  for_each_strided_vec<VEC, UNROLL, ALIGNED, STREAM>(p, m, step, [&](const In(&v)[VEC]) {
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc = P::add(acc, v[e]);
  });
  /* The partial last tile, if there is one and it is this chunk's next:
   * element by element, in the same order as a vector's. */
  if (n % tile != 0 && first + m * stride == whole) {
    const int64_t i0 = whole * tile + (int64_t)lane * VEC;
    for (int64_t i = i0; i < i0 + VEC && i < n; ++i) acc = P::add(acc, base[i]);
  }
  return acc;
}

/* Adds VEC adjacent columns lane-wise: acc[e] += p[k * step + e] for
 * k = 0, 1, ..., m - 1, in k order (a column's order of additions never
 * depends on UNROLL or ALIGNED), UNROLL rows in flight. */
template <typename P, int VEC, int UNROLL, bool ALIGNED, bool STREAM, typename In>
__device__ __forceinline__ void lane_sum_column_vecs(const In *__restrict__ p, int64_t m, int64_t step,
                                                     typename P::acc_t (&acc)[VEC]) {
  for_each_strided_vec<VEC, UNROLL, ALIGNED, STREAM>(p, m, step, [&](const In(&v)[VEC]) {
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc[e] = P::add(acc[e], v[e]);
  });
}

/* Calls f(element) for the vector base[i0, i0 + VEC) by one load when it
 * lies before `end`, else for base[i0, end) element by element (nothing if
 * i0 >= end), in element order: the bounds-checked step of a partial range. */
template <int VEC, bool ALIGNED, bool STREAM, typename In, typename F>
__device__ __forceinline__ void fold_vec_or_rest(const In *__restrict__ base, int64_t i0, int64_t end, F &f) {
  if (i0 + VEC <= end) {
    In v[VEC];
    load_vec<In, VEC, ALIGNED, STREAM>(base + i0, v);
#pragma unroll
    for (int e = 0; e < VEC; ++e) f(v[e]);
  } else {
    for (int64_t i = i0; i < end; ++i) f(base[i]);
  }
}

/* Calls f(element) for lane `lane`'s elements of base[begin, end), in
 * order. The range is read by `width` cooperating lanes: each step covers
 * width * VEC * UNROLL elements, lane l loads vectors l, l + width, ...,
 * l + (UNROLL-1) * width of it (UNROLL independent loads in flight), then
 * takes them in order. The last, partial step keeps the same mapping with
 * bounds checks. ALIGNED: every vector of a full step is 16-byte aligned
 * (base + begin aligned); STREAM: evict-first loads (load_vec). The
 * reduction is f's: a sum, a maximum, a sum of a function of the element. */
template <int VEC, int UNROLL, bool ALIGNED, bool STREAM, typename In, typename F>
__device__ __forceinline__ void lane_fold_range(const In *__restrict__ base, int64_t begin, int64_t end, int lane,
                                                int width, F &&f) {
  const int64_t step = (int64_t)width * VEC * UNROLL;
  int64_t t0 = begin;
  for (; t0 + step <= end; t0 += step) {
    In v[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      load_vec<In, VEC, ALIGNED, STREAM>(base + t0 + ((int64_t)u * width + lane) * VEC, v[u]);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
#pragma unroll
      for (int e = 0; e < VEC; ++e) f(v[u][e]);
  }
  if (t0 < end) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      fold_vec_or_rest<VEC, ALIGNED, STREAM>(base, t0 + ((int64_t)u * width + lane) * VEC, end, f);
  }
}

/* Adds the vector base[i0, i0 + VEC) to acc (fold_vec_or_rest). */
template <typename P, int VEC, bool ALIGNED, bool STREAM, typename In>
__device__ __forceinline__ typename P::acc_t add_vec_or_rest(const In *__restrict__ base, int64_t i0, int64_t end,
                                                             typename P::acc_t acc) {
  auto add = [&](In x) { acc = P::add(acc, x); };
  fold_vec_or_rest<VEC, ALIGNED, STREAM>(base, i0, end, add);
  return acc;
}

/* Adds lane `lane`'s elements of base[begin, end) to acc, in the order of
 * lane_fold_range. */
template <typename P, int VEC, int UNROLL, bool ALIGNED, bool STREAM, typename In>
__device__ __forceinline__ typename P::acc_t lane_sum_range(const In *__restrict__ base, int64_t begin,
                                                            int64_t end, int lane, int width,
                                                            typename P::acc_t acc) {
  lane_fold_range<VEC, UNROLL, ALIGNED, STREAM>(base, begin, end, lane, width, [&](In x) { acc = P::add(acc, x); });
  return acc;
}

}  // namespace redux

#endif /* REDUX_REDUCE_CUH */
