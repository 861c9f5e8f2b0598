/* Maxima and minima on CUDA (redux.h, redux_cuda_extreme).
 *
 * Every comparison is between integer keys (redux/extremes.h), so any tree
 * gives the same bits and the plan is free to follow the GPU:
 *   rows (inner 1)   a group of WIDTH lanes (a warp, or the block for
 *                    segments over kWarpRowMaxBytes) per segment of a row,
 *                    vector loads in order (lane_fold_range), the group
 *                    combined by shuffles (and shared memory);
 *   columns          a block per 32 groups of adjacent columns (16 bytes of
 *                    them, or one column where rows are not 16-byte
 *                    aligned) of a segment, a lane per group, the warps
 *                    taking every 8th row, combined in shared memory.
 * REDUX_MAX_ABS / MIN_ABS compare the elements' magnitudes (an infinity
 * norm in one read).
 * Rows too few to fill the GPU are cut into segments: one launch writes the
 * segments' extremes to the workspace, a second reduces them.
 */
#include <type_traits>

#include "grid.cuh"
#include "redux/extremes.h"
#include "rows.cuh"

namespace redux {
namespace {

/* An element's key and back (MAX: a NaN's key is the largest, else the smallest). */
template <typename T> struct keys;
template <> struct keys<float> {
  using K = int32_t;
  template <bool MAX> static __device__ __forceinline__ K of(float v) {
    return redux_key_f32(__float_as_uint(v), MAX ? INT32_MAX : INT32_MIN);
  }
  template <bool MAX> static __device__ __forceinline__ float back(K k) {
    return __uint_as_float(redux_unkey_f32(k, MAX ? INT32_MAX : INT32_MIN));
  }
};
template <> struct keys<double> {
  using K = long long;
  template <bool MAX> static __device__ __forceinline__ K of(double v) {
    return redux_key_f64((uint64_t)__double_as_longlong(v), MAX ? INT64_MAX : INT64_MIN);
  }
  template <bool MAX> static __device__ __forceinline__ double back(K k) {
    return __longlong_as_double((long long)redux_unkey_f64(k, MAX ? INT64_MAX : INT64_MIN));
  }
};
template <> struct keys<__half> {
  using K = int32_t;
  template <bool MAX> static __device__ __forceinline__ K of(__half v) {
    return redux_key_f16(__half_as_ushort(v), MAX ? INT32_MAX : INT32_MIN);
  }
  template <bool MAX> static __device__ __forceinline__ __half back(K k) {
    return __ushort_as_half(redux_unkey_f16(k, MAX ? INT32_MAX : INT32_MIN));
  }
};
template <> struct keys<__nv_bfloat16> {
  using K = int32_t;
  template <bool MAX> static __device__ __forceinline__ K of(__nv_bfloat16 v) {
    return redux_key_bf16(__bfloat16_as_ushort(v), MAX ? INT32_MAX : INT32_MIN);
  }
  template <bool MAX> static __device__ __forceinline__ __nv_bfloat16 back(K k) {
    return __ushort_as_bfloat16(redux_unkey_bf16(k, MAX ? INT32_MAX : INT32_MIN));
  }
};
template <> struct keys<int64_t> {
  using K = long long;
  template <bool MAX> static __device__ __forceinline__ K of(int64_t v) { return (K)v; }
  template <bool MAX> static __device__ __forceinline__ int64_t back(K k) { return (int64_t)k; }
};

/* |v| by its bits (a NaN stays a NaN). */
__device__ __forceinline__ float magnitude(float v) { return __uint_as_float(__float_as_uint(v) & 0x7fffffffu); }
__device__ __forceinline__ double magnitude(double v) {
  return __longlong_as_double(__double_as_longlong(v) & 0x7fffffffffffffffll);
}
__device__ __forceinline__ __half magnitude(__half v) { return __ushort_as_half(__half_as_ushort(v) & 0x7fffu); }
__device__ __forceinline__ __nv_bfloat16 magnitude(__nv_bfloat16 v) {
  return __ushort_as_bfloat16(__bfloat16_as_ushort(v) & 0x7fffu);
}

/* Which way op OP (a redux_extreme) picks, and the key it compares an element by. */
template <int OP> constexpr bool is_max = OP == REDUX_MAX || OP == REDUX_MAX_ABS;
template <typename T, int OP> __device__ __forceinline__ typename keys<T>::K key_for(T v) {
  if constexpr (OP == REDUX_MAX_ABS || OP == REDUX_MIN_ABS) return keys<T>::template of<is_max<OP>>(magnitude(v));
  else return keys<T>::template of<is_max<OP>>(v);
}

template <bool MAX, typename K> __device__ __forceinline__ K pick(K a, K b) {
  return MAX ? (a > b ? a : b) : (a < b ? a : b);
}
/* The key no element beats. */
template <bool MAX, typename K> __device__ __forceinline__ K ident() {
  if constexpr (sizeof(K) == 4) return MAX ? INT32_MIN : INT32_MAX;
  else return MAX ? INT64_MIN : INT64_MAX;
}

/* The group's extreme, to every lane of it; all threads of the block call it. */
template <bool MAX, int WIDTH, typename K> __device__ __forceinline__ K group_pick(K v, K *scratch) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = pick<MAX>(v, __shfl_xor_sync(0xffffffffu, v, off));
  if constexpr (WIDTH == 32) {
    return v;
  } else {
    static_assert(WIDTH == kBlock, "a segment is read by a warp or by the block");
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
#pragma unroll
    for (int w = 1; w < kBlock / 32; ++w) v = pick<MAX>(v, scratch[w]);
    __syncthreads(); /* read by all before the next segment writes */
    return v;
  }
}

constexpr int kExtremeUnroll = 4; /* loads in flight per lane */

template <typename T, int OP, int WIDTH, bool ALIGNED, bool STREAM>
__global__ void __launch_bounds__(kBlock)
extreme_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n, int64_t seg_len,
                    int64_t segs) {
  using K = typename keys<T>::K;
  constexpr bool MAX = is_max<OP>;
  __shared__ K scratch[kBlock / 32];
  for_each_row<WIDTH>(rows * segs, [&](int64_t item, bool live, int lane) {
    K k = ident<MAX, K>();
    if (live) {
      const int64_t row = item / segs, begin = (item - row * segs) * seg_len;
      const int64_t end = begin + seg_len < n ? begin + seg_len : n;
      lane_fold_range<vec_of<T>::value, kExtremeUnroll, ALIGNED, STREAM>(
          x + row * n, begin, end, lane, WIDTH, [&](T v) { k = pick<MAX>(k, key_for<T, OP>(v)); });
    }
    k = group_pick<MAX, WIDTH>(k, scratch);
    if (live && lane == 0) y[item] = keys<T>::template back<MAX>(k);
  });
}

