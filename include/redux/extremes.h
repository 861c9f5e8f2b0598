/* The order of redux's maxima and minima (redux.h, "Extremes"), the one
 * definition for both backends: C11 and CUDA.
 *
 * A floating value is compared by an integer key: its magnitude bits for a
 * positive sign, -1 - magnitude for a negative one. The keys order as the
 * values do, with -0 below +0; every NaN takes the key that wins (the
 * largest for a maximum, the smallest for a minimum) and comes back as the
 * dtype's canonical quiet NaN. Integer maxima and minima of keys are exact
 * and order-free, so the result bits depend on the values alone: not on the
 * tree, the grid or the thread count. int64 values are their own keys.
 */
#ifndef REDUX_EXTREMES_H
#define REDUX_EXTREMES_H

#include <stdint.h>

#if defined(__CUDACC__)
#define REDUX_KEY_FN static __host__ __device__ __forceinline__
#else
#define REDUX_KEY_FN static inline
#endif

/* X(NAME, BITS, KEY, SIGN, INF, QNAN): a floating dtype's storage bits,
 * key type, sign bit, +inf's bits and canonical quiet NaN. */
#define REDUX_EXTREME_FLOATS(X)                                                                      \
  X(f32, uint32_t, int32_t, 0x80000000u, 0x7f800000u, 0x7fc00000u)                                 \
  X(f64, uint64_t, int64_t, 0x8000000000000000ull, 0x7ff0000000000000ull, 0x7ff8000000000000ull) \
  X(f16, uint16_t, int32_t, 0x8000u, 0x7c00u, 0x7e00u)                                             \
  X(bf16, uint16_t, int32_t, 0x8000u, 0x7f80u, 0x7fc0u)

/* redux_key_NAME(bits, nan_key): the key of a value (nan_key for a NaN);
 * redux_unkey_NAME(key, nan_key): the bits of a key. */
#define REDUX_DEFINE_KEYS(NAME, BITS, KEY, SIGN, INF, QNAN)                           \
  REDUX_KEY_FN KEY redux_key_##NAME(BITS b, KEY nan_key) {                            \
    const BITS mag = (BITS)(b & (BITS)~(BITS)(SIGN));                                 \
    const KEY k = (b & (BITS)(SIGN)) ? (KEY)(-1 - (KEY)mag) : (KEY)mag;               \
    return mag > (BITS)(INF) ? nan_key : k;                                           \
  }                                                                                   \
  REDUX_KEY_FN BITS redux_unkey_##NAME(KEY k, KEY nan_key) {                          \
    if (k == nan_key) return (BITS)(QNAN);                                            \
    return k >= 0 ? (BITS)k : (BITS)((BITS)(SIGN) | (BITS)(-1 - k));                 \
  }
REDUX_EXTREME_FLOATS(REDUX_DEFINE_KEYS)
#undef REDUX_DEFINE_KEYS

#endif /* REDUX_EXTREMES_H */
