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
#include "redux/redux.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(REDUX_CPU_NO_CLONES)
#define REDUX_HOT __attribute__((target_clones("avx2", "default")))
#else
#define REDUX_HOT
#endif

#define XLANES 16

/* The vector helpers are static and inlined: no ABI crosses a call. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
static inline __attribute__((always_inline)) v4d splat(double v) { return (v4d){v, v, v, v}; }
static inline __attribute__((always_inline)) v4d select4(v4i mask, v4d yes, v4d no) { return (v4d)(((v4i)yes & mask) | ((v4i)no & ~mask)); }

/* Row `row` of t as fp64 into d[0, n). */
static REDUX_HOT void load_values(const void *x, int64_t row, int64_t n, redux_dtype t, double *d) {
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
 * lane i % XLANES, combined by the fixed pairwise tree. */
static REDUX_HOT double lanes_sum(const double *a, const double *b, int64_t n) {
  v4d acc[XLANES / 4] = {{0}};
  int64_t i = 0;
  for (; i + XLANES <= n; i += XLANES)
    for (int k = 0; k < XLANES / 4; ++k) {
      v4d u;
      memcpy(&u, a + i + 4 * k, sizeof u);
      if (b != NULL) {
        v4d w;
        memcpy(&w, b + i + 4 * k, sizeof w);
        u = u * w;
      }
      acc[k] += u;
    }
  double lane[XLANES];
  memcpy(lane, acc, sizeof lane);
  for (int j = 0; i + j < n; ++j) lane[j] += b != NULL ? a[i + j] * b[i + j] : a[i + j];
  return lanes_tree(lane);
}


/* An fp64 value rounded once to a row's dtype. */
#define TO_F32(v) ((float)(v))
#define TO_F16(v) double_to_f16(v)
#define TO_BF16(v) double_to_bf16(v)

#endif /* REDUX_CPU_ROWS_H */