/* Columns: a block per tile of 32 column groups of a segment (a group is
 * VEC adjacent columns: 16 bytes where every row's columns start 16-byte
 * aligned, else 1); lane l of every warp owns group l of the tile, warp w
 * rows w, w + kWarps, ... of the segment, UNROLL rows of loads in flight;
 * the warps' keys are combined through shared memory. */
constexpr int kWarps = kBlock / 32;

template <typename T, int OP, int VEC, bool ALIGNED>
__global__ void __launch_bounds__(kBlock)
extreme_cols_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t outer, int64_t n, int64_t inner,
                    int64_t seg_len, int64_t segs) {
  using K = typename keys<T>::K;
  constexpr bool MAX = is_max<OP>;
  constexpr int UNROLL = VEC == 1 ? 8 : 4;
  __shared__ K shared[kWarps][32 * VEC];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t groups = inner / VEC, tiles = ceil_div(groups, 32), items = outer * segs * tiles;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t tile = item % tiles, t = item / tiles, s = t % segs, o = t / segs;
    const int64_t g = tile * 32 + lane, begin = s * seg_len;
    const int64_t m = begin + seg_len < n ? seg_len : n - begin;
    K acc[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) acc[e] = ident<MAX, K>();
    if (g < groups && warp < m)
      for_each_strided_vec<VEC, UNROLL, ALIGNED, false>(
          x + (o * n + begin + warp) * inner + g * VEC, (m - warp + kWarps - 1) / kWarps, inner * kWarps,
          [&](const T(&v)[VEC]) {
#pragma unroll
            for (int e = 0; e < VEC; ++e) acc[e] = pick<MAX>(acc[e], key_for<T, OP>(v[e]));
          });
#pragma unroll
    for (int e = 0; e < VEC; ++e) shared[warp][lane * VEC + e] = acc[e];
    __syncthreads();
    if (warp == 0 && g < groups) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        K k = shared[0][lane * VEC + e];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) k = pick<MAX>(k, shared[w][lane * VEC + e]);
        y[(o * segs + s) * inner + g * VEC + e] = keys<T>::template back<MAX>(k);
      }
    }
    __syncthreads(); /* read by warp 0 before the next item writes */
  }
}

