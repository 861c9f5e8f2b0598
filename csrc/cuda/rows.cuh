/* What the row kernels share (exp_rows.cu, moment_rows.cu): a group of
 * WIDTH lanes owns a row, a warp (WIDTH 32) for rows of up to
 * kWarpRowMaxBytes, else the whole block. WIDTH depends on (n, dtype)
 * only, so a row's bits depend on its values and n: not the grid, the row's
 * place in the batch or the GPU.
 */
#pragma once

#include "common.cuh"

namespace redux {

constexpr int64_t kWarpRowMaxBytes = 4096;

/* A plain fp64 sum: the accumulator of a float32 sum (reduce.cuh). */
using fp64_policy = sum_policy<float, float>;

/* An fp64 result rounded once to a row kernel's output type (straight from
 * fp64: through float32 would round twice). */
template <typename T> __device__ __forceinline__ T from_double(double v);
template <> __device__ __forceinline__ double from_double<double>(double v) { return v; }
template <> __device__ __forceinline__ float from_double<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ __half from_double<__half>(double v) { return __double2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}

/* Runs body(row, live, lane) for the rows of a [rows, n] problem that this
 * block's groups of WIDTH lanes own: group g takes row blockIdx.x * GROUPS
 * + g, then a grid's worth further on. The loop bound is uniform across the
 * block, so every lane reaches every group_reduce; `live` is false past the
 * last row. */
template <int WIDTH, typename Body>
__device__ __forceinline__ void for_each_row(int64_t rows, Body body) {
  constexpr int GROUPS = kBlock / WIDTH;
  const int lane = threadIdx.x % WIDTH;
  const int64_t group = threadIdx.x / WIDTH;
  for (int64_t row0 = (int64_t)blockIdx.x * GROUPS; row0 < rows; row0 += (int64_t)gridDim.x * GROUPS)
    body(row0 + group, row0 + group < rows, lane);
}

/* Where a kernel's rows lie in x, a [rows, n] array (redux.h, long rows):
 * kernel row i is piece i % pieces of x's row i / pieces, `piece` elements
 * long, the last piece of a row shorter where piece does not divide n.
 * Whole rows are one piece of n (whole_rows). */
struct row_span {
  int64_t n, piece, pieces;
  __host__ __device__ __forceinline__ int64_t piece_length(int64_t j) const {
    const int64_t left = n - j * piece;
    return left < piece ? left : piece;
  }
  __device__ __forceinline__ int64_t start(int64_t i) const {
    return pieces == 1 ? i * n : (i / pieces) * n + (i % pieces) * piece;
  }
  __device__ __forceinline__ int64_t length(int64_t i) const { return pieces == 1 ? n : piece_length(i % pieces); }
};
__host__ __forceinline__ row_span whole_rows(int64_t n) { return row_span{n, n, 1}; }
__host__ __forceinline__ row_span row_pieces(int64_t n) { return row_span{n, redux_row_piece(n), redux_row_pieces(n)}; }

/* A combine of a row's pieces is a warp's up to this many pieces, else the
 * block's: a function of n alone. */
constexpr int64_t kWarpCombineMaxPieces = 512;

/* The blocks that give every row of `rows` a group of WIDTH lanes. */
template <int WIDTH> __host__ __forceinline__ int64_t blocks_for_rows(int64_t rows) {
  return ceil_div(rows, kBlock / WIDTH);
}

/* P's reduction of v over the row's WIDTH lanes by the fixed shuffle / block
 * tree, returned to every lane of the group. All threads of the block call it. */
template <typename P, int WIDTH>
__device__ __forceinline__ typename P::acc_t group_reduce(typename P::acc_t v, typename P::acc_t *scratch,
                                                          typename P::acc_t *shared) {
  if constexpr (WIDTH == 32) {
    v = warp_reduce_sum<P>(v, 32);
    return __shfl_sync(0xffffffffu, v, 0, 32);
  } else {
    static_assert(WIDTH == kBlock, "a row is read by a warp or by the block");
    v = block_reduce_sum<P, kBlock>(v, scratch);
    if (threadIdx.x == 0) *shared = v;
    __syncthreads();
    v = *shared;
    __syncthreads();  /* every thread has read it before the next row writes it */
    return v;
  }
}

/* A row the kernels read from memory once: each lane holds its vectors
 * l, l + WIDTH, ... (at most kCacheVecs of them) in registers, and every
 * pass takes the elements from there in lane_fold_range's order, so the
 * bits are those of reading the row again. For 16-byte aligned rows of whole
 * vectors (row_cache_fits). */
constexpr int kCacheVecs = 8;

/* Whether rows of n elements of T from x may be read as 16-byte vectors. */
template <typename T> __host__ __device__ __forceinline__ bool rows_aligned(const void *x, int64_t n) {
  return ((uintptr_t)x % 16 == 0) && ((n * (int64_t)sizeof(T)) % 16 == 0);
}

/* Whether every kernel row of `span` in x fits the cache: rows of n
 * aligned (so is each piece: its start is a multiple of 4096 elements on), and
 * short enough. */
template <typename T, int WIDTH> __host__ __forceinline__ bool row_cache_fits(const void *x, row_span span) {
  return rows_aligned<T>(x, span.n) && span.piece * (int64_t)sizeof(T) <= (int64_t)WIDTH * 16 * kCacheVecs;
}

/* Whether every kernel row of `span` fills the cache: each lane holds
 * kCacheVecs vectors of every row (row_cache's FULL). */
template <typename T, int WIDTH> __host__ __forceinline__ bool row_cache_full(row_span span) {
  return span.n % span.piece == 0 && span.piece == (int64_t)WIDTH * vec_of<T>::value * kCacheVecs;
}

/* FULL: every row fills the cache (row_cache_full), so no lane tests its
 * count and the passes are straight-line code; a row past the last is read
 * from the row given (in bounds), its values unused. */
template <typename T, int WIDTH, bool FULL = false> struct row_cache {
  static constexpr int VEC = vec_of<T>::value;
  T v[kCacheVecs][VEC];
  int count = FULL ? kCacheVecs : 0;  /* the vectors this lane holds */

  __device__ __forceinline__ void load(const T *__restrict__ xr, int64_t n, int lane, bool live) {
    if constexpr (!FULL) {
      const int64_t vecs = n / VEC;
      const int64_t mine = live && lane < vecs ? (vecs - lane + WIDTH - 1) / WIDTH : 0;
      count = mine < kCacheVecs ? (int)mine : kCacheVecs;
    }
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k)
      if (FULL || k < count) load_vec<T, VEC, true, false>(xr + ((int64_t)k * WIDTH + lane) * VEC, v[k]);
  }
  /* f(k, e, element) for element e of vector k, in order. */
  template <typename F> __device__ __forceinline__ void each(F &&f) const {
#pragma unroll
    for (int k = 0; k < kCacheVecs; ++k)
      if (FULL || k < count)
#pragma unroll
        for (int e = 0; e < VEC; ++e) f(k, e, v[k][e]);
  }
  /* The index in the row of vector k's first element. */
  __device__ __forceinline__ int64_t at(int lane, int k) const { return ((int64_t)k * WIDTH + lane) * VEC; }
};

/* Stores the 16 bytes v at p (16-byte aligned). */
template <typename T> __device__ __forceinline__ void store_vec16(T *p, const T (&v)[vec_of<T>::value]) {
  uint4 raw;
  memcpy(&raw, v, 16);
  *reinterpret_cast<uint4 *>(p) = raw;
}

/* Calls f(row_type<T>{}) with T the row kernels' element type of t (float32,
 * float16, bfloat16); REDUX_ERR_DTYPE for another dtype. */
template <typename T> struct row_type {
  using type = T;
};
template <typename F> redux_status with_row_dtype(redux_dtype t, F &&f) {
  switch (t) {
    case REDUX_F32: return f(row_type<float>{});
    case REDUX_F16: return f(row_type<__half>{});
    case REDUX_BF16: return f(row_type<__nv_bfloat16>{});
    default: return REDUX_ERR_DTYPE;
  }
}

/* Whether a row of n elements of T is a warp's (else the block's). */
template <typename T> __host__ __forceinline__ bool warp_per_row(int64_t n) {
  return n * (int64_t)sizeof(T) <= kWarpRowMaxBytes;
}

}  // namespace redux
