/* Exponential sums of rows (redux.h, redux_cuda_exp_rows and _backward):
 * softmax, log_softmax and logsumexp of [rows, n] along n in one kernel,
 * the first two from given row maxima and sums in another (long rows), and
 * the backward of the first two in a third.
 *
 * A group of `WIDTH` lanes owns a row (rows.cuh). One read of a row that
 * fits the lanes' registers (row_cache; a float32 softmax or log_softmax
 * loads its next row while it writes one), else up to three (the later
 * ones from cache): the maximum, the fp64 sum of exp(x - m) with lane l
 * taking vectors l, l + WIDTH, ... in order (lane_fold_range) and the
 * lanes combined by the fixed shuffle / block tree, then the outputs. exp
 * is redux's own (exp64.cuh), its table copied to each block's shared
 * memory while the first row loads. Where every row fills the lanes'
 * registers exactly (rows of 1024 float32 a warp, 8192 a block), the
 * outputs' kernel is straight-line code (row_cache's FULL). None of this
 * changes an operation.
 */
#include <math.h>

#include <algorithm>

#include "dispatch.cuh"
#include "exp64.cuh"
#include "grid.cuh"
#include "rows.cuh"

namespace redux {
namespace {

constexpr int kExpUnroll = 4;  /* loads in flight per lane: changes no bits */

/* The maximum, NaN if any element is NaN (max is exact in any order). */
struct max_policy {
  using acc_t = float;
  static __device__ __forceinline__ acc_t zero() { return -INFINITY; }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) { return (b > a || b != b) ? b : a; }
};

/* exp(d) where d = x - shift: the softmax forms shift by the row's maximum,
 * so d <= 0 or NaN; logsumexp's shift may be 0 with an element at +inf. */
template <redux_exp_op OP, typename Table> __device__ __forceinline__ double exp_shifted(double d, Table table) {
  if constexpr (OP == REDUX_EXP_SOFTMAX || OP == REDUX_EXP_LOG_SOFTMAX) return exp64_form<false>(d, table);
  else return exp64_form<true>(d, table);
}

/* A row's results from its maximum m, shift and sum s of exponentials:
 * logsumexp or the parts at the row's index (lane 0). */
template <typename T, redux_exp_op OP>
__device__ __forceinline__ void write_row_result(T *__restrict__ y, int64_t row, int lane, float m, double shift,
                                                 double s) {
  if (lane != 0) return;
  if constexpr (OP == REDUX_EXP_PARTS) {
    double *parts = reinterpret_cast<double *>(y);  // the caller's double[2 rows]
    parts[2 * row] = m;
    parts[2 * row + 1] = s;
  } else if constexpr (OP == REDUX_EXP_LOGSUMEXP) {
    y[row] = from_double<T>(log(s) + shift);
  }
}

/* logsumexp shifts by a finite maximum only (torch's rule): an infinite or
 * NaN one leaves the values as they are. */
template <redux_exp_op OP> __device__ __forceinline__ double shift_of(float m) {
  return ((OP == REDUX_EXP_LOGSUMEXP || OP == REDUX_EXP_PARTS) && !isfinite(m)) ? 0.0 : (double)m;
}

/* 1 / s for softmax (an fp64 division per element would cost about what
 * the exponential does), log(s) for log_softmax. */
template <redux_exp_op OP> __device__ __forceinline__ double output_factor(double s) {
  return OP == REDUX_EXP_SOFTMAX ? 1.0 / s : log(s);
}

/* What a cached row keeps of its exponentials' pass for its outputs, which
 * the next row's loads take the cache from: a float32 softmax its
 * exponentials, a float32 log_softmax its values (x - m again from them is
 * the same fp64 value); other rows load their next row only after these
 * outputs, so they keep nothing and read the cache. */
template <typename T, redux_exp_op OP> struct row_keep {
  static constexpr int VEC = vec_of<T>::value;
  static constexpr bool EXPS = OP == REDUX_EXP_SOFTMAX && sizeof(T) == 4;
  static constexpr bool VALUES = OP == REDUX_EXP_LOG_SOFTMAX && sizeof(T) == 4;
  static constexpr bool ANY = EXPS || VALUES;
  double exps[EXPS ? kCacheVecs : 1][EXPS ? VEC : 1];
  T values[VALUES ? kCacheVecs : 1][VALUES ? VEC : 1];

  __device__ __forceinline__ void keep(int k, int e, T v, double ex) {
    if constexpr (EXPS) exps[k][e] = ex;
    if constexpr (VALUES) values[k][e] = v;
  }
  /* Element e of vector k's output; `cached` is that element in the cache. */
  template <typename Table>
  __device__ __forceinline__ T output(int k, int e, T cached, double shift, double by, Table table) const {
    if constexpr (EXPS) return from_double<T>(exps[k][e] * by);
    const double d = (double)to_float<T>(VALUES ? values[k][e] : cached) - shift;
    return from_double<T>(OP == REDUX_EXP_SOFTMAX ? exp_shifted<OP>(d, table) * by : d - by);
  }
};

/* Rows read once into registers (row_cache, 16-byte aligned rows of whole
 * vectors): the maximum and the sum from there. Rows that keep what their
 * outputs need (row_keep), and logsumexp and the parts, which write no
 * row, load the next row once the exponentials are summed, and those
 * loads are in flight while they finish this one. The same arithmetic in
 * the same order as exp_rows_kernel. */
template <typename T, int WIDTH, bool FULL, redux_exp_op OP>
__global__ void __launch_bounds__(kBlock)
exp_rows_cached_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, row_span span) {
  constexpr int VEC = vec_of<T>::value, GROUPS = kBlock / WIDTH;
  constexpr bool WRITES = OP == REDUX_EXP_SOFTMAX || OP == REDUX_EXP_LOG_SOFTMAX;
  constexpr bool PREFETCH = row_keep<T, OP>::ANY || !WRITES;  // this row's values are spent after its exponentials
  __shared__ float max_scratch[kBlock / 32], max_shared;
  __shared__ double sum_scratch[kBlock / 32], sum_shared;
  __shared__ double table_copy[64];
  const int lane = threadIdx.x % WIDTH;
  const int64_t group = threadIdx.x / WIDTH, step = (int64_t)gridDim.x * GROUPS;
  row_cache<T, WIDTH, FULL> cache;
  auto fetch = [&](int64_t row0) {
    const int64_t row = row0 + group;
    const bool live = row < rows;
    cache.load(x + (live ? span.start(row) : 0), live ? span.length(row) : 1, lane, live);
  };
  int64_t row0 = (int64_t)blockIdx.x * GROUPS;
  if (PREFETCH && row0 < rows) fetch(row0);
  exp_table_shared::fill(table_copy);
  const exp_table_shared table{table_copy};
  for (; row0 < rows; row0 += step) {
    const int64_t row = row0 + group;
    if (!PREFETCH) fetch(row0);
    float m = max_policy::zero();
    cache.each([&](int, int, T v) { m = max_policy::combine(m, to_float<T>(v)); });
    m = group_reduce<max_policy, WIDTH>(m, max_scratch, &max_shared);
    const double shift = shift_of<OP>(m);
    double s = 0.0;
    row_keep<T, OP> kept;
    const int count = cache.count;
    cache.each([&](int k, int e, T v) {
      const double ex = exp_shifted<OP>((double)to_float<T>(v) - shift, table);
      kept.keep(k, e, v, ex);
      s += ex;
    });
    if (PREFETCH && row0 + step < rows) fetch(row0 + step);
    s = group_reduce<fp64_policy, WIDTH>(s, sum_scratch, &sum_shared);
    if (row >= rows) continue;
    if constexpr (!WRITES) {
      write_row_result<T, OP>(y, row, lane, m, shift, s);
    } else {
      const double by = output_factor<OP>(s);
      T *yr = y + span.start(row);
#pragma unroll
      for (int k = 0; k < kCacheVecs; ++k) {
        if (!FULL && k >= count) break;
        T o[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) o[e] = kept.output(k, e, cache.v[k][e], shift, by, table);
        store_vec16<T>(yr + cache.at(lane, k), o);
      }
    }
  }
}

