/* How the CPU kernels' hottest loops are compiled (C11, header-only):
 * REDUX_HOT builds a function twice, for AVX2 and for the baseline, and
 * picks one at load time (GCC's target_clones on x86-64); REDUX_AVX512
 * marks the eight-lane forms for CPUs with AVX-512F (rows.h). Code
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
/* REDUX_HOT with an AVX-512 clone as well, for integer loops (the extremes'
 * keys): every clone does the same integer operations. */
#define REDUX_HOT_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define REDUX_HOT
#define REDUX_HOT_WIDE
#endif

#endif
