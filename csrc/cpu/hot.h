/* How the CPU kernels' hottest loops are compiled (C11, header-only):
 * REDUX_HOT builds a function twice, for AVX2 and for the baseline, and
 * picks one at load time (GCC's target_clones on x86-64); REDUX_AVX512
 * marks the eight-lane forms for CPUs with AVX-512F (rows.h, sum_cpu.c's
 * columns), which redux_cpu_eight_lanes() chooses at run time. Code
 * generation only: the same operations, so the same bits.
 */
#ifndef REDUX_CPU_HOT_H
#define REDUX_CPU_HOT_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(REDUX_CPU_NO_CLONES)
#define REDUX_HOT __attribute__((target_clones("avx2", "default")))
/* The eight-lane forms of the hottest loops, for CPUs with AVX-512F, chosen
 * at run time (redux_cpu_eight_lanes): the same IEEE operations lane by
 * lane as the four-lane forms, so the same bits. */
#define REDUX_EIGHT_LANES 1
#define REDUX_AVX512 __attribute__((target("avx512f")))
/* The four-lane exp forms in AVX2 with FMA instructions, for CPUs with
 * both (redux_cpu_fma_lanes): the multiply-adds the source calls for, the
 * table read as one gather; the baseline's fma is the C library's. */
#define REDUX_AVX2_FMA __attribute__((target("avx2,fma")))
/* The four-lane column forms, for CPUs with AVX2 (sum_cpu.c's columns). */
#define REDUX_AVX2 __attribute__((target("avx2")))
/* The float16 loads by the F16C instruction, for CPUs with AVX2 and F16C
 * (redux_cpu_f16c): exact conversions, as convert.h's. */
#define REDUX_AVX2_F16C __attribute__((target("avx2,f16c")))
/* The eight-lane forms' float16 loads, for CPUs with both. */
#define REDUX_AVX512_F16C __attribute__((target("avx512f,f16c")))
/* REDUX_HOT with an AVX-512 clone as well, for integer loops (the extremes'
 * keys): every clone does the same integer operations. */
#define REDUX_HOT_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define REDUX_HOT
#define REDUX_HOT_WIDE
#endif

#ifdef REDUX_EIGHT_LANES
#include <immintrin.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Eight (four) codes at p as fp64 lanes, exactly: float widened, float16 by
 * F16C (as convert.h's f16_to_float), bfloat16 as a float's high half. For
 * functions built for the matching target (REDUX_AVX512[_F16C], AVX2[+F16C]). */
#define REDUX_LANES8_F32(p) _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define REDUX_LANES4_F32(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
#define REDUX_LANES8_F16(p) _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p))))
#define REDUX_LANES4_F16(p) _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64((const __m128i *)(p))))
#define REDUX_LANES8_BF16(p) \
  _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16)))
#define REDUX_LANES4_BF16(p) \
  _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i *)(p))), 16)))

/* probe()'s answer, asked once: *cache is 0 unknown, 1 no, 2 yes. */
static inline int answer_once(_Atomic int *cache, int (*probe)(void)) {
  int known = atomic_load_explicit(cache, memory_order_relaxed);
  if (!known) {
    known = probe() ? 2 : 1;
    atomic_store_explicit(cache, known, memory_order_relaxed);
  }
  return known == 2;
}

static inline int cpu_has_avx2_fma(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
/* Whether the four-lane AVX2 + FMA forms run where the eight-lane ones do
 * not: the CPU has both. Speed only: the same bits. */
static inline int redux_cpu_fma_lanes(void) {
  static _Atomic int cache = 0;
  return answer_once(&cache, cpu_has_avx2_fma);
}

static inline int cpu_has_avx2_f16c(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"); }
/* Whether float16 loads convert by the F16C instruction (exact, as
 * convert.h's f16_to_float): the CPU has AVX2 and F16C. Speed only. */
static inline int redux_cpu_f16c(void) {
  static _Atomic int cache = 0;
  return answer_once(&cache, cpu_has_avx2_f16c);
}

static inline int cpu_takes_eight_lanes(void) {
  const char *env = getenv("REDUX_CPU_EIGHT_LANES");
  return __builtin_cpu_supports("avx512f") && !(env && !strcmp(env, "0"));
}
/* Whether the eight-lane forms run: the CPU has AVX-512F and
 * REDUX_CPU_EIGHT_LANES is not "0" (which tests the four-lane forms'
 * bits on such a CPU). Speed only: both forms give the same bits. */
static inline int redux_cpu_eight_lanes(void) {
  static _Atomic int cache = 0;
  return answer_once(&cache, cpu_takes_eight_lanes);
}
#endif

#endif
