/* redux's CPU exp (csrc/cpu/exp.h) against long double expl: the largest
 * error in ulps over random arguments in [-708, 709.5] and the row kernels'
 * range [-40, 0]; the four-lane forms (baseline, and AVX2 with FMA) and
 * the eight-lane form give the scalar form's bits, and so do their forms
 * without the overflow test on the same arguments made nonpositive and on
 * the nonpositive edges; the edges (0, -708, 709.5, +-inf, NaN). Built by
 * tests/test_reliability.py with the extension's flags; prints one line
 * "max_ulp X", then "ok" or what failed. */
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

/* Each vector form on 8 arguments (the four-lane ones on two halves) into y,
 * nonpositive: the forms without the overflow test. */
static void exp4_base(const double *x, double *y, int nonpositive) {
  for (int h = 0; h < 8; h += 4) {
    v4d v;
    memcpy(&v, x + h, sizeof v);
    v = nonpositive ? redux_exp4_nonpositive(v) : redux_exp4(v);
    memcpy(y + h, &v, sizeof v);
  }
}
#ifdef REDUX_EIGHT_LANES
static REDUX_AVX512 void exp8(const double *x, double *y, int nonpositive) {
  v8d v;
  memcpy(&v, x, sizeof v);
  v = nonpositive ? redux_exp8_nonpositive(v) : redux_exp8(v);
  memcpy(y, &v, sizeof v);
}
static REDUX_AVX2_FMA void exp4_avx2(const double *x, double *y, int nonpositive) {
  for (int h = 0; h < 8; h += 4) {
    v4d v;
    memcpy(&v, x + h, sizeof v);
    v = nonpositive ? redux_exp4_avx2_nonpositive(v) : redux_exp4_avx2(v);
    memcpy(y + h, &v, sizeof v);
  }
}
#endif

/* Whether every form the CPU has gives redux_exp's bits on x[0, 8) (NaN
 * lanes: any NaN); prints the first difference. */
static int forms_agree(const double *x, int nonpositive) {
  double y[3][8];
  int forms = 1;
  exp4_base(x, y[0], nonpositive);
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) exp8(x, y[forms++], nonpositive);
  if (redux_cpu_fma_lanes()) exp4_avx2(x, y[forms++], nonpositive);
#endif
  for (int f = 0; f < forms; ++f)
    for (int k = 0; k < 8; ++k) {
      const double want = redux_exp(x[k]);
      if (!same_bits(y[f][k], want) && !(isnan(want) && isnan(y[f][k]))) {
        printf("form %d%s differs at %a: %a, not %a\n", f, nonpositive ? " (nonpositive)" : "", x[k], y[f][k], want);
        return 0;
      }
    }
  return 1;
}

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
    for (int k = 0; k < 8; ++k) {
      const double e = ulps(redux_exp(x[k]), expl((long double)x[k]));
      if (e > worst) worst = e;
    }
    double xn[8];
    for (int k = 0; k < 8; ++k) xn[k] = -fabs(x[k]);
    if (!forms_agree(x, 0) || !forms_agree(xn, 1)) {
      failed = 1;
      break;
    }
  }
  /* edges: for the forms without the overflow test zeros, the range's end,
   * below it, -inf, NaN; for all, the overflow's edge and beyond */
  const double low_edges[8] = {0.0, -0.0, -708.0, -708.0000000001, -709.0, -1e300, -INFINITY, NAN};
  const double high_edges[8] = {709.0, 709.5, 709.5000000001, 710.0, 1e300, INFINITY, 1.0, NAN};
  if (!forms_agree(low_edges, 1) || !forms_agree(low_edges, 0) || !forms_agree(high_edges, 0)) failed = 1;
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
