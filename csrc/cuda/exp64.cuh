/* redux's fp64 exp on the GPU: the algorithm and constants of
 * redux/exp_table.h (the CPU's, csrc/cpu/exp.h), with fused multiply-adds:
 * 12 fp64 operations where CUDA's exp has 17, and softmax and logsumexp rows
 * spend their time on it.
 * Within about 1.3 ulp on [-708, 709.5]; below -708 0, above 709.5 inf,
 * NaN for NaN.
 */
#pragma once

#include <math.h>

#include "redux/exp_table.h"

namespace redux {

__device__ const double kExp2Table[64] = {REDUX_EXP2_TABLE};

/* HIGH false: for x <= 0 or NaN only (softmax's x - max), no overflow test.
 * The index K + 1023 * 64 is below 2^17 wherever the result is not
 * replaced, so it is taken in 32 bits from kd's low word (the shifter's
 * low word is 0). */
template <bool HIGH, typename Lookup>
__device__ __forceinline__ double exp64_form(double x, Lookup table) {
  const double kd = fma(x, REDUX_EXP_TO_STEPS, REDUX_EXP_SHIFTER);
  const unsigned u = (unsigned)__double2loint(kd) + (unsigned)REDUX_EXP_BIAS_STEPS;
  const double kf = kd - REDUX_EXP_SHIFTER;
  const double r = fma(-kf, REDUX_EXP_STEP_LO, fma(-kf, REDUX_EXP_STEP_HI, x));
  double q = fma(r, 1.0 / 120.0, 1.0 / 24.0);
  q = fma(q, r, 1.0 / 6.0);
  q = fma(q, r, 0.5);
  q = fma(q, r, 1.0);
  q = q * r;
  const double t = table(u & 63);
  const double scale = __hiloint2double((int)((u >> 6) << 20), 0); /* 2^(K >> 6) */
  const double e = fma(t, q, t) * scale;
  if constexpr (HIGH) return x < REDUX_EXP_LOW ? 0.0 : x > REDUX_EXP_HIGH ? (double)INFINITY : e;
  else return x < REDUX_EXP_LOW ? 0.0 : e;
}

/* The table read from global memory (through the read-only cache). */
struct exp_table_global {
  __device__ __forceinline__ double operator()(unsigned j) const { return __ldg(&kExp2Table[j]); }
};
/* The table a block copied to shared memory (exp_table_shared::fill): its
 * reads wait on no DRAM round trip after the row's. */
struct exp_table_shared {
  const double *t;
  __device__ __forceinline__ double operator()(unsigned j) const { return t[j]; }
  /* All threads of the block call it; the copy is visible after it. */
  static __device__ __forceinline__ void fill(double *t) {
    for (int j = threadIdx.x; j < 64; j += blockDim.x) t[j] = kExp2Table[j];
    __syncthreads();
  }
};

__device__ __forceinline__ double exp64(double x) { return exp64_form<true>(x, exp_table_global{}); }

}  // namespace redux