/* Inputs up to this size are read in one launch, whatever their shape. */
constexpr int64_t kOnePassBytes = (int64_t)256 << 10;
/* Rows up to this size are a block's each in one launch once every SM has
 * one (resident blocks / kRowsPerSm: 8 blocks of kBlock fit an SM). */
constexpr int64_t kOneBlockRowBytes = (int64_t)256 << 10;
constexpr int64_t kRowsPerSm = 8;

/* How a problem is cut: segs segments of seg_len along n per slice. */
struct ExtremePlan {
  int64_t seg_len, segs;
};

/* Blocks the GPU holds at once (of a kBlock kernel), the measure of "enough work". */
inline int64_t resident_blocks() {
  return device_fit(reinterpret_cast<const void *>(extreme_cols_kernel<float, REDUX_MAX, 1, false>), 0);
}

ExtremePlan plan_extreme(redux_shape s, redux_dtype t) {
  const int64_t size = redux_dtype_size(t), blocks = resident_blocks();
  if (s.inner == 1) {
    /* rows: a warp per row fills the GPU at 8 rows per resident block;
     * fewer, longer rows are cut into segments of at least 8 KB, unless the
     * whole input is small enough that a second launch costs more */
    const int64_t want = blocks * (kBlock / 32);
    if (s.outer >= want || s.n * size <= 16384 || s.outer * s.n * size <= kOnePassBytes) return {s.n, 1};
    if (s.n * size <= kOneBlockRowBytes && s.outer * kRowsPerSm >= blocks) return {s.n, 1};
    const int64_t quantum = 2048; /* elements: keeps segment starts 16-byte aligned */
    int64_t seg = ceil_div(s.n, ceil_div(want, s.outer));
    const int64_t least = 8192 / size;
    seg = ceil_div(seg < least ? least : seg, quantum) * quantum;
    return seg >= s.n ? ExtremePlan{s.n, 1} : ExtremePlan{seg, ceil_div(s.n, seg)};
  }
  /* columns: a block per tile of 32 column groups; cut n where the tiles
   * alone leave the GPU idle, keeping at least 4 rows a warp */
  const int64_t vec = 16 / size;
  const int64_t tiles = s.outer * ceil_div(s.inner % vec == 0 ? s.inner / vec : s.inner, 32);
  if (tiles >= blocks || s.n < 64) return {s.n, 1};
  int64_t segs = ceil_div(blocks, tiles);
  if (segs > s.n / (4 * kWarps)) segs = s.n / (4 * kWarps);
  const int64_t seg = ceil_div(s.n, segs);
  return {seg, ceil_div(s.n, seg)};
}

template <typename T, int OP, int WIDTH>
redux_status launch_rows_of(const T *x, T *y, int64_t rows, int64_t n, int64_t seg_len, int64_t segs, int grid,
                            cudaStream_t stream) {
  const bool aligned = ((uintptr_t)x % 16 == 0) && ((n * (int64_t)sizeof(T)) % 16 == 0) &&
                       ((seg_len * (int64_t)sizeof(T)) % 16 == 0);
  const bool hint = stream_hint(rows * n * (int64_t)sizeof(T));
  auto kernel = aligned ? (hint ? extreme_rows_kernel<T, OP, WIDTH, true, true>
                                : extreme_rows_kernel<T, OP, WIDTH, true, false>)
                        : (hint ? extreme_rows_kernel<T, OP, WIDTH, false, true>
                                : extreme_rows_kernel<T, OP, WIDTH, false, false>);
  const int g = grid_for(kernel, blocks_for_rows<WIDTH>(rows * segs), grid);
  kernel<<<g, kBlock, 0, stream>>>(x, y, rows, n, seg_len, segs);
  return launch_status();
}

template <typename T, int OP>
redux_status launch_pass(const T *x, T *y, redux_shape s, ExtremePlan p, int grid, cudaStream_t stream) {
  if (s.inner == 1) {
    if (p.seg_len * (int64_t)sizeof(T) <= kWarpRowMaxBytes)
      return launch_rows_of<T, OP, 32>(x, y, s.outer, s.n, p.seg_len, p.segs, grid, stream);
    return launch_rows_of<T, OP, kBlock>(x, y, s.outer, s.n, p.seg_len, p.segs, grid, stream);
  }
  constexpr int VEC = vec_of<T>::value;
  const bool vectors = (uintptr_t)x % 16 == 0 && s.inner % VEC == 0;
  auto kernel = vectors ? extreme_cols_kernel<T, OP, VEC, true> : extreme_cols_kernel<T, OP, 1, false>;
  const int g = grid_for(kernel, s.outer * p.segs * ceil_div(vectors ? s.inner / VEC : s.inner, 32), grid);
  kernel<<<g, kBlock, 0, stream>>>(x, y, s.outer, s.n, s.inner, p.seg_len, p.segs);
  return launch_status();
}

