/* Moments of rows (redux.h, redux_cuda_moment_rows): the mean and the
 * variance (or standard deviation), or the mean of squares (or its root),
 * of [rows, n] along n in one kernel.
 *
 * A group of `WIDTH` lanes owns a row (rows.cuh). Each sum in fp64 with lane
 * l taking vectors l, l + WIDTH, ... in order (lane_fold_range) and the
 * lanes combined by the fixed shuffle / block tree. Centered, two passes
 * over the row (one read where it fits the lanes' registers, row_cache;
 * else the second from cache): the values, divided by n once (the
 * mean), then the squared deviations from it, divided by the caller's
 * divisor once; two passes, not Welford, as on the CPU (moment_rows.c).
 * Otherwise one read: the squares, divided by the divisor once.
 *
 * redux_cuda_sum_squares_each: many rows of their own lengths (a list of
 * tensors, each one row) in one launch per width, from a table passed as
 * the kernel's arguments; each row's arithmetic is moment_rows_kernel's
 * for that row alone (not centered), so the bits are the same.
 */
#include <math.h>

#include "grid.cuh"
#include "rows.cuh"

namespace redux {
namespace {

constexpr int kMomentUnroll = 4;  /* loads in flight per lane: changes no bits */

/* q + (v - m)^2 in fp64: the step of the sums of squares below. */
template <typename T> __device__ __forceinline__ double add_square(double q, T v, double m) {
  const double d = (double)to_float<T>(v) - m;
  return fma(d, d, q);
}

/* One lane's share of the sum of (x - m)^2 over a row of n, in fp64. */
template <typename T, bool ALIGNED>
__device__ __forceinline__ double lane_squares(const T *xr, int64_t n, double m, int lane, int width) {
  double q = 0.0;
  lane_fold_range<vec_of<T>::value, kMomentUnroll, ALIGNED, false>(xr, 0, n, lane, width,
                                                                   [&](T v) { q = add_square(q, v, m); });
  return q;
}

/* CACHED: the row is read once into registers (row_cache) and both sums
 * take it from there, in the same order. */
template <typename T, typename Out, int WIDTH, bool ALIGNED, bool CACHED>
__global__ void __launch_bounds__(kBlock)
moment_rows_kernel(const T *__restrict__ x, Out *__restrict__ m2, Out *__restrict__ mean, int64_t rows,
                   row_span span, double divisor, bool centered, bool root) {
  constexpr int VEC = vec_of<T>::value;
  __shared__ double scratch[kBlock / 32], shared;
  for_each_row<WIDTH>(rows, [&](int64_t row, bool live, int lane) {
    const T *xr = x + (live ? span.start(row) : 0);
    const int64_t n = live ? span.length(row) : 1;
    row_cache<T, WIDTH> cache;
    if constexpr (CACHED) cache.load(xr, n, lane, live);
    double m = 0.0;
    if (centered) {  /* uniform across the block */
      double s = 0.0;
      auto add = [&](T v) { s += (double)to_float<T>(v); };
      if constexpr (CACHED) cache.each([&](int, int, T v) { add(v); });
      else if (live) lane_fold_range<VEC, kMomentUnroll, ALIGNED, false>(xr, 0, n, lane, WIDTH, add);
      m = group_reduce<fp64_policy, WIDTH>(s, scratch, &shared) / (double)n;
    }
    double q = 0.0;
    if constexpr (CACHED) {
      cache.each([&](int, int, T v) { q = add_square(q, v, m); });
    } else if (live) {
      q = lane_squares<T, ALIGNED>(xr, n, m, lane, WIDTH);
    }
    q = group_reduce<fp64_policy, WIDTH>(q, scratch, &shared);
    if (live && lane == 0) {
      const double v = q / divisor;
      m2[row] = from_double<Out>(root ? sqrt(v) : v);
      if (centered) mean[row] = from_double<Out>(m);
    }
  });
}

/* The arguments after the pointers, passed through: the kernel's rows
 * (x's rows times span.pieces) and where they lie. */
struct MomentArgs {
  int64_t rows;
  row_span span;
  double divisor;
  bool centered, root;
};

template <typename T, typename Out, int WIDTH>
redux_status launch(const void *x, void *m2, void *mean, MomentArgs a, cudaStream_t stream) {
  const bool aligned = rows_aligned<T>(x, a.span.n);
  auto kernel = row_cache_fits<T, WIDTH>(x, a.span) ? moment_rows_kernel<T, Out, WIDTH, true, true>
                : aligned                           ? moment_rows_kernel<T, Out, WIDTH, true, false>
                                                    : moment_rows_kernel<T, Out, WIDTH, false, false>;
  const int g = grid_for(kernel, blocks_for_rows<WIDTH>(a.rows), 0);
  kernel<<<g, kBlock, 0, stream>>>(static_cast<const T *>(x), static_cast<Out *>(m2), static_cast<Out *>(mean), a.rows,
                                   a.span, a.divisor, a.centered, a.root);
  return launch_status();
}

template <typename T>
redux_status launch_out(bool wide, const void *x, void *m2, void *mean, MomentArgs a, cudaStream_t stream) {
  const bool warp = warp_per_row<T>(a.span.piece);
  if (wide)
    return warp ? launch<T, double, 32>(x, m2, mean, a, stream) : launch<T, double, kBlock>(x, m2, mean, a, stream);
  return warp ? launch<T, T, 32>(x, m2, mean, a, stream) : launch<T, T, kBlock>(x, m2, mean, a, stream);
}

/* A row's pieces' moments combined (redux_cuda_moment_rows_combine): lane
 * l takes pieces l, l + WIDTH, ... in order, the lanes by the fixed tree. */
template <typename Out, int WIDTH>
__global__ void __launch_bounds__(kBlock)
moment_rows_combine_kernel(const double *__restrict__ pieces_m2, const double *__restrict__ pieces_mean,
                           Out *__restrict__ m2, Out *__restrict__ mean, int64_t rows, row_span span, double divisor,
                           bool root) {
  __shared__ double scratch[kBlock / 32], shared;
  for_each_row<WIDTH>(rows, [&](int64_t row, bool live, int lane) {
    const double *q = pieces_m2 + (live ? row : 0) * span.pieces, *mu = pieces_mean + (live ? row : 0) * span.pieces;
    double s = 0.0;
    if (live)
      for (int64_t j = lane; j < span.pieces; j += WIDTH) s += (double)span.piece_length(j) * mu[j];
    const double m = group_reduce<fp64_policy, WIDTH>(s, scratch, &shared) / (double)span.n;
    double v = 0.0;
    if (live)
      for (int64_t j = lane; j < span.pieces; j += WIDTH) {
        const double d = mu[j] - m;
        v += q[j] + (double)span.piece_length(j) * d * d;
      }
    v = group_reduce<fp64_policy, WIDTH>(v, scratch, &shared) / divisor;
    if (live && lane == 0) {
      m2[row] = from_double<Out>(root ? sqrt(v) : v);
      mean[row] = from_double<Out>(m);
    }
  });
}

template <typename Out>
redux_status launch_combine(const double *pieces_m2, const double *pieces_mean, void *m2, void *mean, int64_t rows,
                            row_span span, double divisor, bool root, cudaStream_t stream) {
  const bool warp = span.pieces <= kWarpCombineMaxPieces;
  auto kernel = warp ? moment_rows_combine_kernel<Out, 32> : moment_rows_combine_kernel<Out, kBlock>;
  const int g = grid_for(kernel, warp ? blocks_for_rows<32>(rows) : blocks_for_rows<kBlock>(rows), 0);
  kernel<<<g, kBlock, 0, stream>>>(pieces_m2, pieces_mean, static_cast<Out *>(m2), static_cast<Out *>(mean), rows,
                                   span, divisor, root);
  return launch_status();
}

/* Rows a launch of sum_squares_each_kernel takes: its table travels as the
 * kernel's arguments (24 bytes a row, under the 4 KB every GPU takes). */
constexpr int kEachRows = 128;

template <typename T> struct EachTable {
  const T *x[kEachRows];
  T *out[kEachRows];
  int64_t n[kEachRows];
  int count;
};

template <typename T, int WIDTH>
__global__ void __launch_bounds__(kBlock) sum_squares_each_kernel(const EachTable<T> table, double divisor, bool root) {
  __shared__ double scratch[kBlock / 32], shared;
  for_each_row<WIDTH>(table.count, [&](int64_t row, bool live, int lane) {
    double q = 0.0;
    if (live) {
      const T *xr = table.x[row];
      const int64_t n = table.n[row];
      q = rows_aligned<T>(xr, n) ? lane_squares<T, true>(xr, n, 0.0, lane, WIDTH)
                                 : lane_squares<T, false>(xr, n, 0.0, lane, WIDTH);
    }
    q = group_reduce<fp64_policy, WIDTH>(q, scratch, &shared);
    if (live && lane == 0) {
      const double v = q / divisor;
      table.out[row][0] = from_double<T>(root ? sqrt(v) : v);
    }
  });
}

/* The rows of one width, kEachRows a launch. */
template <typename T, int WIDTH>
redux_status launch_each(const void *const *x, const int64_t *n, void *const *out, int64_t count, double divisor,
                         bool root, cudaStream_t stream) {
  EachTable<T> table;
  table.count = 0;
  for (int64_t i = 0; i <= count; ++i) {
    if (table.count == kEachRows || (i == count && table.count > 0)) {
      auto kernel = sum_squares_each_kernel<T, WIDTH>;
      const int g = grid_for(kernel, blocks_for_rows<WIDTH>(table.count), 0);
      kernel<<<g, kBlock, 0, stream>>>(table, divisor, root);
      const redux_status status = launch_status();
      if (status != REDUX_OK) return status;
      table.count = 0;
    }
    if (i == count || warp_per_row<T>(n[i]) != (WIDTH == 32)) continue;
    table.x[table.count] = static_cast<const T *>(x[i]);
    table.out[table.count] = static_cast<T *>(out[i]);
    table.n[table.count] = n[i];
    ++table.count;
  }
  return REDUX_OK;
}

template <typename T>
redux_status launch_each_widths(const void *const *x, const int64_t *n, void *const *out, int64_t count,
                                double divisor, bool root, cudaStream_t stream) {
  const redux_status status = launch_each<T, 32>(x, n, out, count, divisor, root, stream);
  return status != REDUX_OK ? status : launch_each<T, kBlock>(x, n, out, count, divisor, root, stream);
}

}  // namespace
}  // namespace redux

