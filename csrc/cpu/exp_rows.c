/* Exponential sums of rows on the CPU (redux.h, redux_cpu_exp_rows):
 * softmax, log_softmax and logsumexp of [rows, n] along n, C11.
 *
 * One call takes rows [row_begin, row_end) on one thread; its maximum is
 * taken (float32 rows in place, others as they are read once into fp64),
 * then the sum of exp(x - m) runs in
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

/* A row's maximum as fp64, NaN if any element is: the lanes take element i
 * into lane i % XLANES, then the lanes in order and the tail, each step
 * keeping v where v > m or v is NaN (so which zero or NaN, too, is fixed). */
#define MAX_STEP(m, v) (((v) > (m) || (v) != (v)) ? (v) : (m))

/* The row as fp64 into d[0, n), and its maximum. */
static REDUX_HOT double load_row(const void *x, int64_t row, int64_t n, redux_dtype t, double *d) {
  load_values(x, row, n, t, d);
  /* four running maxima of four lanes each, so the compares overlap */
  v4d m4[4] = {splat(-INFINITY), splat(-INFINITY), splat(-INFINITY), splat(-INFINITY)};
  int64_t i = 0;
  for (; i + XLANES <= n; i += XLANES)
    for (int k = 0; k < 4; ++k) {
      v4d v;
      memcpy(&v, d + i + 4 * k, sizeof v);
      m4[k] = select4((v > m4[k]) | (v != v), v, m4[k]);
    }
  double lane[XLANES], m = -INFINITY;
  memcpy(lane, m4, sizeof lane);
  for (int j = 0; j < XLANES; ++j) m = MAX_STEP(m, lane[j]);
  for (; i < n; ++i) m = MAX_STEP(m, d[i]);
  return m;
}

/* A float32 row's maximum, read in place: load_row's lanes and steps on
 * the floats, whose conversion to fp64 is exact and keeps their order, so
 * the same value (and the same zero or NaN). */
static REDUX_HOT double row_max_f32(const float *p, int64_t n) {
  v8f m8[XLANES / 8];
  for (int k = 0; k < XLANES / 8; ++k) m8[k] = (v8f){0} - INFINITY;
  int64_t i = 0;
  for (; i + XLANES <= n; i += XLANES)
    for (int k = 0; k < XLANES / 8; ++k) {
      v8f v;
      memcpy(&v, p + i + 8 * k, sizeof v);
      const v8si take = (v > m8[k]) | (v != v);
      m8[k] = (v8f)(((v8si)v & take) | ((v8si)m8[k] & ~take));
    }
  float lane[XLANES];
  memcpy(lane, m8, sizeof lane);
  double m = -INFINITY;
  for (int j = 0; j < XLANES; ++j) m = MAX_STEP(m, (double)lane[j]);
  for (; i < n; ++i) m = MAX_STEP(m, (double)p[i]);
  return m;
}

/* W lanes of a row from p: fp64 as they are, float32 converted (exactly). */
static inline __attribute__((always_inline)) v4d lanes4(const double *p) {
  v4d v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline __attribute__((always_inline)) v4d lanes4_f32(const float *p) {
  v4f f;
  memcpy(&f, p, sizeof f);
  return __builtin_convertvector(f, v4d);
}

/* The sum of exp(d[i] - shift) over the row in XLANES lanes (element i
 * into lane i % XLANES), combined by a fixed pairwise tree; the
 * exponentials written to e[0, n) unless e is NULL. nonpositive: every
 * d[i] - shift is at most 0 or NaN, so the exp without its overflow test
 * (EXP_NONPOSITIVE) gives the same bits. W: lanes a vector; T the row's
 * element (fp64, or float32 read in place: the same values). */
/* EXP_SUM's main loop, in its scope (i, n, d, e, shift, acc) */
#define EXP_SUM_LOOP(V, W, LANES, EXP, SPLAT)                                \
  for (; i + XLANES <= n; i += XLANES)                                       \
    for (int k = 0; k < XLANES / W; ++k) {                                   \
      const V v = EXP(LANES(d + i + W * k) - SPLAT(shift));                  \
      if (e != NULL) memcpy(e + i + W * k, &v, sizeof v);                    \
      acc[k] += v;                                                           \
    }
#define EXP_SUM(NAME, ATTR, T, V, W, LANES, EXP, EXP_NONPOSITIVE, SPLAT)                    \
  static ATTR double NAME(const T *d, double *e, int64_t n, double shift, int nonpositive) { \
    V acc[XLANES / W] = {{0}}; /* acc[k] holds lanes W k to W k + W - 1 */                   \
    int64_t i = 0;                                                                           \
    if (nonpositive)                                                                         \
      EXP_SUM_LOOP(V, W, LANES, EXP_NONPOSITIVE, SPLAT)                                      \
    else                                                                                     \
      EXP_SUM_LOOP(V, W, LANES, EXP, SPLAT)                                                  \
    double lane[XLANES];                                                                     \
    memcpy(lane, acc, sizeof lane);                                                          \
    for (int j = 0; i + j < n; ++j) {                                                        \
      const double v = redux_exp((double)d[i + j] - shift);                                  \
      if (e != NULL) e[i + j] = v;                                                           \
      lane[j] += v;                                                                          \
    }                                                                                        \
    return lanes_tree(lane);                                                                 \
  }
EXP_SUM(exp_sum4, REDUX_HOT, double, v4d, 4, lanes4, redux_exp4, redux_exp4_nonpositive, splat)
EXP_SUM(exp_sum4_f32, REDUX_HOT, float, v4d, 4, lanes4_f32, redux_exp4, redux_exp4_nonpositive, splat)
#ifdef REDUX_EIGHT_LANES
static inline __attribute__((always_inline)) REDUX_AVX512 v8d lanes8(const double *p) {
  return (v8d)_mm512_loadu_pd(p);
}
static inline __attribute__((always_inline)) REDUX_AVX512 v8d lanes8_f32(const float *p) {
  return (v8d)REDUX_LANES8_F32(p);
}
EXP_SUM(exp_sum8, REDUX_AVX512, double, v8d, 8, lanes8, redux_exp8, redux_exp8_nonpositive, splat8)
EXP_SUM(exp_sum8_f32, REDUX_AVX512, float, v8d, 8, lanes8_f32, redux_exp8, redux_exp8_nonpositive, splat8)
EXP_SUM(exp_sum4_avx2, REDUX_AVX2_FMA, double, v4d, 4, lanes4, redux_exp4_avx2, redux_exp4_avx2_nonpositive,
        splat4_avx2)
EXP_SUM(exp_sum4_avx2_f32, REDUX_AVX2_FMA, float, v4d, 4, lanes4_f32, redux_exp4_avx2,
        redux_exp4_avx2_nonpositive, splat4_avx2)
#endif

/* The form the CPU runs (the same bits in every form); x is the row, of
 * fp64 or, with f32, of float32. */
static double exp_sum(const void *x, int f32, double *e, int64_t n, double shift, int nonpositive) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes())
    return f32 ? exp_sum8_f32(x, e, n, shift, nonpositive) : exp_sum8(x, e, n, shift, nonpositive);
  if (redux_cpu_fma_lanes())
    return f32 ? exp_sum4_avx2_f32(x, e, n, shift, nonpositive) : exp_sum4_avx2(x, e, n, shift, nonpositive);
