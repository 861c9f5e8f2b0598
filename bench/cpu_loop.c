/* The CPU float-class loop against torch.sum's kind of loop, one thread:
 * the evidence behind leaderboard/HISTORY.md ("CPU", "Stop 31" to "Stop
 * 41"; issue 15, target 4).
 *
 * A standalone measuring program, not part of the product. Each variant
 * sums fp32 rows into 32 fp64 lanes the way csrc/cpu/sum_cpu.c does
 * (element i to lane i % 32, eight 4-wide vectors, the same pairwise tree),
 * and differs only in how four floats become four doubles:
 *   cvt     vcvtps2pd, the product's loop (the compiler emits it for the
 *           (double) casts of partial_d_f32);
 *   int     exact by integer ops: sign-extend the float's bits to 64, shift
 *           left 29, clear bits 62-60. That is the double of the same sign
 *           and mantissa whose exponent is the float's unbiased one less
 *           896, i.e. the value times 2^-896 exactly. The lanes add in that
 *           scaled domain with the same roundings (every value is a multiple
 *           of 2^-1045, so no add underflows differently) and are scaled
 *           back before the tree: the same bits as cvt. (Inf and NaN inputs
 *           would need a separate check; not timed here.)
 *   mix1:1  lanes 4j+1 by int, the rest by cvt (the two on different ports?)
 *   mix3:1  every fourth vector by int.
 *   fma     vcvtps2pd, and the add as fma(v, 1.0, lane) (one rounding of
 *           v + lane: the same bits), which moves the adds from the two FP
 *           add pipes the conversions also use to the FMA pipes (Zen 3);
 *           the product's loop since stop 31 (partial_d_f32_fma).
 *   fma pf4k  the same, prefetching 4 KB ahead instead of 1 KB.
 *   fma512  the fma loop in AVX-512 (four 8-wide accumulators: the same 32
 *           lanes), where the CPU has it (stop 37: on a Zen 4 host the
 *           512-bit conversion ran at half the rate, 14.7 elements/ns
 *           against the AVX2 loop's 22).
 *   fp32    torch.sum's kind of loop: four 8-wide fp32 accumulators.
 * Rows of ROW elements over a BYTES buffer, best of the rounds, interleaved;
 * prints elements per ns and checks that every fp64 variant gives cvt's bits.
 *
 * Build and run on the CPU machine (x86-64 with AVX2):
 *   gcc -std=gnu11 -O3 -ffp-contract=off -o /tmp/cpu_loop bench/cpu_loop.c
 *   /tmp/cpu_loop [ROW=1024] [ELEMENTS=1048576]
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_bench.h"

#define PREFETCH(x, i)                                                  \
  __builtin_prefetch((const char *)((x) + (i)) + PF_BYTES, 0, 3);       \
  __builtin_prefetch((const char *)((x) + (i) + 16) + PF_BYTES, 0, 3);
#define BY_CVT(k) a##k += (v4d)_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k));
#define BY_FMA(k) a##k = (v4d)_mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * k)), ones, (__m256d)a##k);
#define BY_INT(k)                                                                  \
  {                                                                                \
    __m256i q = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(x + i + 4 * k))); \
    q = _mm256_and_si256(_mm256_slli_epi64(q, 29), clear_62_60);                   \
    a##k += (v4d)_mm256_castsi256_pd(q);                                           \
  }
/* INT_LANES: bit k set when vector k converts by BY_INT (scaled lanes). */
#define DEFINE_LOOP(NAME, C0, C1, C2, C3, C4, C5, C6, C7, INT_LANES)                           \
  __attribute__((target("avx2,fma"), noinline)) static double NAME(const float *x, int64_t n) {    \
    v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;       \
    const __m256i clear_62_60 = _mm256_set1_epi64x((long long)0x8FFFFFFFFFFFFFFFull);          \
    const __m256d ones = _mm256_set1_pd(1.0);                                                  \
    (void)clear_62_60;                                                                         \
    (void)ones;                                                                                \
    for (int64_t i = 0; i + 32 <= n; i += 32) {                                                \
      PREFETCH(x, i) C0(0) C1(1) C2(2) C3(3) C4(4) C5(5) C6(6) C7(7)                           \
    }                                                                                          \
    v4d a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                               \
    for (int k = 0; k < 8; ++k)                                                                \
      if ((INT_LANES >> k) & 1) a[k] *= 0x1p896; /* exact: back from the scaled domain */     \
    return tree32(a);                                                                          \
  }
