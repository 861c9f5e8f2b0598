/* Elementwise powers on the CPU (redux.h, redux_cpu_pow_each), C11.
 *
 * One scalar code path for every element, so an element's bits do not
 * depend on its place in the buffer, the batch or the threads (a vector
 * loop with a scalar tail rounds the two parts differently). The
 * exponents torch computes by multiplications and roots take the same
 * operations here; every other exponent takes the C library's pow, in fp64.
 */
#include <math.h>
#include <stdint.h>

#include "redux/redux.h"

/* x^p by the operations torch's pow takes for these exponents, in T. */
#define SPECIAL_POWERS(T, SQRT)                                             \
  if (p == 2.0) { for (int64_t i = b; i < e; ++i) y[i] = x[i] * x[i]; return; }          \
  if (p == 3.0) { for (int64_t i = b; i < e; ++i) y[i] = x[i] * x[i] * x[i]; return; }   \
  if (p == -2.0) { for (int64_t i = b; i < e; ++i) y[i] = (T)1 / (x[i] * x[i]); return; } \
  if (p == 0.5) { for (int64_t i = b; i < e; ++i) y[i] = SQRT(x[i]); return; }           \
  if (p == -0.5) { for (int64_t i = b; i < e; ++i) y[i] = (T)1 / SQRT(x[i]); return; }   \
  if (p == -1.0) { for (int64_t i = b; i < e; ++i) y[i] = (T)1 / x[i]; return; }

static void pow_f64(const double *x, double *y, double p, int64_t b, int64_t e) {
  SPECIAL_POWERS(double, sqrt)
  for (int64_t i = b; i < e; ++i) y[i] = pow(x[i], p);
}

/* float32: the fp64 power rounded once (torch's scalar loop does the same). */
static void pow_f32(const float *x, float *y, double p, int64_t b, int64_t e) {
  SPECIAL_POWERS(float, sqrtf)
  for (int64_t i = b; i < e; ++i) y[i] = (float)pow((double)x[i], p);
}

#undef SPECIAL_POWERS

redux_status redux_cpu_pow_each(const void *x, void *y, double exponent, int64_t begin, int64_t end,
                                redux_dtype t) {
  if (begin < 0 || begin > end) return REDUX_ERR_SHAPE;
  switch (t) {
    case REDUX_F64: pow_f64((const double *)x, (double *)y, exponent, begin, end); return REDUX_OK;
    case REDUX_F32: pow_f32((const float *)x, (float *)y, exponent, begin, end); return REDUX_OK;
    default: return REDUX_ERR_DTYPE;
  }
}
