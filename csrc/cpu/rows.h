/* Shared by the CPU's row kernels (exp_rows.c, moment_rows.c), C11,
 * static: a row as fp64, its sum in XLANES fp64 lanes by a fixed tree,
 * the outputs rounded once to the row's dtype; GCC vector extensions for
 * four lanes at a time (the same IEEE operations lane by lane, in AVX2 or
 * baseline code). */
#ifndef REDUX_CPU_ROWS_H
#define REDUX_CPU_ROWS_H

#include <stdint.h>
#include <string.h>

#include "convert.h"
#include "hot.h"
#include "redux/redux.h"

#define XLANES 16

/* The vector helpers are static and inlined: no ABI crosses a call. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8si __attribute__((vector_size(32)));
static inline __attribute__((always_inline)) v4d splat(double v) { return (v4d){v, v, v, v}; }
static inline __attribute__((always_inline)) v4d select4(v4i mask, v4d yes, v4d no) { return (v4d)(((v4i)yes & mask) | ((v4i)no & ~mask)); }
/* a * b + c rounded once, lane by lane (the baseline forms: the C library's fma) */
static inline __attribute__((always_inline)) v4d fma4(v4d a, v4d b, v4d c) {
  return (v4d){__builtin_fma(a[0], b[0], c[0]), __builtin_fma(a[1], b[1], c[1]), __builtin_fma(a[2], b[2], c[2]),
               __builtin_fma(a[3], b[3], c[3])};
}

#ifdef REDUX_EIGHT_LANES
#include <immintrin.h>

typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
/* a broadcast: GCC 12 builds the initializer {v, ..., v} lane by lane in AVX-512 code */
static inline __attribute__((always_inline)) REDUX_AVX512 v8d splat8(double v) { return (v8d)_mm512_set1_pd(v); }
static inline __attribute__((always_inline)) v8d select8(v8i mask, v8d yes, v8d no) { return (v8d)(((v8i)yes & mask) | ((v8i)no & ~mask)); }
static inline __attribute__((always_inline)) REDUX_AVX512 v8d fma8(v8d a, v8d b, v8d c) {
  return (v8d)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
}
static inline __attribute__((always_inline)) REDUX_AVX2_FMA v4d fma4_avx2(v4d a, v4d b, v4d c) {
  return (v4d)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
}
static inline __attribute__((always_inline)) REDUX_AVX2_FMA v4d splat4_avx2(double v) { return (v4d)_mm256_set1_pd(v); }

/* float16 codes p[0, n) as fp64 into d by the F16C instruction: the same
 * values as f16_to_float's. */
static REDUX_AVX2_F16C void load_f16_f16c(const uint16_t *p, int64_t n, double *d) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + i)));
    _mm256_storeu_pd(d + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(d + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  for (; i < n; ++i) d[i] = (double)f16_to_float(p[i]);
}
#endif

/* Row `row` of t as fp64 into d[0, n). */
static REDUX_HOT void load_values(const void *x, int64_t row, int64_t n, redux_dtype t, double *d) {
#ifdef REDUX_EIGHT_LANES
  if (t == REDUX_F16 && redux_cpu_f16c()) {
    load_f16_f16c((const uint16_t *)x + row * n, n, d);
    return;
  }
#endif
  switch (t) {
    case REDUX_F32: {
      const float *p = (const float *)x + row * n;
      for (int64_t i = 0; i < n; ++i) d[i] = (double)p[i];
      break;
    }
    case REDUX_F16: {
      const uint16_t *p = (const uint16_t *)x + row * n;
      for (int64_t i = 0; i < n; ++i) d[i] = (double)f16_to_float(p[i]);
      break;
    }
    default: {
      const uint16_t *p = (const uint16_t *)x + row * n;
      for (int64_t i = 0; i < n; ++i) d[i] = (double)bf16_to_float(p[i]);
      break;
    }
  }
}

/* The fixed pairwise tree over the XLANES lanes (lane is overwritten). */
static inline double lanes_tree(double *lane) {
  for (int w = XLANES / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = lane[j] + lane[j + w];
  return lane[0];
}

/* The sum of a[i] * b[i] (b NULL: of a[i]) in XLANES lanes, element i into
 * lane i % XLANES, combined by the fixed pairwise tree. W: lanes a vector. */
#define LANES_SUM(NAME, ATTR, V, W)                                                        \
  static ATTR double NAME(const double *a, const double *b, int64_t n) {                 \
    V acc[XLANES / W] = {{0}};                                                           \
    int64_t i = 0;                                                                       \
    for (; i + XLANES <= n; i += XLANES)                                                 \
      for (int k = 0; k < XLANES / W; ++k) {                                             \
        V u;                                                                             \
        memcpy(&u, a + i + W * k, sizeof u);                                             \
        if (b != NULL) {                                                                 \
          V w;                                                                           \
          memcpy(&w, b + i + W * k, sizeof w);                                           \
          u = u * w;                                                                     \
        }                                                                                \
        acc[k] += u;                                                                     \
      }                                                                                  \
    double lane[XLANES];                                                                 \
    memcpy(lane, acc, sizeof lane);                                                      \
    for (int j = 0; i + j < n; ++j) lane[j] += b != NULL ? a[i + j] * b[i + j] : a[i + j]; \
    return lanes_tree(lane);                                                             \
  }
LANES_SUM(lanes_sum4, REDUX_HOT, v4d, 4)
#ifdef REDUX_EIGHT_LANES
LANES_SUM(lanes_sum8, REDUX_AVX512, v8d, 8)
#endif

static inline double lanes_sum(const double *a, const double *b, int64_t n) {
#ifdef REDUX_EIGHT_LANES
  if (redux_cpu_eight_lanes()) return lanes_sum8(a, b, n);
#endif
  return lanes_sum4(a, b, n);
}

/* An fp64 value rounded once to a row's dtype. */
#define TO_F32(v) ((float)(v))
#define TO_F16(v) double_to_f16(v)
#define TO_BF16(v) double_to_bf16(v)

/* y[i] = v rounded once to t (float64, float32, float16 or bfloat16). */
static inline void store_value(void *y, int64_t i, redux_dtype t, double v) {
  switch (t) {
    case REDUX_F64: ((double *)y)[i] = v; break;
    case REDUX_F32: ((float *)y)[i] = TO_F32(v); break;
    case REDUX_F16: ((uint16_t *)y)[i] = TO_F16(v); break;
    default: ((uint16_t *)y)[i] = TO_BF16(v); break;
  }
}

/* Piece j's length in a row of n (redux.h, long rows). */
static inline int64_t row_piece_length(int64_t j, int64_t n) {
  const int64_t piece = redux_row_piece(n), left = n - j * piece;
  return left < piece ? left : piece;
}

/* Piece i = r P + j of [rows, n]'s rows: x + (its first element) in bytes. */
static inline const void *row_piece_start(const void *x, int64_t i, int64_t n, redux_dtype t) {
  const int64_t pieces = redux_row_pieces(n);
  const int64_t first = (i / pieces) * n + (i % pieces) * redux_row_piece(n);
  return (const char *)x + first * redux_dtype_size(t);
}

#endif /* REDUX_CPU_ROWS_H */
