/* Maxima and minima on the CPU (redux.h, redux_cpu_extreme), C11.
 *
 * Every comparison is between integer keys (redux/extremes.h): the loops
 * are plain integer maxima or minima the compiler vectorizes, and the bits
 * depend on the values alone. A row segment is one reduction loop (the
 * compiler's vector lanes combine in any order: the keys' extremes are
 * exact); a columns block keeps a key per column and walks its rows in order.
 */
#include <stdint.h>
#include <string.h>

#include "hot.h"
#include "redux/extremes.h"
#include "redux/redux.h"

#define PICK_MAX(a, b) ((a) > (b) ? (a) : (b))
#define PICK_MIN(a, b) ((a) < (b) ? (a) : (b))

/* FN(x, y, shape, seg_len, segs, blocks, k0, k1) for one dtype and op:
 * BITS the stored element, KEY its key type, KEYOF(b) and UNKEY(k) the
 * key and its bits, IDENT the key no element beats, PICK the choice. */
#define DEFINE_EXTREME(FN, BITS, KEY, KEYOF, UNKEY, IDENT, PICK)                                    \
  static REDUX_HOT void FN(const BITS *x, BITS *y, redux_shape s, int64_t seg_len, int64_t segs, int64_t blocks, \
                 int64_t k0, int64_t k1) {                                                          \
    for (int64_t k = k0; k < k1; ++k) {                                                             \
      const int64_t o = k / (segs * blocks), seg = (k / blocks) % segs, b = k % blocks;             \
      const int64_t r0 = seg * seg_len, r1 = r0 + seg_len < s.n ? r0 + seg_len : s.n;               \
      if (s.inner == 1) {                                                                           \
        const BITS *p = x + o * s.n;                                                                \
        KEY m = IDENT;                                                                              \
        for (int64_t i = r0; i < r1; ++i) {                                                         \
          const KEY v = KEYOF(p[i]);                                                                \
          m = PICK(m, v);                                                                           \
        }                                                                                           \
        y[o * segs + seg] = UNKEY(m);                                                               \
      } else {                                                                                      \
        const int64_t c0 = b * REDUX_CPU_COL_BLOCK;                                                 \
        const int64_t w = s.inner - c0 < REDUX_CPU_COL_BLOCK ? s.inner - c0 : REDUX_CPU_COL_BLOCK;   \
        KEY col[REDUX_CPU_COL_BLOCK];                                                               \
        for (int64_t c = 0; c < w; ++c) col[c] = IDENT;                                             \
        for (int64_t i = r0; i < r1; ++i) {                                                         \
          const BITS *p = x + (o * s.n + i) * s.inner + c0;                                         \
          for (int64_t c = 0; c < w; ++c) {                                                         \
            const KEY v = KEYOF(p[c]);                                                              \
            col[c] = PICK(col[c], v);                                                               \
          }                                                                                         \
        }                                                                                           \
        BITS *out = y + (o * segs + seg) * s.inner + c0;                                            \
        for (int64_t c = 0; c < w; ++c) out[c] = UNKEY(col[c]);                                     \
      }                                                                                             \
    }                                                                                               \
  }

/* The keys of each dtype, for a maximum (NaN wins as the largest key) and
 * a minimum (as the smallest). */