/* Rows read from memory in each pass (from cache after the first): lane l
 * takes vectors l, l + WIDTH, ... in order (lane_fold_range). */
template <typename T, int WIDTH, bool ALIGNED, redux_exp_op OP>
__global__ void __launch_bounds__(kBlock)
exp_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, row_span span) {
  constexpr int VEC = vec_of<T>::value;
  __shared__ float max_scratch[kBlock / 32], max_shared;
  __shared__ double sum_scratch[kBlock / 32], sum_shared;
  __shared__ double table_copy[64];
  exp_table_shared::fill(table_copy);
  const exp_table_shared table{table_copy};
  for_each_row<WIDTH>(rows, [&](int64_t row, bool live, int lane) {
    const int64_t at = live ? span.start(row) : 0, n = live ? span.length(row) : 1;
    const T *xr = x + at;
    float m = max_policy::zero();
    if (live)
      lane_fold_range<VEC, kExpUnroll, ALIGNED, false>(xr, 0, n, lane, WIDTH,
                                                        [&](T v) { m = max_policy::combine(m, to_float<T>(v)); });
    m = group_reduce<max_policy, WIDTH>(m, max_scratch, &max_shared);
    const double shift = shift_of<OP>(m);
    double s = 0.0;
    if (live)
      lane_fold_range<VEC, kExpUnroll, ALIGNED, false>(
          xr, 0, n, lane, WIDTH, [&](T v) { s += exp_shifted<OP>((double)to_float<T>(v) - shift, table); });
    s = group_reduce<fp64_policy, WIDTH>(s, sum_scratch, &sum_shared);
    if (!live) return;
    if constexpr (OP == REDUX_EXP_PARTS || OP == REDUX_EXP_LOGSUMEXP) {
      write_row_result<T, OP>(y, row, lane, m, shift, s);
    } else {
      const double by = output_factor<OP>(s);
      T *yr = y + at;
      for (int64_t i = lane; i < n; i += WIDTH) {
        const double d = (double)to_float<T>(xr[i]) - shift;
        yr[i] = from_double<T>(OP == REDUX_EXP_SOFTMAX ? exp_shifted<OP>(d, table) * by : d - by);
      }
    }
  });
}

