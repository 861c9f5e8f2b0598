/* Which software prefetch pays for the CPU float32 loop on this host, on
 * one or two threads? The evidence behind csrc/cpu/sum_cpu.c's prefetch
 * forms, which the product also measures at run time (docs/notes/cpu.md).
 *
 * A standalone measuring program, not part of the product. Every variant is
 * the product's float32 FMA loop (32 fp64 lanes as eight 4-wide vectors,
 * each add a fused multiply-add by 1.0, the same tree: the same bits) and
 * differs only in its prefetch, issued twice per 32 elements (once per
 * 64-byte line):
 *   near 1k   __builtin_prefetch(..., 3) 1 KB ahead: prefetcht0, into the
 *             L1;
 *   far 8k    __builtin_prefetch(..., 1) 8 KB ahead: prefetcht2, into the
 *             L2 (the product's loop, where measured to pay, from a
 *             quarter of the L3 to twice the L3; far
 *             16k from twice the L3, none under a quarter of the L3);
 *   far 12k, far 16k, L2 at 12 / 16 KB; near+far, both kinds each line;
 *   far 4k    prefetcht2 4 KB ahead; t0 8k: prefetcht0 8 KB ahead (into
 *             the L1, the product's third form); nta 8k: prefetchnta 8 KB
 *             ahead;
 *   none      no software prefetch;
 *   fp32      torch.sum's kind of loop (four 8-wide fp32 accumulators).
 * ROW-element rows over an ELEMENTS buffer (the full sum's units are rows
 * of 32768, the rows targets rows of 1024-4096); two threads take a half
 * each, as at::parallel_for does; variants interleaved round by round;
 * prints the median and best time and the median's ratio to fp32's.
 *
 * Build and run on the CPU machine (x86-64 with AVX2 and FMA):
 *   gcc -std=gnu11 -O3 -ffp-contract=off -pthread -o /tmp/cpu_prefetch bench/cpu_prefetch.c
 *   /tmp/cpu_prefetch ROW ELEMENTS THREADS ROUNDS     (e.g. 32768 4194304 2 200)
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu_bench.h"

#define LANES(k) a##k = (v4d)_mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k)), ones, (__m256d)a##k);
/* One prefetch per line of the 128 bytes an iteration reads. */
#define PF(bytes, locality)                                                \
  __builtin_prefetch((const char *)(x + i) + (bytes), 0, locality);        \
  __builtin_prefetch((const char *)(x + i + 16) + (bytes), 0, locality);
#define DEFINE_LOOP(NAME, PREFETCHES)                                                                         \
  __attribute__((target("avx2,fma"), noinline)) static double NAME(const float *x, int64_t n) {               \
    v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;                    \
    const __m256d ones = _mm256_set1_pd(1.0);                                                               \
    for (int64_t i = 0; i + 32 <= n; i += 32) {                                                             \
      PREFETCHES LANES(0) LANES(1) LANES(2) LANES(3) LANES(4) LANES(5) LANES(6) LANES(7)                    \
    }                                                                                                       \
    const v4d a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                                      \
    return tree32(a);                                                                                       \
  }
DEFINE_LOOP(loop_none, )
DEFINE_LOOP(loop_near_1k, PF(1024, 3))
DEFINE_LOOP(loop_far_8k, PF(8192, 1))
DEFINE_LOOP(loop_far_12k, PF(12288, 1))
DEFINE_LOOP(loop_far_16k, PF(16384, 1))
DEFINE_LOOP(loop_near_far, PF(1024, 3) PF(8192, 1))
DEFINE_LOOP(loop_far_4k, PF(4096, 1))
DEFINE_LOOP(loop_t0_8k, PF(8192, 3))
DEFINE_LOOP(loop_nta_8k, PF(8192, 0))

static const struct {
  const char *name;
  double (*f)(const float *, int64_t);
} kVariants[] = {{"fp32", loop_fp32},          {"none", loop_none},         {"near 1k", loop_near_1k},
                 {"far 8k", loop_far_8k},      {"far 12k", loop_far_12k},   {"far 16k", loop_far_16k},
                 {"near+far", loop_near_far},  {"far 4k", loop_far_4k},     {"t0 8k", loop_t0_8k},
                 {"nta 8k", loop_nta_8k}};
enum { kCount = sizeof kVariants / sizeof kVariants[0] };

static const float *g_x;
static int64_t g_row;
static int g_variant;
static volatile double g_sink;

struct range {
  int64_t begin, end;
};

static void *sum_range(void *arg) {
  const struct range *r = arg;
  double s = 0;
  for (int64_t o = r->begin; o < r->end; o += g_row) s += kVariants[g_variant].f(g_x + o, g_row);
  g_sink += s;
  return NULL;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s ROW ELEMENTS THREADS(1|2) ROUNDS\n", argv[0]);
    return 2;
  }
  const int64_t row = atoll(argv[1]), n = atoll(argv[2]);
  const int threads = atoi(argv[3]), rounds = atoi(argv[4]);
  if (row < 32 || row % 32 || n < 2 * row || n % (2 * row) || (threads != 1 && threads != 2) || rounds < 1) {
    fprintf(stderr, "cpu_prefetch: ROW a multiple of 32, ELEMENTS a multiple of 2 * ROW, THREADS 1 or 2\n");
    return 2;
  }
  float *x = aligned_alloc(64, (size_t)n * sizeof(float));
  double *t = malloc(sizeof(double) * kCount * rounds);
  if (!x || !t) return 2;
  srand(1);
  for (int64_t i = 0; i < n; ++i) x[i] = (float)rand() / (float)RAND_MAX + 2.5f; /* offset: never all zeros */
  g_x = x;
  g_row = row;
  for (int r = 0; r < rounds; ++r)
    for (int v = 0; v < kCount; ++v) {
      g_variant = v;
      struct range whole = {0, n}, lo = {0, n / 2}, hi = {n / 2, n};
      const double t0 = now_ns();
      if (threads == 1) {
        sum_range(&whole);
      } else {
        pthread_t other;
        pthread_create(&other, NULL, sum_range, &hi);
        sum_range(&lo);
        pthread_join(other, NULL);
      }
      t[v * rounds + r] = now_ns() - t0;
    }
  printf("rows of %lld, %lld fp32 elements (%.1f MB), %d thread(s), %d rounds: median (best) us\n", (long long)row,
         (long long)n, n * 4 / 1e6, threads, rounds);
  for (int v = 0; v < kCount; ++v) qsort(t + v * rounds, rounds, sizeof(double), by_value);
  for (int v = 0; v < kCount; ++v)
    printf("  %-9s %9.1f (%9.1f)  %.3fx fp32\n", kVariants[v].name, t[v * rounds + rounds / 2] / 1e3,
           t[v * rounds] / 1e3, t[v * rounds + rounds / 2] / t[rounds / 2]);
  free(t);
  free(x);
  return 0;
}
