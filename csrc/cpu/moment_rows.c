/* Moments of rows on the CPU (redux.h, redux_cpu_moment_rows): the mean and
 * the variance (or standard deviation), or the mean of squares (or its
 * root), of [rows, n] along n, C11.
 *
 * A row is one call's, on one thread: read once into fp64; its sum in
 * XLANES fp64 lanes by the fixed pairwise tree (rows.h), divided by n once:
 * the mean; the deviations from it, their squares summed the same way,
 * divided by the caller's divisor once. Two passes, not Welford: the
 * second runs from the row's fp64 copy in cache. A row's bits depend only
 * on its values, n and the arguments. Compiled with -ffp-contract=off.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

/* d[i] -= m */
static REDUX_HOT void deviations(double *d, int64_t n, double m) {
  for (int64_t i = 0; i < n; ++i) d[i] -= m;
}

/* The sum of x[i]^2 over a row of T (float32, or float16 / bfloat16
 * codes), read directly: the lanes, products and tree of lanes_sum(d, d, n)
 * on its fp64 copy, so the same bits, without the copy. W: lanes a vector;
 * LANES(p) W elements at p as fp64; SQUARE_ADD(u, a) a + u * u (as one
 * fused multiply-add where the form has FMA: the square of a float is
 * exact in fp64, so the same rounding); VALUE(v) one element as fp64. */
#define SQUARES_SUM(NAME, ATTR, T, V, W, LANES, SQUARE_ADD, VALUE)              \
  static ATTR double NAME(const T *x, int64_t n) {                              \
    V acc[XLANES / W] = {{0}};                                                  \
    int64_t i = 0;                                                              \
    for (; i + XLANES <= n; i += XLANES)                                        \
      for (int k = 0; k < XLANES / W; ++k) {                                    \
        const V u = LANES(x + i + W * k);                                       \
        acc[k] = SQUARE_ADD(u, acc[k]);                                         \
      }                                                                         \
    double lane[XLANES];                                                        \
    memcpy(lane, acc, sizeof lane);                                             \
    for (int j = 0; i + j < n; ++j) lane[j] += VALUE(x[i + j]) * VALUE(x[i + j]); \
    return lanes_tree(lane);                                                    \
  }
static inline __attribute__((always_inline)) v4d f32_lanes4(const float *p) {
  v4f f;
  memcpy(&f, p, sizeof f);
  return __builtin_convertvector(f, v4d);
}
#define SQUARE_ADD4(u, a) ((a) + (u) * (u))
#define F32_VALUE(v) ((double)(v))
SQUARES_SUM(f32_squares_sum4, REDUX_HOT, float, v4d, 4, f32_lanes4, SQUARE_ADD4, F32_VALUE)
#ifdef REDUX_EIGHT_LANES
/* one conversion instruction: GCC 12 converts a v8f by halves and inserts in AVX-512 code */
static inline __attribute__((always_inline)) REDUX_AVX512 v8d f32_lanes8(const float *p) {
  return (v8d)REDUX_LANES8_F32(p);
}
#define SQUARE_ADD8(u, a) fma8(u, u, a)
SQUARES_SUM(f32_squares_sum8, REDUX_AVX512, float, v8d, 8, f32_lanes8, SQUARE_ADD8, F32_VALUE)
static inline __attribute__((always_inline)) REDUX_AVX512 v8d bf16_lanes8(const uint16_t *p) {
  return (v8d)REDUX_LANES8_BF16(p);
}
static inline __attribute__((always_inline)) REDUX_AVX512_F16C v8d f16_lanes8(const uint16_t *p) {
  return (v8d)REDUX_LANES8_F16(p);
}
#define BF16_VALUE(v) ((double)bf16_to_float(v))
#define F16_VALUE(v) ((double)f16_to_float(v))
SQUARES_SUM(bf16_squares_sum8, REDUX_AVX512, uint16_t, v8d, 8, bf16_lanes8, SQUARE_ADD8, BF16_VALUE)
SQUARES_SUM(f16_squares_sum8, REDUX_AVX512_F16C, uint16_t, v8d, 8, f16_lanes8, SQUARE_ADD8, F16_VALUE)
#endif