/* Softmax (LOG false) or log_softmax of rows from their given maximum and
 * sum of exponentials (parts, as REDUX_EXP_PARTS lays them out): the first
 * kernel's last pass, element by element, so blocks split rows (blockIdx.x
 * over a row, blockIdx.y over rows) without changing a bit. VECTORS: rows
 * of whole 16-byte vectors at 16-byte aligned x and y, a thread taking
 * kApplyVecs of them at once (their loads in flight together). */
constexpr int kApplyVecs = 2;
/* The elements of a row a block of the last pass takes at once. */
template <typename T, bool VECTORS> __host__ __device__ constexpr int apply_chunk() {
  return kApplyVecs * kBlock * (VECTORS ? vec_of<T>::value : 1);
}
template <typename T, bool LOG, bool VECTORS>
__global__ void __launch_bounds__(kBlock)
exp_rows_apply_kernel(const T *__restrict__ x, const double *__restrict__ parts, T *__restrict__ y, int64_t rows,
                      int64_t n) {
  constexpr int VEC = VECTORS ? vec_of<T>::value : 1, CHUNK = apply_chunk<T, VECTORS>();
  __shared__ double table_copy[64];
  exp_table_shared::fill(table_copy);
  const exp_table_shared table{table_copy};
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    const double m = parts[2 * row], s = parts[2 * row + 1];
    /* a maximum that is not finite: the row is all NaN, as exp_rows_kernel gives it */
    const double by = !isfinite(m) ? (double)NAN : LOG ? log(s) : 1.0 / s;
    const T *xr = x + row * n;
    T *yr = y + row * n;
    for (int64_t c = (int64_t)blockIdx.x * CHUNK; c < n; c += (int64_t)gridDim.x * CHUNK) {
      T v[kApplyVecs][VEC];
#pragma unroll
      for (int k = 0; k < kApplyVecs; ++k) {
        const int64_t i = c + ((int64_t)k * kBlock + threadIdx.x) * VEC;
        if (i < n) load_vec<T, VEC, VECTORS, false>(xr + i, v[k]);
      }
#pragma unroll
      for (int k = 0; k < kApplyVecs; ++k) {
        const int64_t i = c + ((int64_t)k * kBlock + threadIdx.x) * VEC;
        if (i >= n) break;
        T o[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const double d = (double)to_float<T>(v[k][e]) - m;
          o[e] = from_double<T>(LOG ? d - by : exp64_form<true>(d, table) * by);
        }
        if constexpr (VECTORS) store_vec16<T>(yr + i, o);
        else yr[i] = o[0];
      }
    }
  }
}

