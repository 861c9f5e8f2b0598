/* redux's exp in fp64 for the CPU row kernels (C11, header-only, static):
 * the algorithm and constants of redux/exp_table.h in plain IEEE arithmetic
 * and table reads, no contraction (-ffp-contract=off), so the scalar form
 * and the four- and eight-lane forms give the same bits on every machine
 * and C library. q is exp(r) - 1's Taylor polynomial to degree 5 (the first
 * term left out is below 2^-54 relative). Within 1.3 ulp on [-708, 709.5]
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

/* q = exp(r) - 1 to degree 5 by Horner's rule; CONST(c) makes c of r's type. */
#define EXP_POLY(q, r, CONST)                 \
  do {                                        \
    q = CONST(1.0 / 120.0);                   \
    q = q * (r) + CONST(1.0 / 24.0);          \
    q = q * (r) + CONST(1.0 / 6.0);           \
    q = q * (r) + CONST(0.5);                 \
    q = q * (r) + CONST(1.0);                 \
    q = q * (r);                              \
  } while (0)

static inline double redux_exp(double x) {
  const double kd = x * REDUX_EXP_TO_STEPS + REDUX_EXP_SHIFTER;
  uint64_t kbits, sbits;
  const double shifter = REDUX_EXP_SHIFTER;
  memcpy(&kbits, &kd, sizeof kbits);
  memcpy(&sbits, &shifter, sizeof sbits);
  /* K + 1023 * 64, >= 0 for x >= -708; other lanes are replaced below */
  const uint64_t u = kbits - sbits + REDUX_EXP_BIAS_STEPS;
  const double kf = kd - REDUX_EXP_SHIFTER;
  const double r = (x - kf * REDUX_EXP_STEP_HI) - kf * REDUX_EXP_STEP_LO;
  double q;
  EXP_POLY(q, r, (double));
  const double t = redux_exp2_table[u & 63];
  const uint64_t bits = (u >> 6) << 52; /* 2^(K >> 6); K >> 6 = 1024 gives inf */
  double scale;
  memcpy(&scale, &bits, sizeof scale);
  return x < REDUX_EXP_LOW ? 0.0 : x > REDUX_EXP_HIGH ? (double)INFINITY : (t + t * q) * scale;
}

/* redux_exp on the lanes of a vector, the same bits: V the vector type, VU
 * its unsigned integer lanes, GATHER(j) the table's entries j. */
#define EXP_LANES(NAME, ATTR, V, VU, SPLAT, SELECT, GATHER)                                             \
  static inline __attribute__((always_inline)) ATTR V NAME(V x) {                                       \
    const V kd = x * SPLAT(REDUX_EXP_TO_STEPS) + SPLAT(REDUX_EXP_SHIFTER);                              \
    const VU u = (VU)kd - (VU)SPLAT(REDUX_EXP_SHIFTER) + REDUX_EXP_BIAS_STEPS;                          \
    const V kf = kd - SPLAT(REDUX_EXP_SHIFTER);                                                         \
    const V r = (x - kf * SPLAT(REDUX_EXP_STEP_HI)) - kf * SPLAT(REDUX_EXP_STEP_LO);                    \
    V q;                                                                                                \
    EXP_POLY(q, r, SPLAT);                                                                              \
    const V t = GATHER(u & 63);                                                                         \
    const VU bits = (u >> 6) << 52;                                                                     \
    return SELECT(x < SPLAT(REDUX_EXP_LOW), SPLAT(0.0),                                                 \
                  SELECT(x > SPLAT(REDUX_EXP_HIGH), SPLAT((double)INFINITY), (t + t * q) * (V)bits));   \
  }
static inline __attribute__((always_inline)) v4d exp2_table4(v4u j) {
  return (v4d){redux_exp2_table[j[0]], redux_exp2_table[j[1]], redux_exp2_table[j[2]], redux_exp2_table[j[3]]};
}
EXP_LANES(redux_exp4, , v4d, v4u, splat, select4, exp2_table4)
#ifdef REDUX_EIGHT_LANES
static inline __attribute__((always_inline)) REDUX_AVX512 v8d exp2_table8(v8u j) {
  return (v8d)_mm512_i64gather_pd((__m512i)j, redux_exp2_table, 8);
}
EXP_LANES(redux_exp8, REDUX_AVX512, v8d, v8u, splat8, select8, exp2_table8)
#endif

#endif /* REDUX_CPU_EXP_H */