extern "C" redux_status redux_cuda_sum_squares_each(const void *const *x, const int64_t *n, void *const *m2,
                                                    int64_t count, redux_dtype t, double divisor, int root,
                                                    void *stream) {
  using namespace redux;
  if (count < 0 || (count > 0 && (x == nullptr || n == nullptr || m2 == nullptr))) return REDUX_ERR_SHAPE;
  for (int64_t i = 0; i < count; ++i)
    if (n[i] < 1 || x[i] == nullptr || m2[i] == nullptr) return REDUX_ERR_SHAPE;
  return with_row_dtype(t, [&](auto tag) {
    return launch_each_widths<typename decltype(tag)::type>(x, n, m2, count, divisor, root != 0,
                                                             static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_moment_rows(const void *x, void *m2, void *mean, int64_t rows, int64_t n,
                                               redux_dtype t, redux_dtype out, double divisor, int centered, int root,
                                               void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1) return REDUX_ERR_SHAPE;
  if (out != t && out != REDUX_F64) return REDUX_ERR_DTYPE;
  const bool wide = out == REDUX_F64;
  const MomentArgs a{rows, whole_rows(n), divisor, centered != 0, root != 0};
  return with_row_dtype(t, [&](auto tag) {
    return launch_out<typename decltype(tag)::type>(wide, x, m2, mean, a, static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_moment_row_pieces(const void *x, double *m2, double *mean, int64_t rows, int64_t n,
                                                     redux_dtype t, void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1) return REDUX_ERR_SHAPE;
  const row_span span = row_pieces(n);
  const MomentArgs a{rows * span.pieces, span, 1.0, true, false};
  return with_row_dtype(t, [&](auto tag) {
    return launch_out<typename decltype(tag)::type>(true, x, m2, mean, a, static_cast<cudaStream_t>(stream));
  });
}

extern "C" redux_status redux_cuda_moment_rows_combine(const double *pieces_m2, const double *pieces_mean, void *m2,
                                                       void *mean, int64_t rows, int64_t n, redux_dtype out,
                                                       double divisor, int root, void *stream) {
  using namespace redux;
  if (rows < 1 || n < 1) return REDUX_ERR_SHAPE;
  const row_span span = row_pieces(n);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (out == REDUX_F64) return launch_combine<double>(pieces_m2, pieces_mean, m2, mean, rows, span, divisor, root, s);
  return with_row_dtype(out, [&](auto tag) {
    return launch_combine<typename decltype(tag)::type>(pieces_m2, pieces_mean, m2, mean, rows, span, divisor,
                                                         root != 0, s);
  });
}