/* The backward of softmax (LOG false) or log_softmax from y and its
 * gradient g: lane l takes elements l, l + WIDTH, ... of the row, in order. */
template <typename T, int WIDTH, bool LOG>
__global__ void __launch_bounds__(kBlock)
exp_rows_backward_kernel(const T *__restrict__ g, const T *__restrict__ y, T *__restrict__ dx, int64_t rows,
                         int64_t n) {
  __shared__ double sum_scratch[kBlock / 32], sum_shared;
  for_each_row<WIDTH>(rows, [&](int64_t row, bool live, int lane) {
    const int64_t at = (live ? row : 0) * n;
    double s = 0.0;
    if (live)
      for (int64_t i = lane; i < n; i += WIDTH)
        s += LOG ? (double)to_float<T>(g[at + i]) : (double)to_float<T>(g[at + i]) * (double)to_float<T>(y[at + i]);
    s = group_reduce<fp64_policy, WIDTH>(s, sum_scratch, &sum_shared);
    if (!live) return;
    for (int64_t i = lane; i < n; i += WIDTH) {
      const double gi = to_float<T>(g[at + i]), yi = to_float<T>(y[at + i]);
      dx[at + i] = from_double<T>(LOG ? gi - exp64(yi) * s : yi * (gi - s));
    }
  });
}

/* rows: the kernel's (x's rows times span.pieces). */
template <typename T, int WIDTH, redux_exp_op OP>
redux_status launch(const void *x, void *y, int64_t rows, row_span span, cudaStream_t stream) {
  const bool aligned = rows_aligned<T>(x, span.n);
  constexpr bool writes_rows = OP == REDUX_EXP_SOFTMAX || OP == REDUX_EXP_LOG_SOFTMAX;
  const bool cached = row_cache_fits<T, WIDTH>(x, span) && (!writes_rows || (uintptr_t)y % 16 == 0);
  auto kernel = cached    ? exp_rows_cached_kernel<T, WIDTH, false, OP>
                : aligned ? exp_rows_kernel<T, WIDTH, true, OP>
                          : exp_rows_kernel<T, WIDTH, false, OP>;
  if constexpr (writes_rows)  /* the outputs' kernels, where rows fill the cache: straight-line passes */
    if (cached && row_cache_full<T, WIDTH>(span)) kernel = exp_rows_cached_kernel<T, WIDTH, true, OP>;
  const int g = grid_for(kernel, blocks_for_rows<WIDTH>(rows), 0);
  kernel<<<g, kBlock, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), rows, span);
  return launch_status();
}

template <typename T, redux_exp_op OP>
redux_status launch_width(const void *x, void *y, int64_t rows, row_span span, cudaStream_t stream) {
  if (warp_per_row<T>(span.piece)) return launch<T, 32, OP>(x, y, rows, span, stream);
  return launch<T, kBlock, OP>(x, y, rows, span, stream);
}

