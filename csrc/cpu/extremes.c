/* Maxima and minima on the CPU (redux.h, redux_cpu_extreme), C11.
 *
 * Every comparison is between integer keys (redux/extremes.h): the loops
 * are plain integer maxima or minima the compiler vectorizes (AVX2 and
 * baseline clones, hot.h), and the bits depend on the values alone.
 */
#include <stdint.h>
#include <string.h>

#include "hot.h"
#include "redux/extremes.h"
#include "redux/redux.h"

/* The loop over one work item: item k of [k0, k1) is slice o, segment seg,
 * columns block b (redux.h). Per element, STEP(v, acc, big, TAG) folds the
 * element v into the key acc and the largest magnitude big; a row segment
 * is one reduction loop (the compiler's vector lanes combine in any order:
 * the keys' extremes are exact), a columns block keeps an (acc, big) per
 * column and walks its rows in order; DONE(acc, big, TAG) gives the bits. */
#define EXTREME_ITEMS(IDENT, STEP, DONE, TAG)                                                       \
  for (int64_t k = k0; k < k1; ++k) {                                                               \
    const int64_t o = k / (segs * blocks), seg = (k / blocks) % segs, b = k % blocks;               \
    const int64_t r0 = seg * seg_len, r1 = r0 + seg_len < s.n ? r0 + seg_len : s.n;                 \
    if (s.inner == 1) {                                                                             \
      const bits_t *p = x + o * s.n;                                                                \
      key_t acc = IDENT;                                                                            \
      bits_t big = 0;                                                                               \
      for (int64_t i = r0; i < r1; ++i) STEP(p[i], acc, big, TAG);                                  \
      y[o * segs + seg] = DONE(acc, big, TAG);                                                      \
    } else {                                                                                        \
      const int64_t c0 = b * REDUX_CPU_COL_BLOCK;                                                   \
      const int64_t w = s.inner - c0 < REDUX_CPU_COL_BLOCK ? s.inner - c0 : REDUX_CPU_COL_BLOCK;     \
      key_t acc[REDUX_CPU_COL_BLOCK];                                                               \
      bits_t big[REDUX_CPU_COL_BLOCK];                                                              \
      for (int64_t c = 0; c < w; ++c) acc[c] = IDENT, big[c] = 0;                                   \
      for (int64_t i = r0; i < r1; ++i) {                                                           \
        const bits_t *p = x + (o * s.n + i) * s.inner + c0;                                         \
        for (int64_t c = 0; c < w; ++c) STEP(p[c], acc[c], big[c], TAG);                            \
      }                                                                                             \
      bits_t *out = y + (o * segs + seg) * s.inner + c0;                                            \
      for (int64_t c = 0; c < w; ++c) out[c] = DONE(acc[c], big[c], TAG);                           \
    }                                                                                               \
  }

/* FN over items [k0, k1) of x -> y, with the element's bits and key types in scope. */
#define EXTREME_FN(FN, BITS, KEY)                                                                   \
  static REDUX_HOT_WIDE void FN(const BITS *x, BITS *y, redux_shape s, int64_t seg_len, int64_t segs,\
                           int64_t blocks, int64_t k0, int64_t k1)

/* A floating dtype's four ops, from the one list of redux/extremes.h
 * (largest: a maximum; by_magnitude: the _ABS ops, keys of |x|). The loops
 * compare redux/extremes.h's keys without their NaN rule (a NaN's key lies
 * past an infinity's on its sign's side) and find NaNs apart by the largest
 * magnitude: fewer operations an element, the same result. */
#define FLOAT_OP(FN, NAME, BITS, KEY, WIDTH, INF, QNAN, LARGEST, BY_MAGNITUDE)                      \
  EXTREME_FN(FN, BITS, KEY) {                                                                       \
    typedef BITS bits_t;                                                                            \
    typedef KEY key_t;                                                                              \
    const bits_t sign_ = (bits_t)((bits_t)1 << (WIDTH - 1)), inf_ = (bits_t)(INF), qnan_ = (bits_t)(QNAN); \
    const int largest_ = LARGEST, by_magnitude_ = BY_MAGNITUDE;                                     \
    const key_t ident_ = LARGEST ? (key_t)((key_t)1 << (sizeof(key_t) * 8 - 1))                     \
                                 : (key_t)~((key_t)1 << (sizeof(key_t) * 8 - 1));                   \
    EXTREME_ITEMS(ident_, FLOAT_STEP, FLOAT_DONE, NAME)                                             \
  }
