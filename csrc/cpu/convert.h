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

static inline float f16_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13)); /* inf, NaN */
  if (exp != 0) return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
  /* zero or subnormal: man * 2^-24, exact in float */
  float v = (float)man * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

static inline uint16_t float_to_f16(float f) {
  const uint32_t u = float_to_bits(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* inf or NaN (keep NaN quiet) */
    return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
  if (abs < 0x38800000u) {                                    /* subnormal or zero in fp16 */
    /* Round abs * 2^24 to an integer, nearest even: the fp16 subnormal code. */
    const float scaled = bits_to_float(abs) * 16777216.0f; /* exact: power of two */
    uint32_t q = (uint32_t)scaled;
    const float rem = scaled - (float)q;
    if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
    return (uint16_t)(sign | q);
  }
  /* normal: drop 13 mantissa bits with round-to-nearest-even */
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
}

static inline float bf16_to_float(uint16_t b) { return bits_to_float((uint32_t)b << 16); }

static inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* double -> float rounded to odd (toward zero, the last bit set when
 * inexact): rounding that float to nearest at fp16's or bf16's precision
 * (13 or more bits fewer) gives the double's correctly rounded value, where
 * a plain (float) first would round twice. */
static inline float double_to_float_odd(double d) {
  const float f = (float)d;
  if (!(d == d) || (double)f == d) return f; /* NaN, or exact (inf too) */
  uint32_t u = float_to_bits(f);
  if ((f > 0 && (double)f > d) || (f < 0 && (double)f < d)) --u; /* toward zero (inf -> the largest finite) */
  return bits_to_float(u | 1u);
}

static inline uint16_t double_to_f16(double d) { return float_to_f16(double_to_float_odd(d)); }
static inline uint16_t double_to_bf16(double d) { return float_to_bf16(double_to_float_odd(d)); }

#endif /* REDUX_CPU_CONVERT_H */