template <typename T>
redux_status launch_op(redux_exp_op op, const void *x, void *y, int64_t rows, int64_t n, cudaStream_t stream) {
  const row_span span = whole_rows(n);
  switch (op) {
    case REDUX_EXP_SOFTMAX: return launch_width<T, REDUX_EXP_SOFTMAX>(x, y, rows, span, stream);
    case REDUX_EXP_LOG_SOFTMAX: return launch_width<T, REDUX_EXP_LOG_SOFTMAX>(x, y, rows, span, stream);
    case REDUX_EXP_LOGSUMEXP: return launch_width<T, REDUX_EXP_LOGSUMEXP>(x, y, rows, span, stream);
    case REDUX_EXP_PARTS: return launch_width<T, REDUX_EXP_PARTS>(x, y, rows, span, stream);
  }
  return REDUX_ERR_SHAPE;
}

/* A row's pieces' parts combined (redux_cuda_exp_rows_combine): lane l
 * takes pieces l, l + WIDTH, ... in order, the lanes by the fixed tree.
 * LSE: logsumexp into y (T), else the row's parts (double[2 rows]). */
template <typename T, int WIDTH, bool LSE>
__global__ void __launch_bounds__(kBlock)
exp_rows_combine_kernel(const double *__restrict__ parts, void *__restrict__ y, int64_t rows, int64_t pieces) {
  __shared__ float max_scratch[kBlock / 32], max_shared;
  __shared__ double sum_scratch[kBlock / 32], sum_shared;
  for_each_row<WIDTH>(rows, [&](int64_t row, bool live, int lane) {
    const double *p = parts + 2 * (live ? row : 0) * pieces;
    float top = max_policy::zero();  /* the pieces' maxima are float32 values */
    if (live)
      for (int64_t j = lane; j < pieces; j += WIDTH) top = max_policy::combine(top, (float)p[2 * j]);
    top = group_reduce<max_policy, WIDTH>(top, max_scratch, &max_shared);
    const double shift = isfinite(top) ? (double)top : 0.0;
    double s = 0.0;
    if (live)
      for (int64_t j = lane; j < pieces; j += WIDTH) {
        const double m = p[2 * j];
        s += p[2 * j + 1] * exp64((isfinite(m) ? m : shift) - shift);
      }
    s = group_reduce<fp64_policy, WIDTH>(s, sum_scratch, &sum_shared);
    if (!live || lane != 0) return;
    if constexpr (LSE) {
      static_cast<T *>(y)[row] = from_double<T>(log(s) + shift);
    } else {
      static_cast<double *>(y)[2 * row] = top;
      static_cast<double *>(y)[2 * row + 1] = s;
    }
  });
}

template <typename T>
redux_status launch_combine(bool lse, const double *parts, void *y, int64_t rows, int64_t pieces, cudaStream_t stream) {
  const bool warp = pieces <= kWarpCombineMaxPieces;
  auto kernel = warp ? (lse ? exp_rows_combine_kernel<T, 32, true> : exp_rows_combine_kernel<T, 32, false>)
                     : (lse ? exp_rows_combine_kernel<T, kBlock, true> : exp_rows_combine_kernel<T, kBlock, false>);
  const int g = grid_for(kernel, warp ? blocks_for_rows<32>(rows) : blocks_for_rows<kBlock>(rows), 0);
  kernel<<<g, kBlock, 0, stream>>>(parts, y, rows, pieces);
  return launch_status();
}

template <typename T>
redux_status launch_apply(bool log_form, const void *x, const double *parts, void *y, int64_t rows, int64_t n,
                          cudaStream_t stream) {
  constexpr int64_t kPerBlock = apply_chunk<T, true>();  /* either kernel: sized for the vectors' chunk */
  const dim3 grid((unsigned)std::min<int64_t>((n + kPerBlock - 1) / kPerBlock, 4096),
                  (unsigned)std::min<int64_t>(rows, 65535));
  const bool vectors = rows_aligned<T>(x, n) && (uintptr_t)y % 16 == 0;
  auto kernel = vectors ? (log_form ? exp_rows_apply_kernel<T, true, true> : exp_rows_apply_kernel<T, false, true>)
                        : (log_form ? exp_rows_apply_kernel<T, true, false> : exp_rows_apply_kernel<T, false, false>);
  kernel<<<grid, kBlock, 0, stream>>>(static_cast<const T *>(x), parts, static_cast<T *>(y), rows, n);
  return launch_status();
}

