/* What bench/cpu_loop.c and bench/cpu_prefetch.c share: the clock, the
 * product's lane tree and torch.sum's kind of fp32 loop (the baseline both
 * compare against). Measuring code only, not part of the product. */
#ifndef REDUX_BENCH_CPU_BENCH_H
#define REDUX_BENCH_CPU_BENCH_H

#include <immintrin.h>
#include <stdint.h>
#include <time.h>

typedef double v4d __attribute__((vector_size(32)));

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* sum_cpu.c's tree32_v: lanes k + (k + 16), + 8, + 4, + 2, + 1. */
static inline double tree32(const v4d a[8]) {
  const v4d b0 = a[0] + a[4], b1 = a[1] + a[5], b2 = a[2] + a[6], b3 = a[3] + a[7];
  const v4d c0 = b0 + b2, c1 = b1 + b3;
  const v4d d = c0 + c1;
  return (d[0] + d[2]) + (d[1] + d[3]);
}

/* torch.sum's kind of loop: four 8-wide fp32 accumulators (other bits). */
__attribute__((target("avx2"), noinline)) static double loop_fp32(const float *x, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
  }
  float t[8];
  _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  float r = 0;
  for (int k = 0; k < 8; ++k) r += t[k];
  return r;
}

#endif
