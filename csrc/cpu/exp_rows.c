/* Exponential sums of rows on the CPU (redux.h, redux_cpu_exp_rows):
 * softmax, log_softmax and logsumexp of [rows, n] along n, C11.
 *
 * One call takes rows [row_begin, row_end) on one thread; each row is read
 * once into fp64 (with its maximum), then the sum of exp(x - m) runs in
 * XLANES fp64 lanes (element i into lane i % XLANES) combined by a fixed
 * pairwise tree, then the outputs are written: a row's bits depend only on
 * its values and n. exp is redux's own (redux_exp below): plain IEEE
 * arithmetic the compiler vectorizes, the same bits on every machine and
 * C library. Compiled with -ffp-contract=off (setup.py).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

#define LN2_HI 0x1.62e42fee00000p-1 /* ln2's leading bits: k * LN2_HI is exact */
#define LN2_LO 0x1.a39ef35793c76p-33
/* p = exp(r)'s Taylor polynomial to degree 12 at r, by Horner's rule;
 * CONST(c) makes the constant c of p's type. */
#define EXP_TAYLOR(p, r, CONST)              \
  do {                                       \
    p = CONST(1.0 / 479001600.0);            \
    p = p * (r) + CONST(1.0 / 39916800.0);   \
    p = p * (r) + CONST(1.0 / 3628800.0);    \
    p = p * (r) + CONST(1.0 / 362880.0);     \
    p = p * (r) + CONST(1.0 / 40320.0);      \
    p = p * (r) + CONST(1.0 / 5040.0);       \
    p = p * (r) + CONST(1.0 / 720.0);        \
    p = p * (r) + CONST(1.0 / 120.0);        \
    p = p * (r) + CONST(1.0 / 24.0);         \
    p = p * (r) + CONST(1.0 / 6.0);          \
    p = p * (r) + CONST(0.5);                \
    p = p * (r) + CONST(1.0);                \
    p = p * (r) + CONST(1.0);                \
  } while (0)
/* exp(x) in fp64 for the arguments a row gives (x - max <= 0, or inf and
 * NaN): x = k ln2 + r with k = round(x / ln2) and |r| <= ln2 / 2 (ln2 in
 * two parts, so k ln2 is exact), exp(r) by its Taylor polynomial to degree
 * 12 (the first term left out is below 2^-52 relative), times 2^k. Within a
 * few ulp on [-708, 709.4]; below -708 0 (the true value is under 2^-1021,
 * lost beside the row maximum's 1; exp(-inf) = 0), above 709.4 inf, NaN
 * for NaN. Branch-free, so the loops that call it vectorize. */
static inline double redux_exp(double x) {
  const double shifter = 0x1.8p52; /* adding it rounds to an integer, kept in the low bits */
  const double y = x < -708.0 ? -708.0 : x;
  const double kd = y * 0x1.71547652b82fep0 + shifter;
  int64_t kbits, sbits;
  memcpy(&kbits, &kd, sizeof kbits);
  memcpy(&sbits, &shifter, sizeof sbits);
  const double kf = kd - shifter;
  const double r = (y - kf * LN2_HI) - kf * LN2_LO;
  double p;
  EXP_TAYLOR(p, r, (double));
  const uint64_t bits = (uint64_t)(kbits - sbits + 1023) << 52; /* 2^k; k = 1024 gives inf */
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return x < -708.0 ? 0.0 : x > 709.5 ? (double)INFINITY : p * scale;
}

/* redux_exp on the lanes of a vector: the same bits as redux_exp. */
#define EXP_LANES(NAME, V, VI, VU, SPLAT, SELECT)                                                  \
  static inline __attribute__((always_inline)) V NAME(V x) {                                       \
    const double shifter = 0x1.8p52;                                                               \
    const V y = SELECT(x < SPLAT(-708.0), SPLAT(-708.0), x);                                       \
    const V kd = y * SPLAT(0x1.71547652b82fep0) + SPLAT(shifter);                                  \
    const V kf = kd - SPLAT(shifter);                                                              \
    const V r = (y - kf * SPLAT(LN2_HI)) - kf * SPLAT(LN2_LO);                                     \
    V p;                                                                                           \
    EXP_TAYLOR(p, r, SPLAT);                                                                       \
    const VU bits = (VU)((VI)kd - (VI)SPLAT(shifter) + 1023) << 52;                                \
    return SELECT(x < SPLAT(-708.0), SPLAT(0.0),                                                   \
                  SELECT(x > SPLAT(709.5), SPLAT((double)INFINITY), p * (V)bits));                 \
  }
EXP_LANES(redux_exp4, v4d, v4i, v4u, splat, select4)
#ifdef REDUX_EIGHT_LANES
EXP_LANES(redux_exp8, v8d, v8i, v8u, splat8, select8)
#endif

/* The row as fp64 into d[0, n), and its maximum (NaN if any element is). */
static REDUX_HOT double load_row(const void *x, int64_t row, int64_t n, redux_dtype t, double *d) {
  load_values(x, row, n, t, d);
  /* four running maxima, then theirs (a maximum is exact in any order) */
  v4d m4 = splat(-INFINITY);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4d v;
    memcpy(&v, d + i, sizeof v);
    m4 = select4((v > m4) | (v != v), v, m4);
  }
  double m = -INFINITY;
  for (int j = 0; j < 4; ++j) m = (m4[j] > m || m4[j] != m4[j]) ? m4[j] : m;
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
#endif

static double exp_sum(const double *d, double *e, int64_t n, double shift) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) return exp_sum8(d, e, n, shift);
#endif
  return exp_sum4(d, e, n, shift);
}

/* y[i] = d[i] / by (divide) or (d[i] - shift) - by, rounded once to t. */
#define STORE_ROW(T, CONVERT)                                              \
  do {                                                                     \
    T *p = (T *)y + row * n;                                               \
    if (divide)                                                            \
      for (int64_t i = 0; i < n; ++i) p[i] = CONVERT(d[i] / by);           \
    else                                                                   \
      for (int64_t i = 0; i < n; ++i) p[i] = CONVERT((d[i] - shift) - by); \
  } while (0)
static REDUX_HOT void store_row(void *y, int64_t row, int64_t n, redux_dtype t, const double *d, int divide,
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
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX && op != REDUX_EXP_LOGSUMEXP) return REDUX_ERR_SHAPE;
  double *d = malloc((size_t)n * sizeof *d);
  if (d == NULL) return REDUX_ERR_SHAPE;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const double m = load_row(x, row, n, t, d);
    if (op == REDUX_EXP_LOGSUMEXP) {
      /* torch's rule: only a finite maximum shifts the values */
      const double shift = isfinite(m) ? m : 0.0;
      const double v = log(exp_sum(d, NULL, n, shift)) + shift;
      switch (t) {
        case REDUX_F32: ((float *)y)[row] = TO_F32(v); break;
        case REDUX_F16: ((uint16_t *)y)[row] = TO_F16(v); break;
        default: ((uint16_t *)y)[row] = TO_BF16(v); break;
      }
    } else if (op == REDUX_EXP_SOFTMAX) {
      const double s = exp_sum(d, d, n, m);
      store_row(y, row, n, t, d, 1, 0.0, s);
    } else {
      /* (x - m) - log(s), the shift and the log subtracted in that order */
      const double s = exp_sum(d, NULL, n, m);
      store_row(y, row, n, t, d, 0, m, log(s));
    }
  }
  free(d);
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
#endif

static void backward_values(double *g, const double *y, int64_t n, double s, int log_form) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) {
    backward_values8(g, y, n, s, log_form);
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