template <typename T>
redux_status launch_backward(bool log_form, const void *g, const void *y, void *dx, int64_t rows, int64_t n,
                             cudaStream_t stream) {
  const bool warp = warp_per_row<T>(n);
  auto kernel = warp ? (log_form ? exp_rows_backward_kernel<T, 32, true> : exp_rows_backward_kernel<T, 32, false>)
                     : (log_form ? exp_rows_backward_kernel<T, kBlock, true> : exp_rows_backward_kernel<T, kBlock, false>);
  const int g_blocks = grid_for(kernel, warp ? blocks_for_rows<32>(rows) : blocks_for_rows<kBlock>(rows), 0);
  kernel<<<g_blocks, kBlock, 0, stream>>>(static_cast<const T *>(g), static_cast<const T *>(y), static_cast<T *>(dx),
                                          rows, n);
  return launch_status();
}

}  // namespace
}  // namespace redux

/* The softmax forms' op, checked with the shape: false for a bad op or shape. */
static bool softmax_form(redux_exp_op op, int64_t rows, int64_t n, bool *log_form) {
  *log_form = op == REDUX_EXP_LOG_SOFTMAX;
  return rows >= 1 && n >= 1 && (op == REDUX_EXP_SOFTMAX || op == REDUX_EXP_LOG_SOFTMAX);
}

extern "C" redux_status redux_cuda_exp_rows_backward(redux_exp_op op, const void *g, const void *y, void *dx,
                                                     int64_t rows, int64_t n, redux_dtype t, void *stream) {
  using namespace redux;
  bool log_form;
  if (!softmax_form(op, rows, n, &log_form)) return REDUX_ERR_SHAPE;
  return with_row_dtype(t, [&](auto tag) {
    return launch_backward<typename decltype(tag)::type>(log_form, g, y, dx, rows, n,
                                                          static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_exp_rows_apply(redux_exp_op op, const void *x, const double *parts, void *y,
                                                  int64_t rows, int64_t n, redux_dtype t, void *stream) {
  using namespace redux;
  bool log_form;
  if (!softmax_form(op, rows, n, &log_form)) return REDUX_ERR_SHAPE;
  return with_row_dtype(t, [&](auto tag) {
    return launch_apply<typename decltype(tag)::type>(log_form, x, parts, y, rows, n,
                                                       static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_exp_rows(redux_exp_op op, const void *x, void *y, int64_t rows, int64_t n,
                                            redux_dtype t, void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1) return REDUX_ERR_SHAPE;
  return with_row_dtype(t, [&](auto tag) {
    return launch_op<typename decltype(tag)::type>(op, x, y, rows, n, static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_exp_row_pieces(const void *x, double *parts, int64_t rows, int64_t n, redux_dtype t,
                                                  void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1) return REDUX_ERR_SHAPE;
  const row_span span = row_pieces(n);
  return with_row_dtype(t, [&](auto tag) {
    return launch_width<typename decltype(tag)::type, REDUX_EXP_PARTS>(x, parts, rows * span.pieces, span,
                                                                       static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_exp_rows_combine(redux_exp_op op, const double *parts, void *y, int64_t rows,
                                                    int64_t n, redux_dtype t, void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1 || (op != REDUX_EXP_LOGSUMEXP && op != REDUX_EXP_PARTS)) return REDUX_ERR_SHAPE;
  return with_row_dtype(t, [&](auto tag) {
    return launch_combine<typename decltype(tag)::type>(op == REDUX_EXP_LOGSUMEXP, parts, y, rows,
                                                         redux_row_pieces(n), static_cast<cudaStream_t>(stream));
  });
}