#define KEY_F32_MAX(b) redux_key_f32((b), INT32_MAX)
#define UNKEY_F32_MAX(k) redux_unkey_f32((k), INT32_MAX)
#define KEY_F32_MIN(b) redux_key_f32((b), INT32_MIN)
#define UNKEY_F32_MIN(k) redux_unkey_f32((k), INT32_MIN)
#define KEY_F64_MAX(b) redux_key_f64((b), INT64_MAX)
#define UNKEY_F64_MAX(k) redux_unkey_f64((k), INT64_MAX)
#define KEY_F64_MIN(b) redux_key_f64((b), INT64_MIN)
#define UNKEY_F64_MIN(k) redux_unkey_f64((k), INT64_MIN)
#define KEY_F16_MAX(b) redux_key_f16((b), INT32_MAX)
#define UNKEY_F16_MAX(k) redux_unkey_f16((k), INT32_MAX)
#define KEY_F16_MIN(b) redux_key_f16((b), INT32_MIN)
#define UNKEY_F16_MIN(k) redux_unkey_f16((k), INT32_MIN)
#define KEY_BF16_MAX(b) redux_key_bf16((b), INT32_MAX)
#define UNKEY_BF16_MAX(k) redux_unkey_bf16((k), INT32_MAX)
#define KEY_BF16_MIN(b) redux_key_bf16((b), INT32_MIN)
#define UNKEY_BF16_MIN(k) redux_unkey_bf16((k), INT32_MIN)
#define SAME(v) (v)
/* |x|: the key of the magnitude bits */
#define KEY_F32_AMAX(b) redux_key_f32((b) & 0x7fffffffu, INT32_MAX)
#define KEY_F32_AMIN(b) redux_key_f32((b) & 0x7fffffffu, INT32_MIN)
#define KEY_F64_AMAX(b) redux_key_f64((b) & 0x7fffffffffffffffull, INT64_MAX)
#define KEY_F64_AMIN(b) redux_key_f64((b) & 0x7fffffffffffffffull, INT64_MIN)
#define KEY_F16_AMAX(b) redux_key_f16((uint16_t)((b) & 0x7fffu), INT32_MAX)
#define KEY_F16_AMIN(b) redux_key_f16((uint16_t)((b) & 0x7fffu), INT32_MIN)
#define KEY_BF16_AMAX(b) redux_key_bf16((uint16_t)((b) & 0x7fffu), INT32_MAX)
#define KEY_BF16_AMIN(b) redux_key_bf16((uint16_t)((b) & 0x7fffu), INT32_MIN)

DEFINE_EXTREME(max_f32, uint32_t, int32_t, KEY_F32_MAX, UNKEY_F32_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(min_f32, uint32_t, int32_t, KEY_F32_MIN, UNKEY_F32_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(max_f64, uint64_t, int64_t, KEY_F64_MAX, UNKEY_F64_MAX, INT64_MIN, PICK_MAX)
DEFINE_EXTREME(min_f64, uint64_t, int64_t, KEY_F64_MIN, UNKEY_F64_MIN, INT64_MAX, PICK_MIN)
DEFINE_EXTREME(max_f16, uint16_t, int32_t, KEY_F16_MAX, UNKEY_F16_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(min_f16, uint16_t, int32_t, KEY_F16_MIN, UNKEY_F16_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(max_bf16, uint16_t, int32_t, KEY_BF16_MAX, UNKEY_BF16_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(min_bf16, uint16_t, int32_t, KEY_BF16_MIN, UNKEY_BF16_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(amax_f32, uint32_t, int32_t, KEY_F32_AMAX, UNKEY_F32_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(amin_f32, uint32_t, int32_t, KEY_F32_AMIN, UNKEY_F32_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(amax_f64, uint64_t, int64_t, KEY_F64_AMAX, UNKEY_F64_MAX, INT64_MIN, PICK_MAX)
DEFINE_EXTREME(amin_f64, uint64_t, int64_t, KEY_F64_AMIN, UNKEY_F64_MIN, INT64_MAX, PICK_MIN)
DEFINE_EXTREME(amax_f16, uint16_t, int32_t, KEY_F16_AMAX, UNKEY_F16_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(amin_f16, uint16_t, int32_t, KEY_F16_AMIN, UNKEY_F16_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(amax_bf16, uint16_t, int32_t, KEY_BF16_AMAX, UNKEY_BF16_MAX, INT32_MIN, PICK_MAX)
DEFINE_EXTREME(amin_bf16, uint16_t, int32_t, KEY_BF16_AMIN, UNKEY_BF16_MIN, INT32_MAX, PICK_MIN)
DEFINE_EXTREME(max_i64, int64_t, int64_t, SAME, SAME, INT64_MIN, PICK_MAX)
DEFINE_EXTREME(min_i64, int64_t, int64_t, SAME, SAME, INT64_MAX, PICK_MIN)

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