#define FLOAT_STEP(v, acc, big, NAME)                                                               \
  do {                                                                                              \
    const bits_t e_ = (v), mag_ = (bits_t)(e_ & (bits_t)(sign_ - 1));                               \
    const key_t key_ = by_magnitude_ ? (key_t)mag_ : (key_t)((key_t)mag_ ^ ((key_t)0 - (key_t)(e_ >> (sizeof(bits_t) * 8 - 1)))); \
    acc = largest_ ? (key_ > acc ? key_ : acc) : (key_ < acc ? key_ : acc);                         \
    big = mag_ > big ? mag_ : big;                                                                  \
  } while (0)
#define FLOAT_DONE(acc, big, NAME) ((big) > inf_ ? qnan_ : redux_unkey_##NAME((acc), ident_))

#define DEFINE_FLOAT_EXTREMES(NAME, BITS, KEY, WIDTH, INF, QNAN)          \
  FLOAT_OP(max_##NAME, NAME, BITS, KEY, WIDTH, INF, QNAN, 1, 0)           \
  FLOAT_OP(min_##NAME, NAME, BITS, KEY, WIDTH, INF, QNAN, 0, 0)           \
  FLOAT_OP(amax_##NAME, NAME, BITS, KEY, WIDTH, INF, QNAN, 1, 1)          \
  FLOAT_OP(amin_##NAME, NAME, BITS, KEY, WIDTH, INF, QNAN, 0, 1)
REDUX_EXTREME_FLOATS(DEFINE_FLOAT_EXTREMES)

/* int64: its own key, no NaN. */
#define INT_STEP(v, acc, big, LARGEST) (acc = LARGEST ? ((v) > acc ? (v) : acc) : ((v) < acc ? (v) : acc))
#define INT_DONE(acc, big, LARGEST) ((void)(big), (acc))
EXTREME_FN(max_i64, int64_t, int64_t) {
  typedef int64_t bits_t;
  typedef int64_t key_t;
  EXTREME_ITEMS(INT64_MIN, INT_STEP, INT_DONE, 1)
}
EXTREME_FN(min_i64, int64_t, int64_t) {
  typedef int64_t bits_t;
  typedef int64_t key_t;
  EXTREME_ITEMS(INT64_MAX, INT_STEP, INT_DONE, 0)
}

redux_status redux_cpu_extreme(redux_extreme op, const void *x, void *y, redux_shape shape, int64_t seg_len,
                               int64_t item_begin, int64_t item_end, redux_dtype t) {
  if (shape.outer < 0 || shape.n < 1 || shape.inner < 1 || seg_len < 1 || item_begin < 0 || item_begin > item_end)
    return REDUX_ERR_SHAPE;
  if (op != REDUX_MAX && op != REDUX_MIN && op != REDUX_MAX_ABS && op != REDUX_MIN_ABS) return REDUX_ERR_DTYPE;
  const int64_t segs = (shape.n + seg_len - 1) / seg_len;
  const int64_t blocks = (shape.inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK;
  if (item_end > shape.outer * segs * blocks) return REDUX_ERR_SHAPE;
#define RUN(T, NAME)                                                                                   \
  (op == REDUX_MAX ? max_##NAME : op == REDUX_MIN ? min_##NAME : op == REDUX_MAX_ABS ? amax_##NAME : amin_##NAME)( \
      (const T *)x, (T *)y, shape, seg_len, segs, blocks, item_begin, item_end)
  switch (t) {
    case REDUX_F32: RUN(uint32_t, f32); return REDUX_OK;
    case REDUX_F64: RUN(uint64_t, f64); return REDUX_OK;
    case REDUX_F16: RUN(uint16_t, f16); return REDUX_OK;
    case REDUX_BF16: RUN(uint16_t, bf16); return REDUX_OK;
    case REDUX_I64:
      if (op != REDUX_MAX && op != REDUX_MIN) return REDUX_ERR_DTYPE;  /* |x| of integers: not offered */
      (op == REDUX_MAX ? max_i64 : min_i64)((const int64_t *)x, (int64_t *)y, shape, seg_len, segs, blocks,
                                            item_begin, item_end);
      return REDUX_OK;
  }
#undef RUN
  return REDUX_ERR_DTYPE;
}