#endif
  return f32 ? exp_sum4_f32(x, e, n, shift, nonpositive) : exp_sum4(x, e, n, shift, nonpositive);
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

/* store_row's (x[i] - shift) - by for a float32 row read in place. */
static REDUX_HOT void store_log_form_f32(float *y, const float *x, int64_t n, double shift, double by) {
  for (int64_t i = 0; i < n; ++i) y[i] = TO_F32(((double)x[i] - shift) - by);
}

/* Whether a call needs an fp64 row buffer: float32 rows are read in place,
 * but a softmax keeps its exponentials; other dtypes go through their copy. */
static int needs_fp64_row(redux_exp_op op, redux_dtype t) { return t != REDUX_F32 || op == REDUX_EXP_SOFTMAX; }

redux_status redux_cpu_exp_rows(redux_exp_op op, const void *x, void *y, int64_t row_begin, int64_t row_end,
                                int64_t n, redux_dtype t) {
  if (t != REDUX_F32 && t != REDUX_F16 && t != REDUX_BF16) return REDUX_ERR_DTYPE;
  if (n < 1 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX && op != REDUX_EXP_LOGSUMEXP && op != REDUX_EXP_PARTS)
    return REDUX_ERR_SHAPE;
  const int f32 = t == REDUX_F32, copied = needs_fp64_row(op, t);
  double *d = copied ? malloc((size_t)n * sizeof *d) : NULL; /* the fp64 row, or a softmax's exponentials */
  if (copied && d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float *xf = f32 ? (const float *)x + row * n : NULL;
    const double m = f32 ? row_max_f32(xf, n) : load_row(x, row, n, t, d);
    const void *v = f32 ? (const void *)xf : d;
    /* x - m is at most 0 or NaN for any m, the values' maximum (x - inf is
     * -inf or NaN; a row with -inf as its maximum is all -inf) */
    if (op == REDUX_EXP_PARTS) {
      ((double *)y)[2 * row] = m;
      ((double *)y)[2 * row + 1] = exp_sum(v, f32, NULL, n, isfinite(m) ? m : 0.0, isfinite(m));
    } else if (op == REDUX_EXP_LOGSUMEXP) {
      /* torch's rule: only a finite maximum shifts the values */
      const double shift = isfinite(m) ? m : 0.0;
      store_value(y, row, t, log(exp_sum(v, f32, NULL, n, shift, isfinite(m))) + shift);
    } else if (op == REDUX_EXP_SOFTMAX) {
      /* times 1 / s: a division per element would cost more than the exponential */
      const double s = exp_sum(v, f32, d, n, m, 1);
      store_row(y, row, n, t, d, 1, 0.0, 1.0 / s);
    } else {
      /* (x - m) - log(s), the shift and the log subtracted in that order */
      const double s = exp_sum(v, f32, NULL, n, m, 1);
      if (f32) store_log_form_f32((float *)y + row * n, xf, n, m, log(s));
      else store_row(y, row, n, t, d, 0, m, log(s));
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
  const int f32 = t == REDUX_F32, copied = needs_fp64_row(op, t);
  double *d = copied ? malloc((size_t)n * sizeof *d) : NULL;
  if (copied && d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    /* the exp keeps its overflow test: parts are the caller's */
    const double m = parts[2 * row], s = parts[2 * row + 1];
    const int finite = isfinite(m); /* else the row is all NaN */
    const float *xf = f32 ? (const float *)x + row * n : NULL;
    if (op == REDUX_EXP_SOFTMAX) {
      if (f32) {
        exp_sum(xf, 1, d, n, m, 0); /* its exponentials, the same as redux_exp_values' */
      } else {
        load_values(x, row, n, t, d);
        redux_exp_values(d, n, m);
      }
      store_row(y, row, n, t, d, 1, 0.0, finite ? 1.0 / s : NAN);
    } else if (f32) {
      store_log_form_f32((float *)y + row * n, xf, n, m, finite ? log(s) : NAN);
    } else {
      load_values(x, row, n, t, d);
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