/* The pass(es) of op OP; the second reduces the segments' extremes, which
 * for the _ABS ops are magnitudes already, by the plain op. */
template <typename T, int OP>
redux_status run(const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s, ExtremePlan p, int grid,
                 cudaStream_t stream) {
  const T *in = static_cast<const T *>(x);
  if (p.segs == 1) return launch_pass<T, OP>(in, static_cast<T *>(y), s, p, grid, stream);
  const size_t need = (size_t)(s.outer * p.segs * s.inner) * sizeof(T);
  if (ws == nullptr || ws_bytes < need) return REDUX_ERR_SHAPE;
  T *parts = static_cast<T *>(ws);
  redux_status st = launch_pass<T, OP>(in, parts, s, p, grid, stream);
  if (st != REDUX_OK) return st;
  const redux_shape second{s.outer, p.segs, s.inner};
  constexpr int PLAIN = is_max<OP> ? REDUX_MAX : REDUX_MIN;
  return launch_pass<T, PLAIN>(parts, static_cast<T *>(y), second, ExtremePlan{p.segs, 1}, grid, stream);
}

template <typename T>
redux_status run_op(redux_extreme op, const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s,
                    ExtremePlan p, int grid, cudaStream_t stream) {
  switch (op) {
    case REDUX_MAX: return run<T, REDUX_MAX>(x, y, ws, ws_bytes, s, p, grid, stream);
    case REDUX_MIN: return run<T, REDUX_MIN>(x, y, ws, ws_bytes, s, p, grid, stream);
    case REDUX_MAX_ABS:
    case REDUX_MIN_ABS:
      if constexpr (std::is_same_v<T, int64_t>) {
        return REDUX_ERR_DTYPE; /* |x| of integers: not offered */
      } else {
        return op == REDUX_MAX_ABS ? run<T, REDUX_MAX_ABS>(x, y, ws, ws_bytes, s, p, grid, stream)
                                   : run<T, REDUX_MIN_ABS>(x, y, ws, ws_bytes, s, p, grid, stream);
      }
  }
  return REDUX_ERR_DTYPE;
}

bool valid(redux_shape s) { return s.outer >= 1 && s.n >= 1 && s.inner >= 1; }

}  // namespace
}  // namespace redux

using namespace redux;

extern "C" size_t redux_cuda_extreme_workspace_bytes(redux_shape shape, redux_dtype t) {
  if (!valid(shape) || redux_dtype_size(t) == 0) return 0;
  const ExtremePlan p = plan_extreme(shape, t);
  if (p.segs == 1) return 0;
  const size_t bytes = (size_t)(shape.outer * p.segs * shape.inner) * (size_t)redux_dtype_size(t);
  return (bytes + 15) / 16 * 16;
}

extern "C" redux_status redux_cuda_extreme(redux_extreme op, const void *x, void *y, void *workspace,
                                           size_t workspace_bytes, redux_shape shape, redux_dtype t, int grid,
                                           void *stream) {
  if (!valid(shape)) return REDUX_ERR_SHAPE;
  if (op != REDUX_MAX && op != REDUX_MIN && op != REDUX_MAX_ABS && op != REDUX_MIN_ABS) return REDUX_ERR_DTYPE;
  const ExtremePlan p = plan_extreme(shape, t);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (t) {
    case REDUX_F32: return run_op<float>(op, x, y, workspace, workspace_bytes, shape, p, grid, st);
    case REDUX_F64: return run_op<double>(op, x, y, workspace, workspace_bytes, shape, p, grid, st);
    case REDUX_F16: return run_op<__half>(op, x, y, workspace, workspace_bytes, shape, p, grid, st);
    case REDUX_BF16: return run_op<__nv_bfloat16>(op, x, y, workspace, workspace_bytes, shape, p, grid, st);
    case REDUX_I64: return run_op<int64_t>(op, x, y, workspace, workspace_bytes, shape, p, grid, st);
  }
  return REDUX_ERR_DTYPE;
}
