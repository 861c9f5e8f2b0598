/* Exponential sums of rows on the CPU (redux.h, redux_cpu_exp_rows):
 * softmax, log_softmax and logsumexp of [rows, n] along n, C11.
 *
 * One call takes rows [row_begin, row_end) on one thread; each row is read
 * once into fp64 (with its maximum), then the sum of exp(x - m) runs in
 * XLANES fp64 lanes (element i into lane i % XLANES) combined by a fixed
 * pairwise tree, then the outputs are written: a row's bits depend only on
 * its values and n. exp is redux's own (exp.h): plain IEEE arithmetic and
 * a table, vectorized, the same bits on every machine and C library.
 * Compiled with -ffp-contract=off (setup.py).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "rows.h"

/* The row as fp64 into d[0, n), and its maximum (NaN if any element is). */
static REDUX_HOT double load_row(const void *x, int64_t row, int64_t n, redux_dtype t, double *d) {
  load_values(x, row, n, t, d);
  /* four running maxima of four lanes each, so the compares overlap; then
   * theirs (a maximum is exact in any order) */
  v4d m4[4] = {splat(-INFINITY), splat(-INFINITY), splat(-INFINITY), splat(-INFINITY)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 4; ++k) {
      v4d v;
      memcpy(&v, d + i + 4 * k, sizeof v);
      m4[k] = select4((v > m4[k]) | (v != v), v, m4[k]);
    }
  double m = -INFINITY;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 4; ++j) m = (m4[k][j] > m || m4[k][j] != m4[k][j]) ? m4[k][j] : m;
  for (; i < n; ++i) m = (d[i] > m || d[i] != d[i]) ? d[i] : m;
  return m;
}

/* The sum of exp(d[i] - shift) over the row in XLANES lanes (element i
 * into lane i % XLANES), combined by a fixed pairwise tree; the
 * exponentials written to e[0, n) unless e is NULL. W: lanes a vector. */
#define EXP_SUM(NAME, ATTR, V, W, EXP, SPLAT)                                 \
  static ATTR double NAME(const double *d, double *e, int64_t n, double shift) { \
    V acc[XLANES / W] = {{0}}; /* acc[k] holds lanes W k to W k + W - 1 */    \
    int64_t i = 0;                                                            \
    for (; i + XLANES <= n; i += XLANES)                                      \
      for (int k = 0; k < XLANES / W; ++k) {                                  \
        V v;                                                                  \
        memcpy(&v, d + i + W * k, sizeof v);                                  \
        v = EXP(v - SPLAT(shift));                                            \
        if (e != NULL) memcpy(e + i + W * k, &v, sizeof v);                   \
        acc[k] += v;                                                          \
      }                                                                       \
    double lane[XLANES];                                                      \
    memcpy(lane, acc, sizeof lane);                                           \
    for (int j = 0; i + j < n; ++j) {                                         \
      const double v = redux_exp(d[i + j] - shift);                           \
      if (e != NULL) e[i + j] = v;                                            \
      lane[j] += v;                                                           \
    }                                                                         \
    return lanes_tree(lane);                                                  \
  }
EXP_SUM(exp_sum4, REDUX_HOT, v4d, 4, redux_exp4, splat)
#ifdef REDUX_EIGHT_LANES
EXP_SUM(exp_sum8, REDUX_AVX512, v8d, 8, redux_exp8, splat8)
EXP_SUM(exp_sum4_avx2, REDUX_AVX2_FMA, v4d, 4, redux_exp4_avx2, splat4_avx2)
#endif

static double exp_sum(const double *d, double *e, int64_t n, double shift) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) return exp_sum8(d, e, n, shift);
  if (redux_cpu_fma_lanes()) return exp_sum4_avx2(d, e, n, shift);
#endif
  return exp_sum4(d, e, n, shift);
}

