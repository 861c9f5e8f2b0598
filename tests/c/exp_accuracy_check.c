/* redux's CPU exp (csrc/cpu/exp.h) against long double expl: the largest
 * error in ulps over random arguments in [-708, 709.5] and the row kernels'
 * range [-40, 0]; the four-lane forms (baseline, and AVX2 with FMA) and
 * the eight-lane form give the scalar form's bits; the edges (0, -708,
 * 709.5, +-inf, NaN). Built by tests/test_reliability.py with the
 * extension's flags; prints one line "max_ulp X", then "ok" or what
 * failed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exp.h"
#include "xorshift.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

/* |got - want| in units of the last place of the double nearest want */
static double ulps(double got, long double want) {
  const double w = (double)want;
  const double ulp = nextafter(fabs(w), INFINITY) - fabs(w);
  return (double)(fabsl((long double)got - want) / ulp);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#ifdef REDUX_EIGHT_LANES
static REDUX_AVX512 void exp8(const double *x, double *y) {
  v8d v;
  memcpy(&v, x, sizeof v);
  v = redux_exp8(v);
  memcpy(y, &v, sizeof v);
}
static REDUX_AVX2_FMA void exp4_avx2(const double *x, double *y) {
  v4d v;
  memcpy(&v, x, sizeof v);
  v = redux_exp4_avx2(v);
  memcpy(y, &v, sizeof v);
}
#endif

int main(void) {
  int failed = 0;
  double worst = 0.0;
  for (int i = 0; i < 2000000; ++i) {
    const double u = (double)(xorshift64star(&rng_state) >> 11) / 9007199254740992.0;
    double x[8];
    for (int k = 0; k < 8; ++k) {
      const double v = (double)(xorshift64star(&rng_state) >> 11) / 9007199254740992.0;
      x[k] = (i & 1) ? -708.0 + v * 1417.5 : -40.0 * v * u;
    }
    v4d x4;
    memcpy(&x4, x, sizeof x4);
    const v4d y4 = redux_exp4(x4);
#ifdef REDUX_EIGHT_LANES
    double y8[8], y4x[4];
    const int eight = redux_cpu_eight_lanes(), fma_lanes = redux_cpu_fma_lanes();
    if (eight) exp8(x, y8);
    if (fma_lanes) exp4_avx2(x, y4x);
#endif
    for (int k = 0; k < 8; ++k) {
      const double y = redux_exp(x[k]);
      const double e = ulps(y, expl((long double)x[k]));
      if (e > worst) worst = e;
      if (k < 4 && !same_bits(y, y4[k])) failed = printf("four lanes differ at %a\n", x[k]);
#ifdef REDUX_EIGHT_LANES
      if (eight && !same_bits(y, y8[k])) failed = printf("eight lanes differ at %a\n", x[k]);
      if (fma_lanes && k < 4 && !same_bits(y, y4x[k])) failed = printf("AVX2 + FMA lanes differ at %a\n", x[k]);
#endif
    }
  }
  printf("max_ulp %.3f\n", worst);
  if (worst > 2.0) failed = printf("more than 2 ulp\n");
  const double edges[][2] = {{0.0, 1.0}, {-0.0, 1.0}, {-709.0, 0.0}, {710.0, INFINITY},
                             {-INFINITY, 0.0}, {INFINITY, INFINITY}};
  for (int k = 0; k < 6; ++k)
    if (!same_bits(redux_exp(edges[k][0]), edges[k][1])) failed = printf("exp(%a) is %a\n", edges[k][0], redux_exp(edges[k][0]));
  if (!isnan(redux_exp(NAN))) failed = printf("exp(NaN) is not NaN\n");
  if (ulps(redux_exp(-708.0), expl(-708.0L)) > 2.0 || ulps(redux_exp(709.5), expl(709.5L)) > 2.0)
    failed = printf("the range's ends are off\n");
  if (!failed) printf("ok\n");
  return failed != 0;
}
