/* redux's exp in fp64 for the CPU row kernels (C11, header-only, static):
 * the algorithm, constants and fused multiply-adds of the GPU's exp64
 * (csrc/cuda/exp64.cuh), the same operations in the same order (the
 * eight-lane form's final scale by a power of two is a vscalefpd, exact
 * as the multiply is), so the scalar form, the four- and eight-lane forms
 * and the GPU give the same bits on every machine and C library. The multiply-adds are explicit
 * (fma(), or the lanes' FMA instructions in the AVX2 and AVX-512 forms)
 * and nothing else contracts (-ffp-contract=off); a CPU without FMA takes
 * the baseline form, whose fma() is the C library's, correctly rounded but
 * slow. q is exp(r) - 1's Taylor polynomial to degree 5 (the first term
 * left out is below 2^-54 relative). Within 1.3 ulp on [-708, 709.5]
 * (tests/c/exp_accuracy_check.c); below -708 0 (the true value is under
 * 2^-1021, lost beside a row maximum's 1; exp(-inf) = 0), above 709.5 inf,
 * NaN for NaN. Branch-free, so the loops that call it vectorize.
 */
#ifndef REDUX_CPU_EXP_H
#define REDUX_CPU_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "redux/exp_table.h"
#include "rows.h"

static const double redux_exp2_table[64] = {REDUX_EXP2_TABLE};

/* q = exp(r) - 1 to degree 5 by Horner's rule; FMA(a, b, c) is a * b + c
 * rounded once, CONST(c) makes c of r's type. */
#define EXP_POLY(q, r, CONST, FMA)                       \
  do {                                                   \
    q = FMA(r, CONST(1.0 / 120.0), CONST(1.0 / 24.0));   \
    q = FMA(q, r, CONST(1.0 / 6.0));                     \
    q = FMA(q, r, CONST(0.5));                           \
    q = FMA(q, r, CONST(1.0));                           \
    q = q * (r);                                         \
  } while (0)

static inline double redux_exp(double x) {
  const double kd = fma(x, REDUX_EXP_TO_STEPS, REDUX_EXP_SHIFTER);
  uint64_t kbits, sbits;
  const double shifter = REDUX_EXP_SHIFTER;
  memcpy(&kbits, &kd, sizeof kbits);
  memcpy(&sbits, &shifter, sizeof sbits);
  /* K + 1023 * 64, >= 0 for x >= -708; other lanes are replaced below */
  const uint64_t u = kbits - sbits + REDUX_EXP_BIAS_STEPS;
  const double kf = kd - REDUX_EXP_SHIFTER;
  const double r = fma(-kf, REDUX_EXP_STEP_LO, fma(-kf, REDUX_EXP_STEP_HI, x));
  double q;
  EXP_POLY(q, r, (double), fma);
  const double t = redux_exp2_table[u & 63];
  const uint64_t bits = (u >> 6) << 52; /* 2^(K >> 6); K >> 6 = 1024 gives inf */
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return x < REDUX_EXP_LOW ? 0.0 : x > REDUX_EXP_HIGH ? (double)INFINITY : fma(t, q, t) * scale;
}

/* redux_exp on the lanes of a vector, the same bits: V the vector type, VU
 * its unsigned integer lanes, FMA its lanes' fused multiply-add, FNMA
 * FMA(-a, b, c) in one instruction, GATHER(j) the table's entries j (kd's
 * low six bits are K's: the shifter and the bias are multiples of 64),
 * RESULT(x, y, kd, kf, HIGH) y times 2^(K >> 6), replaced by 0 below
 * REDUX_EXP_LOW and, with HIGH, by inf above REDUX_EXP_HIGH. HIGH 0 drops
 * the overflow test, for arguments known to be at most 0 or NaN (x - max):
 * the test never fires there, so the bits are the same. */
#define EXP_LANES(NAME, ATTR, V, VU, SPLAT, FMA, FNMA, GATHER, RESULT, HIGH)                \
  static inline __attribute__((always_inline)) ATTR V NAME(V x) {                           \
    const V kd = FMA(x, SPLAT(REDUX_EXP_TO_STEPS), SPLAT(REDUX_EXP_SHIFTER));               \
    const V kf = kd - SPLAT(REDUX_EXP_SHIFTER);                                             \
    const V r = FNMA(kf, SPLAT(REDUX_EXP_STEP_LO), FNMA(kf, SPLAT(REDUX_EXP_STEP_HI), x));  \
    V q;                                                                                    \
    EXP_POLY(q, r, SPLAT, FMA);                                                             \
    const V t = GATHER((VU)kd & 63);                                                        \
    return RESULT(x, FMA(t, q, t), kd, kf, HIGH);                                           \
  }
/* RESULT for the four-lane forms (SPLAT: their broadcast): the scale's
 * exponent field (K + 1023 * 64) >> 6, built in the integer lanes. */
#define EXP_RESULT4(NAME, ATTR, SPLAT)                                                              \
  static inline __attribute__((always_inline)) ATTR v4d NAME(v4d x, v4d y, v4d kd, v4d kf, int high) { \
    (void)kf;                                                                                       \
    const v4u u = (v4u)kd - (v4u)SPLAT(REDUX_EXP_SHIFTER) + REDUX_EXP_BIAS_STEPS;                   \
    const v4d e = y * (v4d)((u >> 6) << 52);                                                        \
    return select4(x < SPLAT(REDUX_EXP_LOW), SPLAT(0.0),                                            \
                   high ? select4(x > SPLAT(REDUX_EXP_HIGH), SPLAT((double)INFINITY), e) : e);      \
  }