/* y[i] = d[i] * by (scale) or (d[i] - shift) - by, rounded once to t. */
#define STORE_ROW(T, CONVERT)                                              \
  do {                                                                     \
    T *p = (T *)y + row * n;                                               \
    if (scale)                                                             \
      for (int64_t i = 0; i < n; ++i) p[i] = CONVERT(d[i] * by);           \
    else                                                                   \
      for (int64_t i = 0; i < n; ++i) p[i] = CONVERT((d[i] - shift) - by); \
  } while (0)
static REDUX_HOT void store_row(void *y, int64_t row, int64_t n, redux_dtype t, const double *d, int scale,
                                double shift, double by) {
  switch (t) {
    case REDUX_F32: STORE_ROW(float, TO_F32); break;
    case REDUX_F16: STORE_ROW(uint16_t, TO_F16); break;
    default: STORE_ROW(uint16_t, TO_BF16); break;
  }
}

redux_status redux_cpu_exp_rows(redux_exp_op op, const void *x, void *y, int64_t row_begin, int64_t row_end,
                                int64_t n, redux_dtype t) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX && op != REDUX_EXP_LOGSUMEXP && op != REDUX_EXP_PARTS)
    return REDUX_ERR_SHAPE;
  double *d = malloc((size_t)n * sizeof *d);
  if (d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const double m = load_row(x, row, n, t, d);
    if (op == REDUX_EXP_PARTS) {
      ((double *)y)[2 * row] = m;
      ((double *)y)[2 * row + 1] = exp_sum(d, NULL, n, isfinite(m) ? m : 0.0);
    } else if (op == REDUX_EXP_LOGSUMEXP) {
      /* torch's rule: only a finite maximum shifts the values */
      const double shift = isfinite(m) ? m : 0.0;
      store_value(y, row, t, log(exp_sum(d, NULL, n, shift)) + shift);
    } else if (op == REDUX_EXP_SOFTMAX) {
      /* times 1 / s: a division per element would cost more than the exponential */
      const double s = exp_sum(d, d, n, m);
      store_row(y, row, n, t, d, 1, 0.0, 1.0 / s);
    } else {
      /* (x - m) - log(s), the shift and the log subtracted in that order */
      const double s = exp_sum(d, NULL, n, m);
      store_row(y, row, n, t, d, 0, m, log(s));
    }
  }
  free(d);
  return REDUX_OK;
}

redux_status redux_cpu_exp_rows_apply(redux_exp_op op, const void *x, const double *parts, void *y, int64_t row_begin,
                                      int64_t row_end, int64_t n, redux_dtype t) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX) return REDUX_ERR_SHAPE;
  double *d = malloc((size_t)n * sizeof *d);
  if (d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const double m = parts[2 * row], s = parts[2 * row + 1];
    const int finite = isfinite(m); /* else the row is all NaN */
    load_values(x, row, n, t, d);
    if (op == REDUX_EXP_SOFTMAX) {
      redux_exp_values(d, n, m);
      store_row(y, row, n, t, d, 1, 0.0, finite ? 1.0 / s : NAN);
    } else {
      store_row(y, row, n, t, d, 0, m, finite ? log(s) : NAN);
    }
  }
  free(d);
  return REDUX_OK;
}

/* The largest of a and b, NaN if either is. */
static double max_or_nan(double a, double b) { return (b > a || b != b) ? b : a; }

redux_status redux_cpu_exp_row_pieces(const void *x, double *parts, int64_t piece_begin, int64_t piece_end,
                                      int64_t n, redux_dtype t) {
  if (n < 1 || piece_begin < 0 || piece_end < piece_begin) return REDUX_ERR_SHAPE;
  const int64_t pieces = redux_row_pieces(n);
  for (int64_t i = piece_begin; i < piece_end; ++i) {
    const redux_status s = redux_cpu_exp_rows(REDUX_EXP_PARTS, row_piece_start(x, i, n, t), parts + 2 * i, 0, 1,
                                              row_piece_length(i % pieces, n), t);
    if (s != REDUX_OK) return s;
  }
  return REDUX_OK;
}

