/* Where does a CPU rows sum lose time against torch.sum's kind of loop,
 * one thread, in cache? (Rows of 1024 still pay ~3 ns a row: an open
 * question, docs/notes/cpu.md.)
 *
 * A standalone measuring program, not part of the product. Each variant sums
 * ROWS rows of N fp32 elements into ROWS floats:
 *   product   the product's row loop without prefetch (csrc/cpu/sum_cpu.c
 *             rows_f32_fma_loop, PF_NONE): 32 fp64 lanes as eight 4-wide
 *             FMA-by-1.0 accumulators, the lane tree, then the next row;
 *   x8 body   the same with 256 elements an iteration (a shorter inner
 *             loop: is the loop's exit the cost?);
 *   deferred  row r's tree added up after row r + 1's loop, the lanes kept
 *             in registers (does the tree's chain of dependent adds hold up
 *             the next row?);
 *   fp32      torch.sum's kind of loop per row (other bits by design).
 * The fp64 variants give the same bits (checked). Run one shape as rows of
 * 1024 and as rows of 32768 to see the cost per row.
 *
 * Build and run on the CPU machine (x86-64 with AVX2 and FMA):
 *   gcc -std=gnu11 -O3 -ffp-contract=off -o /tmp/cpu_rows bench/cpu_rows.c
 *   /tmp/cpu_rows ROWS N [ROUNDS=400]          (e.g. 1024 1024, 32 32768)
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_bench.h"

#define LANE(a, p) a = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(p)), ones, a)
#define LANES32(p)                                                                   \
  LANE(a0, p); LANE(a1, (p) + 4); LANE(a2, (p) + 8); LANE(a3, (p) + 12);             \
  LANE(a4, (p) + 16); LANE(a5, (p) + 20); LANE(a6, (p) + 24); LANE(a7, (p) + 28);
#define ZERO_LANES                                                                   \
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0
#define TREE_OF_LANES(dst)                                                            \
  do {                                                                               \
    const v4d l_[8] = {(v4d)a0, (v4d)a1, (v4d)a2, (v4d)a3, (v4d)a4, (v4d)a5, (v4d)a6, (v4d)a7}; \
    (dst) = (float)(0.0 + tree32(l_));                                               \
  } while (0)

/* BODY: elements an iteration of the inner loop (32 or 256), then 32 at a time. */
__attribute__((target("avx2,fma"), always_inline)) static inline void rows_fma(const float *x, float *y,
                                                                                int64_t rows, int64_t n, int body) {
  const __m256d ones = _mm256_set1_pd(1.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *p = x + r * n;
    ZERO_LANES;
    int64_t i = 0;
    if (body == 256)
      for (; i + 256 <= n; i += 256) {
        LANES32(p + i) LANES32(p + i + 32) LANES32(p + i + 64) LANES32(p + i + 96)
        LANES32(p + i + 128) LANES32(p + i + 160) LANES32(p + i + 192) LANES32(p + i + 224)
      }
    for (; i + 32 <= n; i += 32) { LANES32(p + i) }
    TREE_OF_LANES(y[r]);
  }
}
__attribute__((target("avx2,fma"), noinline)) static void rows_product(const float *x, float *y, int64_t rows,
                                                                        int64_t n) {
  rows_fma(x, y, rows, n, 32);
}
__attribute__((target("avx2,fma"), noinline)) static void rows_x8_body(const float *x, float *y, int64_t rows,
                                                                        int64_t n) {
  rows_fma(x, y, rows, n, 256);
}

__attribute__((target("avx2,fma"), noinline)) static void rows_deferred(const float *x, float *y, int64_t rows,
                                                                         int64_t n) {
  const __m256d ones = _mm256_set1_pd(1.0);
  v4d prev[8];
  for (int64_t r = 0; r < rows; ++r) {
    const float *p = x + r * n;
    ZERO_LANES;
    for (int64_t i = 0; i + 32 <= n; i += 32) { LANES32(p + i) }
    if (r > 0) y[r - 1] = (float)(0.0 + tree32(prev));
    prev[0] = (v4d)a0, prev[1] = (v4d)a1, prev[2] = (v4d)a2, prev[3] = (v4d)a3;
    prev[4] = (v4d)a4, prev[5] = (v4d)a5, prev[6] = (v4d)a6, prev[7] = (v4d)a7;
  }
  if (rows > 0) y[rows - 1] = (float)(0.0 + tree32(prev));
}

__attribute__((noinline)) static void rows_fp32(const float *x, float *y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) y[r] = (float)loop_fp32(x + r * n, n);
}

static int by_value(const void *a, const void *b) {
  const double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

int main(int argc, char **argv) {
  const int64_t rows = argc > 1 ? atoll(argv[1]) : 1024, n = argc > 2 ? atoll(argv[2]) : 1024;
  const int rounds = argc > 3 ? atoi(argv[3]) : 400;
  if (rows < 1 || n < 32 || n % 32 != 0 || rounds < 1) {
    fprintf(stderr, "cpu_rows: ROWS >= 1, N a multiple of 32, ROUNDS >= 1\n");
    return 2;
  }
  struct {
    const char *name;
    void (*f)(const float *, float *, int64_t, int64_t);
  } vs[] = {{"product", rows_product}, {"x8 body", rows_x8_body}, {"deferred", rows_deferred}, {"fp32", rows_fp32}};
  enum { kVariants = sizeof vs / sizeof vs[0] };
  float *x = aligned_alloc(64, (size_t)(rows * n) * 4);
  float *y[kVariants];
  double *t[kVariants];
  srand(1);
  for (int64_t i = 0; i < rows * n; ++i) x[i] = (float)rand() / (float)RAND_MAX - 0.3f; /* offset: never all zeros */
  for (int v = 0; v < kVariants; ++v) {
    y[v] = aligned_alloc(64, (size_t)rows * 4 + 64);
    t[v] = malloc(sizeof(double) * rounds);
  }
  for (int r = 0; r < rounds; ++r) /* interleaved: a slow phase hits every variant */
    for (int v = 0; v < kVariants; ++v) {
      const double t0 = now_ns();
      vs[v].f(x, y[v], rows, n);
      t[v][r] = now_ns() - t0;
    }
  printf("%lld rows of %lld fp32 elements (%.1f MB), one thread, %d rounds: median (best) us\n", (long long)rows,
         (long long)n, rows * n * 4 / 1e6, rounds);
  for (int v = 0; v < kVariants; ++v) {
    qsort(t[v], rounds, sizeof(double), by_value);
    const char *bits = v == kVariants - 1                                ? "(fp32 accumulators: other bits by design)"
                       : memcmp(y[v], y[0], (size_t)rows * 4) == 0 ? "same bits as product"
                                                                     : "OTHER BITS";
    printf("  %-9s %8.1f (%8.1f)  %5.1f elements/ns  %s\n", vs[v].name, t[v][rounds / 2] / 1e3, t[v][0] / 1e3,
           rows * n / t[v][rounds / 2], bits);
  }
  return 0;
}