EXP_RESULT4(exp_result4, , splat)
static inline __attribute__((always_inline)) v4d exp2_table4(v4u j) {
  return (v4d){redux_exp2_table[j[0]], redux_exp2_table[j[1]], redux_exp2_table[j[2]], redux_exp2_table[j[3]]};
}
static inline __attribute__((always_inline)) v4d fnma4(v4d a, v4d b, v4d c) { return fma4(-a, b, c); }
EXP_LANES(redux_exp4, , v4d, v4u, splat, fma4, fnma4, exp2_table4, exp_result4, 1)
EXP_LANES(redux_exp4_nonpositive, , v4d, v4u, splat, fma4, fnma4, exp2_table4, exp_result4, 0)
#ifdef REDUX_EIGHT_LANES
static inline __attribute__((always_inline)) REDUX_AVX512 v8d exp2_table8(v8u j) {
  return (v8d)_mm512_i64gather_pd((__m512i)j, redux_exp2_table, 8);
}
static inline __attribute__((always_inline)) REDUX_AVX512 v8d fnma8(v8d a, v8d b, v8d c) {
  return (v8d)_mm512_fnmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
}
/* RESULT as one zero-masked scalef (y * 2^floor(K / 64), exact as the
 * multiply by the built power of two is: the results are normal) and a
 * masked move (GCC builds each select of vector masks as three
 * instructions); NaN is neither below nor above */
static inline __attribute__((always_inline)) REDUX_AVX512 v8d exp_result8(v8d x, v8d y, v8d kd, v8d kf, int high) {
  (void)kd;
  const __mmask8 low = _mm512_cmp_pd_mask((__m512d)x, _mm512_set1_pd(REDUX_EXP_LOW), _CMP_LT_OQ);
  const __m512d steps = _mm512_mul_pd((__m512d)kf, _mm512_set1_pd(1.0 / 64.0));
  const __m512d e = _mm512_maskz_scalef_pd((__mmask8)~low, (__m512d)y, steps);
  if (!high) return (v8d)e;
  const __mmask8 above = _mm512_cmp_pd_mask((__m512d)x, _mm512_set1_pd(REDUX_EXP_HIGH), _CMP_GT_OQ);
  return (v8d)_mm512_mask_mov_pd(e, above, _mm512_set1_pd((double)INFINITY));
}
EXP_LANES(redux_exp8, REDUX_AVX512, v8d, v8u, splat8, fma8, fnma8, exp2_table8, exp_result8, 1)
EXP_LANES(redux_exp8_nonpositive, REDUX_AVX512, v8d, v8u, splat8, fma8, fnma8, exp2_table8, exp_result8, 0)
static inline __attribute__((always_inline)) REDUX_AVX2_FMA v4d exp2_table4_avx2(v4u j) {
  return (v4d)_mm256_i64gather_pd(redux_exp2_table, (__m256i)j, 8);
}
static inline __attribute__((always_inline)) REDUX_AVX2_FMA v4d fnma4_avx2(v4d a, v4d b, v4d c) {
  return (v4d)_mm256_fnmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
}
EXP_RESULT4(exp_result4_avx2, REDUX_AVX2_FMA, splat4_avx2)
EXP_LANES(redux_exp4_avx2, REDUX_AVX2_FMA, v4d, v4u, splat4_avx2, fma4_avx2, fnma4_avx2, exp2_table4_avx2,
          exp_result4_avx2, 1)
EXP_LANES(redux_exp4_avx2_nonpositive, REDUX_AVX2_FMA, v4d, v4u, splat4_avx2, fma4_avx2, fnma4_avx2,
          exp2_table4_avx2, exp_result4_avx2, 0)
#endif

/* d[i] = exp(d[i] - shift), in place. W: lanes a vector. */
#define EXP_VALUES(NAME, ATTR, V, W, EXP, SPLAT)                                      \
  static ATTR __attribute__((unused)) void NAME(double *d, int64_t n, double shift) { \
    int64_t i = 0;                                                                    \
    for (; i + W <= n; i += W) {                                                      \
      V v;                                                                            \
      memcpy(&v, d + i, sizeof v);                                                    \
      v = EXP(v - SPLAT(shift));                                                      \
      memcpy(d + i, &v, sizeof v);                                                    \
    }                                                                                 \
    for (; i < n; ++i) d[i] = redux_exp(d[i] - shift);                                \
  }
EXP_VALUES(exp_values4, REDUX_HOT, v4d, 4, redux_exp4, splat)
#ifdef REDUX_EIGHT_LANES
EXP_VALUES(exp_values8, REDUX_AVX512, v8d, 8, redux_exp8, splat8)
EXP_VALUES(exp_values4_avx2, REDUX_AVX2_FMA, v4d, 4, redux_exp4_avx2, splat4_avx2)
#endif

/* The form the CPU runs (the same bits in every form). */
static inline void redux_exp_values(double *d, int64_t n, double shift) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) {
    exp_values8(d, n, shift);
    return;
  }
  if (redux_cpu_fma_lanes()) {
    exp_values4_avx2(d, n, shift);
    return;
  }
#endif
  exp_values4(d, n, shift);
}

#endif /* REDUX_CPU_EXP_H */