redux_status redux_cpu_exp_rows_combine(redux_exp_op op, const double *parts, void *y, int64_t row_begin,
                                        int64_t row_end, int64_t n, redux_dtype t) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_LOGSUMEXP && op != REDUX_EXP_PARTS) return REDUX_ERR_SHAPE;
  const int64_t pieces = redux_row_pieces(n);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const double *p = parts + 2 * row * pieces;
    double top = -INFINITY;
    for (int64_t j = 0; j < pieces; ++j) top = max_or_nan(top, p[2 * j]);
    const double shift = isfinite(top) ? top : 0.0;
    double s = 0.0;
    for (int64_t j = 0; j < pieces; ++j) s += p[2 * j + 1] * redux_exp((isfinite(p[2 * j]) ? p[2 * j] : shift) - shift);
    if (op == REDUX_EXP_PARTS) {
      ((double *)y)[2 * row] = top;
      ((double *)y)[2 * row + 1] = s;
    } else {
      store_value(y, row, t, log(s) + shift);
    }
  }
  return REDUX_OK;
}

/* dx = y * (g - s) (softmax) or g - exp(y) * s (log_softmax), into g. */
#define BACKWARD_VALUES(NAME, ATTR, V, W, EXP, SPLAT)                                       \
  static ATTR void NAME(double *g, const double *y, int64_t n, double s, int log_form) {   \
    int64_t i = 0;                                                                          \
    for (; i + W <= n; i += W) {                                                            \
      V gv, yv;                                                                             \
      memcpy(&gv, g + i, sizeof gv);                                                        \
      memcpy(&yv, y + i, sizeof yv);                                                        \
      gv = log_form ? gv - EXP(yv) * SPLAT(s) : yv * (gv - SPLAT(s));                       \
      memcpy(g + i, &gv, sizeof gv);                                                        \
    }                                                                                       \
    for (; i < n; ++i) g[i] = log_form ? g[i] - redux_exp(y[i]) * s : y[i] * (g[i] - s);    \
  }
BACKWARD_VALUES(backward_values4, REDUX_HOT, v4d, 4, redux_exp4, splat)
#ifdef REDUX_EIGHT_LANES
BACKWARD_VALUES(backward_values8, REDUX_AVX512, v8d, 8, redux_exp8, splat8)
BACKWARD_VALUES(backward_values4_avx2, REDUX_AVX2_FMA, v4d, 4, redux_exp4_avx2, splat4_avx2)
#endif

static void backward_values(double *g, const double *y, int64_t n, double s, int log_form) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) {
    backward_values8(g, y, n, s, log_form);
    return;
  }
  if (redux_cpu_fma_lanes()) {
    backward_values4_avx2(g, y, n, s, log_form);
    return;
  }
#endif
  backward_values4(g, y, n, s, log_form);
}

redux_status redux_cpu_exp_rows_backward(redux_exp_op op, const void *g, const void *y, void *dx, int64_t row_begin,
                                         int64_t row_end, int64_t n, redux_dtype t) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX) return REDUX_ERR_SHAPE;
  const int log_form = op == REDUX_EXP_LOG_SOFTMAX;
  double *gd = malloc(2 * (size_t)n * sizeof *gd);
  if (gd == NULL) return REDUX_ERR_SHAPE;
  double *yd = gd + n;
  for (int64_t row = row_begin; row < row_end; ++row) {
    load_values(g, row, n, t, gd);
    load_values(y, row, n, t, yd);
    const double s = lanes_sum(gd, log_form ? NULL : yd, n);
    backward_values(gd, yd, n, s, log_form);
    store_row(dx, row, n, t, gd, 0, 0.0, 0.0);
  }
  free(gd);
  return REDUX_OK;
}