#define PF_BYTES 1024
DEFINE_LOOP(loop_cvt, BY_CVT, BY_CVT, BY_CVT, BY_CVT, BY_CVT, BY_CVT, BY_CVT, BY_CVT, 0x00)
DEFINE_LOOP(loop_int, BY_INT, BY_INT, BY_INT, BY_INT, BY_INT, BY_INT, BY_INT, BY_INT, 0xFF)
DEFINE_LOOP(loop_mix11, BY_CVT, BY_INT, BY_CVT, BY_INT, BY_CVT, BY_INT, BY_CVT, BY_INT, 0xAA)
DEFINE_LOOP(loop_mix31, BY_CVT, BY_CVT, BY_CVT, BY_INT, BY_CVT, BY_CVT, BY_CVT, BY_INT, 0x88)
DEFINE_LOOP(loop_fma, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, 0x00)
#undef PF_BYTES
#define PF_BYTES 4096
DEFINE_LOOP(loop_fma_pf4k, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, BY_FMA, 0x00)

#undef PF_BYTES
#define PF_BYTES 1024
/* The fma loop in AVX-512 (the same 1 KB prefetch): zmm j holds lanes 8j .. 8j + 7, the same 32 lanes. */
__attribute__((target("avx512f"), noinline)) static double loop_fma512(const float *x, int64_t n) {
  const __m512d ones = _mm512_set1_pd(1.0);
  __m512d a[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    PREFETCH(x, i)
    for (int k = 0; k < 4; ++k) a[k] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * k)), ones, a[k]);
  }
  v4d lanes[8];
  memcpy(lanes, a, sizeof lanes);
  return tree32(lanes);
}

int main(int argc, char **argv) {
  const int64_t row = argc > 1 ? atoll(argv[1]) : 1024;
  const int64_t n = argc > 2 ? atoll(argv[2]) : (int64_t)1 << 20;
  if (row < 32 || row % 32 != 0 || n < row || n % row != 0) {
    fprintf(stderr, "cpu_loop: ROW must be a multiple of 32 and divide ELEMENTS\n");
    return 2;
  }
  struct {
    const char *name;
    double (*f)(const float *, int64_t);
  } vs[] = {{"cvt", loop_cvt},         {"int", loop_int},      {"mix1:1", loop_mix11},
            {"mix3:1", loop_mix31},   {"fma", loop_fma},      {"fma pf4k", loop_fma_pf4k},
            {"fma512", loop_fma512}, {"fp32", loop_fp32}};
  enum { kVariants = sizeof vs / sizeof vs[0] };
  float *x = aligned_alloc(64, (size_t)n * 4);
  srand(1);
  for (int64_t i = 0; i < n; ++i) x[i] = (float)rand() / (float)RAND_MAX - 0.3f; /* offset: never all zeros */
  double best[kVariants];
  for (int v = 0; v < kVariants; ++v) best[v] = 1e30;
  const int rounds = n > ((int64_t)1 << 22) ? 20 : 300;
  volatile double sink = 0;
  const int has512 = __builtin_cpu_supports("avx512f");
  for (int r = 0; r < rounds; ++r)
    for (int v = 0; v < kVariants; ++v) {
      if (vs[v].f == loop_fma512 && !has512) continue;
      const double t0 = now_ns();
      for (int64_t o = 0; o < n; o += row) sink += vs[v].f(x + o, row);
      const double t = now_ns() - t0;
      if (t < best[v]) best[v] = t;
    }
  const double want = loop_cvt(x, n);
  printf("rows of %lld, %lld fp32 elements (%.1f MB), one thread, best of %d:\n", (long long)row, (long long)n,
         n * 4 / 1e6, rounds);
  for (int v = 0; v < kVariants; ++v) {
    if (vs[v].f == loop_fma512 && !has512) {
      printf("  %-8s (no AVX-512 on this CPU)\n", vs[v].name);
      continue;
    }
    const double got = vs[v].f(x, n);
    printf("  %-8s %9.1f us  %5.1f elements/ns%s\n", vs[v].name, best[v] / 1e3, n / best[v],
           v == kVariants - 1 ? "  (fp32 accumulators: other bits by design)"
                              : (memcmp(&got, &want, sizeof got) == 0 ? "  same bits as cvt" : "  OTHER BITS"));
  }
  free(x);
  return 0;
}
