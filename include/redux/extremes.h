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

/* X(NAME, BITS, KEY, WIDTH, INF, QNAN): a floating dtype's storage bits
 * (WIDTH of them), key type, +inf's bits and canonical quiet NaN. */
#define REDUX_EXTREME_FLOATS(X)                                                        \
  X(f32, uint32_t, int32_t, 32, 0x7f800000u, 0x7fc00000u)                             \
  X(f64, uint64_t, int64_t, 64, 0x7ff0000000000000ull, 0x7ff8000000000000ull)         \
  X(f16, uint16_t, int32_t, 16, 0x7c00u, 0x7e00u)                                     \
  X(bf16, uint16_t, int32_t, 16, 0x7f80u, 0x7fc0u)

/* redux_key_NAME(bits, nan_key): the key of a value (nan_key for a NaN),
 * branch-free (masks, no select) so the loops vectorize: the magnitude, all its bits flipped
 * (-1 - magnitude) for a negative sign; redux_unkey_NAME(key, nan_key): the
 * bits of a key. */
#define REDUX_DEFINE_KEYS(NAME, BITS, KEY, WIDTH, INF, QNAN)                           \
  REDUX_KEY_FN KEY redux_key_##NAME(BITS b, KEY nan_key) {                           \
    const BITS sign = (BITS)((BITS)1 << (WIDTH - 1));                                \
    const BITS mag = (BITS)(b & (BITS)(sign - 1));                                   \
    const KEY flip = (KEY)0 - (KEY)((b & sign) != 0);                                \
    const KEY nan = (KEY)0 - (KEY)(mag > (BITS)(INF));                                \
    return (((KEY)mag ^ flip) & ~nan) | (nan_key & nan);                             \
  }                                                                                  \
  REDUX_KEY_FN BITS redux_unkey_##NAME(KEY k, KEY nan_key) {                         \
    const BITS sign = (BITS)((BITS)1 << (WIDTH - 1));                                \
    if (k == nan_key) return (BITS)(QNAN);                                           \
    return k >= 0 ? (BITS)k : (BITS)(sign | (BITS)~k);                               \
  }
REDUX_EXTREME_FLOATS(REDUX_DEFINE_KEYS)
#undef REDUX_DEFINE_KEYS

#endif /* REDUX_EXTREMES_H */