/* A 16-bit row's sum of squares read directly where an eight-lane form
 * runs (AVX-512F, and F16C for float16): 1 and its sum, else 0. */
static int squares_sum_16(const uint16_t *x, int64_t n, redux_dtype t, double *sum) {
#ifdef REDUX_EIGHT_LANES
  if (!redux_cpu_eight_lanes()) return 0;
  if (t == REDUX_BF16) {
    *sum = bf16_squares_sum8(x, n);
    return 1;
  }
  if (t == REDUX_F16 && redux_cpu_f16c()) {
    *sum = f16_squares_sum8(x, n);
    return 1;
  }
#else
  (void)x, (void)n, (void)t, (void)sum;
#endif
  return 0;
}

static double f32_squares_sum(const float *x, int64_t n) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) return f32_squares_sum8(x, n);
#endif
  return f32_squares_sum4(x, n);
}

redux_status redux_cpu_moment_rows(const void *x, void *m2, void *mean, int64_t row_begin, int64_t row_end,
                                   int64_t n, redux_dtype t, redux_dtype out, double divisor, int centered,
                                   int root) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (out != t && out != REDUX_F64) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  double *d = malloc((size_t)n * sizeof *d);
  if (d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    if (!centered && t == REDUX_F32) {
      const double v = f32_squares_sum((const float *)x + row * n, n) / divisor;
      store_value(m2, row, out, root ? sqrt(v) : v);
      continue;
    }
    double sum16;
    if (!centered && squares_sum_16((const uint16_t *)x + row * n, n, t, &sum16)) {
      const double v = sum16 / divisor;
      store_value(m2, row, out, root ? sqrt(v) : v);
      continue;
    }
    load_values(x, row, n, t, d);
    if (centered) {
      const double m = lanes_sum(d, NULL, n) / (double)n;
      deviations(d, n, m);
      store_value(mean, row, out, m);
    }
    const double v = lanes_sum(d, d, n) / divisor;
    store_value(m2, row, out, root ? sqrt(v) : v);
  }
  free(d);
  return REDUX_OK;
}

redux_status redux_cpu_moment_row_pieces(const void *x, double *m2, double *mean, int64_t piece_begin,
                                         int64_t piece_end, int64_t n, redux_dtype t) {
  if (n < 1 || piece_begin < 0 || piece_end < piece_begin) return REDUX_ERR_SHAPE;
  const int64_t pieces = redux_row_pieces(n);
  for (int64_t i = piece_begin; i < piece_end; ++i) {
    const redux_status s = redux_cpu_moment_rows(row_piece_start(x, i, n, t), m2 + i, mean + i, 0, 1,
                                                 row_piece_length(i % pieces, n), t, REDUX_F64, 1.0, 1, 0);
    if (s != REDUX_OK) return s;
  }
  return REDUX_OK;
}

redux_status redux_cpu_moment_rows_combine(const double *pieces_m2, const double *pieces_mean, void *m2, void *mean,
                                           int64_t row_begin, int64_t row_end, int64_t n, redux_dtype out,
                                           double divisor, int root) {
  if (out != REDUX_F64 && out != REDUX_F32 && out != REDUX_F16 && out != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  const int64_t pieces = redux_row_pieces(n);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const double *pm = pieces_mean + row * pieces, *pq = pieces_m2 + row * pieces;
    double s = 0.0;
    for (int64_t j = 0; j < pieces; ++j) s += (double)row_piece_length(j, n) * pm[j];
    const double m = s / (double)n;
    double q = 0.0;
    for (int64_t j = 0; j < pieces; ++j) {
      const double d = pm[j] - m;
      q += pq[j] + (double)row_piece_length(j, n) * d * d;
    }
    const double v = q / divisor;
    store_value(m2, row, out, root ? sqrt(v) : v);
    store_value(mean, row, out, m);
  }
  return REDUX_OK;
}
