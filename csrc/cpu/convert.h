/* fp16 / bf16 bits <-> float for the CPU kernels (C11, header-only):
 * round to nearest even, NaN kept quiet. */
#ifndef REDUX_CPU_CONVERT_H
#define REDUX_CPU_CONVERT_H

#include <stdint.h>
#include <string.h>

static inline float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint32_t float_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* All ones where c holds, else 0. The conversions compute every path and
 * pick one by masks, not by branches: the loops that convert vectorize, and
 * values that mix paths (softmax outputs near fp16's subnormals) cost no
 * mispredictions. */
static inline uint32_t mask_of(int c) { return 0u - (uint32_t)(c != 0); }
static inline uint32_t pick(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

static inline float f16_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  const uint32_t special = 0x7f800000u | (man << 13); /* inf, NaN */
  const uint32_t normal = ((exp + 112u) << 23) | (man << 13);
  const uint32_t tiny = float_to_bits((float)man * 5.9604644775390625e-8f); /* zero or subnormal: man * 2^-24, exact */
  return bits_to_float(sign | pick(mask_of(exp == 0x1fu), special, pick(mask_of(exp != 0), normal, tiny)));
}

static inline uint16_t float_to_f16(float f) {
  const uint32_t u = float_to_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  const uint32_t special = 0x7c00u | (0x200u & mask_of(abs > 0x7f800000u)); /* inf or NaN (kept quiet) */
  /* below 2^-14, fp16's subnormal code: abs * 2^24 rounded to nearest even by
   * the add (0.5's ulp is 2^-24); a float subnormal gives 0 as it should */
  const uint32_t tiny = float_to_bits(bits_to_float(abs) + 0.5f) - 0x3f000000u;
  /* normal: drop 13 mantissa bits with round-to-nearest-even */
  const uint32_t normal = (abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13;
  const uint32_t finite = pick(mask_of(abs < 0x38800000u), tiny, normal);
  const uint32_t big = pick(mask_of(abs >= 0x7f800000u), special, 0x7c00u); /* 0x7c00: rounds to inf */
  return (uint16_t)(sign | pick(mask_of(abs >= 0x477ff000u), big, finite));
}

static inline float bf16_to_float(uint16_t b) { return bits_to_float((uint32_t)b << 16); }

static inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_to_bits(f);
  const uint32_t nan = (u >> 16) | 0x40u; /* kept quiet */
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (uint16_t)pick(mask_of((u & 0x7fffffffu) > 0x7f800000u), nan, rounded);
}

/* double -> float rounded to odd (toward zero, the last bit set when
 * inexact): rounding that float to nearest at fp16's or bf16's precision
 * (13 or more bits fewer) gives the double's correctly rounded value, where
 * a plain (float) first would round twice. */
static inline float double_to_float_odd(double d) {
  const float f = (float)d;
  const double back = (double)f;
  const uint32_t inexact = (back != d) & (d == d); /* NaN and exact values (inf too) stay as they are */
  const uint32_t away = ((f > 0) & (back > d)) | ((f < 0) & (back < d)); /* toward zero: inf -> the largest finite */
  return bits_to_float((float_to_bits(f) - away) | inexact);
}

static inline uint16_t double_to_f16(double d) { return float_to_f16(double_to_float_odd(d)); }
static inline uint16_t double_to_bf16(double d) { return float_to_bf16(double_to_float_odd(d)); }

#endif /* REDUX_CPU_CONVERT_H */
