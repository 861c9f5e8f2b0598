/* The constants of redux's fp64 exp, one definition for the CPU's
 * (csrc/cpu/exp.h) and the GPU's (csrc/cuda/exp64.cuh): plain C, no
 * functions. x = (K / 64) ln2 + r with K = round(x 64 / ln2), |r| <=
 * ln2 / 128, and exp(x) = 2^(K >> 6) T[K & 63] (1 + q(r)), T[j] = 2^(j / 64)
 * correctly rounded, q a degree-5 polynomial.
 */
#ifndef REDUX_EXP_TABLE_H
#define REDUX_EXP_TABLE_H

#define REDUX_EXP_SHIFTER 0x1.8p52              /* adding it rounds to an integer, kept in the low bits */
#define REDUX_EXP_TO_STEPS 0x1.71547652b82fep6  /* 64 / ln2 */
#define REDUX_EXP_STEP_HI 0x1.62e42fee00000p-7  /* ln2 / 64's leading bits: K * REDUX_EXP_STEP_HI is exact */
#define REDUX_EXP_STEP_LO 0x1.a39ef35793c76p-39 /* the rest of ln2 / 64 */
#define REDUX_EXP_BIAS_STEPS (1023 * 64)        /* (K + this) >> 6 is the exponent field of 2^(K >> 6) */
#define REDUX_EXP_LOW -708.0                    /* below it exp gives 0 */
#define REDUX_EXP_HIGH 709.5                    /* above it exp gives inf */

/* T[j] = 2^(j / 64), correctly rounded, j = 0 .. 63 */
#define REDUX_EXP2_TABLE \
  0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0, \
  0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0, \
  0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0, \
  0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0, \
  0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0, \
  0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0, \
  0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0, \
  0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0, \
  0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0, \
  0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0, \
  0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0, \
  0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0, \
  0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0, \
  0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0, \
  0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0, \
  0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0

#endif /* REDUX_EXP_TABLE_H */
