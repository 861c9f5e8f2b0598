/* redux CPU kernels, C11, single-threaded over the range they are given
 * (the shim fans ranges out with at::parallel_for).
 *
 * Contents
 *   conversions     fp16 / bf16 bits <-> float, round to nearest even
 *   partial_*       sum of a contiguous range into interleaved accumulators
 *                   (element i goes to lane i % lanes: 32 fp64 lanes for
 *                   float-class outputs, LANES = 8 otherwise), lanes
 *                   then combined by a fixed tree: the compiler vectorizes
 *                   the lanes, and the order is a function of the count.
 *   acc kinds       float-class outputs (f32, f16, bf16) and float32
 *                   into f64: fp64 lanes; float64 into f64: compensated
 *                   fp64 (hi + lo, TwoSum); i64 outputs: wrapping 64-bit
 *                   integer.
 *   reductions      the mapped reductions (redux_reduction: |x|, x * x)
 *                   add mapped elements through the same lanes and trees;
 *                   the plan carries the reduction to its items.
 *   redux_cpu_*     the C API of redux.h: partial, combine, rows, cols.
 * Compiled with -ffp-contract=off: no fused multiply-adds may change the
 * rounding of the error-free transforms.
 * The hot loops are built twice (AVX2 and baseline x86-64, chosen at load
 * time by target_clones): each lane adds the same elements in the same
 * order either way, so the bits do not depend on the ISA.
 * The float32 partial has a third form for CPUs with AVX2 and FMA
 * (partial_d_f32_fma, picked per call): the same adds as fused multiply-adds
 * by 1.0, which round the same way (tests/test_reliability.py builds it and
 * the baseline and compares their bits).
 * Define REDUX_CPU_NO_CLONES to build the baseline only.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "hot.h"
#include "redux/redux.h"

#define LANES 8

/* the AVX2 + FMA loops (chosen at run time) where hot.h builds clones */
#ifdef REDUX_EIGHT_LANES
#define REDUX_FMA_LOOP 1
#include <immintrin.h>
#else
#define REDUX_FMA_LOOP 0
#endif

/* ---- partial sums over a contiguous range ---- */

/* Software prefetch, PREFETCH_BYTES ahead of the loads, one per 64-byte
 * line: the hardware prefetcher alone leaves a core short of loads in
 * flight (docs/notes/cpu.md). A prefetch reads nothing the sum uses, so it
 * changes no bits; past the end of the range it is a no-op hint. */
#define PREFETCH_BYTES 1024
#define PREFETCH(p, i, elem)                                                      \
  do {                                                                            \
    if ((((i) * (elem)) & 63) == 0)                                               \
      __builtin_prefetch((const char *)(p) + (i) * (elem) + PREFETCH_BYTES, 0, 3); \
  } while (0)

/* The float32 loop's far form: into the L2 only, 8 or 16 KB ahead, for
 * inputs that do not stay in a shared L3 between calls, where 1 KB ahead
 * does not cover the latency of lines that come from memory. */
#define PREFETCH_FAR(p, i, elem, bytes) __builtin_prefetch((const char *)(p) + (i) * (elem) + (bytes), 0, 1)
/* The same distance into the L1 (prefetcht0): faster on some hosts,
 * slower on others, so it is one of the measured forms (below). */
#define PREFETCH_L1(p, i, elem, bytes) __builtin_prefetch((const char *)(p) + (i) * (elem) + (bytes), 0, 3)

/* The float32 FMA loop's prefetch forms: none, 8 KB ahead into the L2 (up
 * to 8T, twice the L3), 16 KB ahead into the L2 (from 8T), 8 KB ahead into
 * the L1. Which one pays differs between CPUs (docs/notes/cpu.md), so a size
 * class measures them (below). */
enum { PF_NONE = 0, PF_FAR_8K = 1, PF_FAR_16K = 2, PF_L1_8K = 3 };
#define PREFETCH_FAR_BYTES(form) ((form) == PF_FAR_16K ? 16384 : 8192)

/* The input size T from which the float32 loop may prefetch far: a
 * quarter of the L3 (Linux: cpu0's level-3 cache in sysfs, 32 MB where it
 * cannot be read; sysconf's figure can be the whole socket's), or REDUX_CPU_FAR_PREFETCH_BYTES from the environment (tests and
 * A/B runs). Read once; speed only: the prefetch reads nothing the sum
 * uses. */
int64_t redux_cpu_far_prefetch_bytes(void) {
  static _Atomic int64_t cached = -1;
  int64_t v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (v >= 0) return v;
  const char *env = getenv("REDUX_CPU_FAR_PREFETCH_BYTES");
  if (env && *env) {
    v = strtoll(env, NULL, 10);
  } else {
    int64_t l3 = (int64_t)32 << 20;
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (f) {
      long long k = 0;
      char unit = 0;
      if (fscanf(f, "%lld%c", &k, &unit) >= 1 && k > 0) l3 = (int64_t)k << (unit == 'M' ? 20 : unit == 'K' ? 10 : 0);
      fclose(f);
    }
    v = l3 / 4;
  }
  if (v < 0) v = 0;
  atomic_store_explicit(&cached, v, memory_order_relaxed);
  return v;
}

static int is_float_class(redux_dtype t) { return t == REDUX_F32 || t == REDUX_F16 || t == REDUX_BF16; }

/* Which prefetch pays is measured on the machine at hand, not assumed:
 * the hosts measured disagree by 7-27% either way (docs/notes/cpu.md).
 * Per size class (T / 8 up to T; T, a quarter of the L3, up to 8T, twice
 * the L3; beyond), the first calls planned by redux_cpu_sum_plan take the
 * forms in turn (none, the class's far form, the L1 form), the caller times
 * each (redux_cpu_prefetch_report), and after PF_TRIALS of each the form of
 * the lowest median time per byte stays. Speed only. */
#define PF_TRIALS 7
#define PF_TRIAL_FORMS 3 /* none, far (8 or 16 KB into the L2), 8 KB into the L1 */
typedef struct {
  _Atomic unsigned ticket;                    /* takes the trial calls' forms in turn */
  _Atomic int claimed[PF_TRIAL_FORMS];        /* samples claimed, by trial form */
  _Atomic int64_t ns_per_mib[PF_TRIAL_FORMS][PF_TRIALS];
  _Atomic int stored;                         /* samples stored, all forms */
  _Atomic int choice;                         /* 0 undecided, else the form + 1 */
} prefetch_trials;
static prefetch_trials trials[3]; /* by size class (prefetch_form_of) */

/* REDUX_CPU_PREFETCH: "size" (far from T, unmeasured), "l1" (the L1 form
 * from T, unmeasured), "none", or "measure" (the default). Read once. */
enum { PF_MEASURE = 1, PF_BY_SIZE = 2, PF_NEVER = 3, PF_L1_FROM_T = 4 };
static int prefetch_mode(void) {
  static _Atomic int cached = 0;
  int m = atomic_load_explicit(&cached, memory_order_relaxed);
  if (m) return m;
  const char *env = getenv("REDUX_CPU_PREFETCH");
  m = !env || !*env || !strcmp(env, "measure") ? PF_MEASURE
      : !strcmp(env, "size")                   ? PF_BY_SIZE
      : !strcmp(env, "none")                   ? PF_NEVER
      : !strcmp(env, "l1")                     ? PF_L1_FROM_T
                                               : PF_MEASURE;
  atomic_store_explicit(&cached, m, memory_order_relaxed);
  return m;
}

/* The float32 loop's prefetch form (PF_*) for an input of that many bytes.
 * TRIAL, where given, may be made a timed trial: set to its class + 1 (0:
 * not a trial). Without it, an undecided class takes the far form, or none
 * under T. Classes: 0 from T, 1 from 8T (twice the L3 by default), and,
 * when measuring, 2 from T / 8 up to T (an input the L3 may keep between
 * calls, where hosts disagree on whether the L1 form pays). */
static int prefetch_form_of(int64_t input_bytes, int *trial) {
  const int64_t from = redux_cpu_far_prefetch_bytes();
  const int mode = prefetch_mode();
  if (trial) *trial = 0;
  int cls;
  if (input_bytes >= from) cls = input_bytes / 8 >= from;
  else if (mode == PF_MEASURE && input_bytes >= from / 8) cls = 2;
  else return PF_NONE;
  const int far = cls == 1 ? PF_FAR_16K : PF_FAR_8K;
  if (mode != PF_MEASURE) return mode == PF_NEVER ? PF_NONE : mode == PF_L1_FROM_T ? PF_L1_8K : far;
  const int choice = atomic_load_explicit(&trials[cls].choice, memory_order_acquire);
  if (choice) return choice - 1;
  if (!trial) return cls == 2 ? PF_NONE : far;
  *trial = cls + 1;
  const unsigned turn = atomic_fetch_add_explicit(&trials[cls].ticket, 1, memory_order_relaxed) % PF_TRIAL_FORMS;
  return turn == 0 ? PF_NONE : turn == 1 ? far : PF_L1_8K;
}
static int prefetch_form(int64_t input_bytes) { return prefetch_form_of(input_bytes, NULL); }

static int64_t median_of_trials(_Atomic int64_t *v) {
  int64_t a[PF_TRIALS];
  for (int k = 0; k < PF_TRIALS; ++k) a[k] = atomic_load_explicit(&v[k], memory_order_relaxed);
  for (int k = 1; k < PF_TRIALS; ++k)
    for (int j = k; j > 0 && a[j] < a[j - 1]; --j) {
      const int64_t t = a[j];
      a[j] = a[j - 1];
      a[j - 1] = t;
    }
  return a[PF_TRIALS / 2];
}

void redux_cpu_prefetch_report(const redux_cpu_plan *plan, redux_dtype out, int64_t input_bytes, int64_t ns) {
  /* Only the float32 loop into float-class outputs has the form. */
  if (!plan || plan->prefetch_trial < 1 || plan->prefetch_trial > 3 || !is_float_class(out) || input_bytes <= 0 ||
      ns <= 0)
    return;
  prefetch_trials *t = &trials[plan->prefetch_trial - 1];
  const int f = plan->far_prefetch == PF_NONE ? 0 : plan->far_prefetch == PF_L1_8K ? 2 : 1; /* trial form */
  const int slot = atomic_fetch_add_explicit(&t->claimed[f], 1, memory_order_relaxed);
  if (slot >= PF_TRIALS) return;
  atomic_store_explicit(&t->ns_per_mib[f][slot], (int64_t)((double)ns * (1 << 20) / (double)input_bytes),
                        memory_order_relaxed);
  /* The last sample stored decides; acq_rel orders every earlier store before its reads. */
  if (atomic_fetch_add_explicit(&t->stored, 1, memory_order_acq_rel) + 1 != PF_TRIAL_FORMS * PF_TRIALS) return;
  const int forms[PF_TRIAL_FORMS] = {PF_NONE, plan->prefetch_trial == 2 ? PF_FAR_16K : PF_FAR_8K, PF_L1_8K};
  int best = 0; /* the lowest median; a tie keeps the earlier form */
  for (int k = 1; k < PF_TRIAL_FORMS; ++k)
    if (median_of_trials(t->ns_per_mib[k]) < median_of_trials(t->ns_per_mib[best])) best = k;
  atomic_store_explicit(&t->choice, forms[best] + 1, memory_order_release);
}

int redux_cpu_prefetch_choice(int size_class) {
  if (size_class < 0 || size_class > 2) return -1;
  return atomic_load_explicit(&trials[size_class].choice, memory_order_acquire) - 1;
}

/* Float-class outputs: fp64 lanes. LOAD converts one element to double. */
#define LOAD_F32(p, i) ((double)((const float *)(p))[i])
#define LOAD_F16(p, i) ((double)f16_to_float(((const uint16_t *)(p))[i]))
#define LOAD_BF16(p, i) ((double)bf16_to_float(((const uint16_t *)(p))[i]))
#define LOAD_F64(p, i) (((const double *)(p))[i])

/* Float-class partials: FLANES = 32 fp64 lanes (element i goes to lane
 * i % 32), kept as eight 4-wide vectors (GCC/clang vector extensions: plain
 * IEEE adds lane by lane, the same in the AVX2 and the baseline clone).
 * 32 independent chains, not 8: in cache the loop was bound by the latency
 * of 8 dependent fp64 adds (4M fp32: 1.85x torch.sum's time); 32 keep the
 * adders busy. Lanes then combine by a fixed pairwise tree (tree32). */
#define FLANES 32
typedef double v4d __attribute__((vector_size(32)));

static inline double tree32(const double l[FLANES]) {
  double t[FLANES];
  for (int k = 0; k < FLANES; ++k) t[k] = l[k];
  for (int w = FLANES / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) t[k] = t[k] + t[k + w];
  return t[0];
}

/* tree32 on the lanes held as eight 4-wide vectors (a[j] holds lanes 4j to
 * 4j + 3): the same adds in the same order, kept in registers. In-cache rows
 * of 1-4K elements spent a third of their time in the array version's
 * stores and reloads. */
static inline void tree32_first_level(const v4d a[8], v4d b[4]) {
  for (int k = 0; k < 4; ++k) b[k] = a[k] + a[k + 4]; /* lanes k + (k + 16) */
}
/* The levels after the first, from its four vectors. */
static inline double tree32_rest(const v4d b[4]) {
  const v4d c0 = b[0] + b[2], c1 = b[1] + b[3];    /* k + (k + 8) */
  const v4d d = c0 + c1;                           /* k + (k + 4) */
  const double e0 = d[0] + d[2], e1 = d[1] + d[3]; /* k + (k + 2) */
  return e0 + e1;                                  /* 0 + 1 */
}
static inline double tree32_v(const v4d a[8]) {
  v4d b[4];
  tree32_first_level(a, b);
  return tree32_rest(b);
}

/* Returns the 32 lanes' sum: the tree in registers when the loop took every
 * element, else the tail's elements i, i + 1, ... < count added to lanes
 * 0, 1, ... first. */
#define RETURN_LANES(acc, LOAD, x, i, count)                            \
  do {                                                                 \
    if ((i) == (count)) return tree32_v(acc);                          \
    double lane[FLANES];                                               \
    memcpy(lane, (acc), sizeof lane);                                  \
    for (int k = 0; (i) + k < (count); ++k) lane[k] += LOAD(x, (i) + k); \
    return tree32(lane);                                               \
  } while (0)

#define V4(LOAD, x, i) ((v4d){LOAD(x, (i)), LOAD(x, (i) + 1), LOAD(x, (i) + 2), LOAD(x, (i) + 3)})
/* The 32 lanes' adds of one block: lane vector k takes elements 4k .. 4k + 3
 * of the block at p + i, each read by LOAD (LOAD(p, j): element j). */
#define ADD_BLOCK(LOAD, p, i)                                                                \
  do {                                                                                       \
    a0 += V4(LOAD, p, (i));                                                                  \
    a1 += V4(LOAD, p, (i) + 4);                                                              \
    a2 += V4(LOAD, p, (i) + 8);                                                              \
    a3 += V4(LOAD, p, (i) + 12);                                                             \
    a4 += V4(LOAD, p, (i) + 16);                                                             \
    a5 += V4(LOAD, p, (i) + 20);                                                             \
    a6 += V4(LOAD, p, (i) + 24);                                                             \
    a7 += V4(LOAD, p, (i) + 28);                                                             \
  } while (0)
#define DEFINE_PARTIAL_D(NAME, LOAD, ELEM)                                                   \
  REDUX_HOT static double NAME(const void *x, int64_t count) {                               \
    v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;     \
    int64_t i = 0;                                                                           \
    for (; i + FLANES <= count; i += FLANES) {                                               \
      PREFETCH(x, i, ELEM);                                                                  \
      PREFETCH(x, i + 16, ELEM);                                                             \
      ADD_BLOCK(LOAD, x, i);                                                                 \
    }                                                                                        \
    const v4d acc[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                     \
    RETURN_LANES(acc, LOAD, x, i, count);                                                    \
  }
/* float16: each block's 32 elements converted to floats in a loop of their
 * own (it vectorizes; converting inside the lanes' adds does not), then
 * DEFINE_PARTIAL_D's lanes and order on those floats (MAP: LOAD_F32 or its
 * |v|, v * v), the same values as LOAD's. CONVERT_BLOCK(f, h): f[0, 32)
 * from the codes h[0, 32), exactly. */
#define F16_BLOCK_C(f, h) \
  for (int k = 0; k < FLANES; ++k) (f)[k] = f16_to_float((h)[k])
#define DEFINE_PARTIAL_D_F16(NAME, ATTR, CONVERT_BLOCK, MAP, LOAD)                           \
  ATTR static double NAME(const void *x, int64_t count) {                                    \
    const uint16_t *h = (const uint16_t *)x;                                                 \
    v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;     \
    int64_t i = 0;                                                                           \
    for (; i + FLANES <= count; i += FLANES) {                                               \
      PREFETCH(x, i, 2);                                                                     \
      PREFETCH(x, i + 16, 2);                                                                \
      float f[FLANES];                                                                       \
      CONVERT_BLOCK(f, h + i);                                                               \
      ADD_BLOCK(MAP, f, 0);                                                                  \
    }                                                                                        \
    const v4d acc[8] = {a0, a1, a2, a3, a4, a5, a6, a7};                                     \
    RETURN_LANES(acc, LOAD, x, i, count);                                                    \
  }
DEFINE_PARTIAL_D(partial_d_f32, LOAD_F32, 4)
DEFINE_PARTIAL_D_F16(partial_d_f16_c, REDUX_HOT, F16_BLOCK_C, LOAD_F32, LOAD_F16)
DEFINE_PARTIAL_D(partial_d_bf16, LOAD_BF16, 2)

/* The mapped reductions' loads: the element in fp64, then |v| or v * v
 * (exact for float32, float16 and bfloat16 elements). */
static inline double square(double v) { return v * v; }
#define ABS_F32(p, i) fabs(LOAD_F32(p, i))
#define ABS_F16(p, i) fabs(LOAD_F16(p, i))
#define ABS_BF16(p, i) fabs(LOAD_BF16(p, i))
#define ABS_F64(p, i) fabs(LOAD_F64(p, i))
#define SQUARE_F32(p, i) square(LOAD_F32(p, i))
#define SQUARE_F16(p, i) square(LOAD_F16(p, i))
#define SQUARE_BF16(p, i) square(LOAD_BF16(p, i))
#define SQUARE_F64(p, i) square(LOAD_F64(p, i))
DEFINE_PARTIAL_D(partial_abs_f32, ABS_F32, 4)
DEFINE_PARTIAL_D_F16(partial_abs_f16_c, REDUX_HOT, F16_BLOCK_C, ABS_F32, ABS_F16)
DEFINE_PARTIAL_D(partial_abs_bf16, ABS_BF16, 2)
DEFINE_PARTIAL_D(partial_square_f32, SQUARE_F32, 4)
DEFINE_PARTIAL_D_F16(partial_square_f16_c, REDUX_HOT, F16_BLOCK_C, SQUARE_F32, SQUARE_F16)
DEFINE_PARTIAL_D(partial_square_bf16, SQUARE_BF16, 2)

#if REDUX_FMA_LOOP
/* partial_d_f32 with each lane's add done as fma(v, 1.0, a): v * 1.0 is v
 * exactly and the fma rounds v + a once, so every lane gets the same bits as
 * the add. Why: on Zen 3 the conversions and the adds share the two FP add
 * pipes, and the fma moves the adds to the otherwise idle FMA pipes
 * (docs/notes/cpu.md). */
/* MAP (REDUX_SUM_OF_VALUES or REDUX_SUM_OF_SQUARES, constant at every call
 * site): the sum adds fma(v, 1, a), the sum of squares fma(v, v, a), whose
 * product of a float32 is exact in fp64, so it rounds as the baseline's
 * v * v + a (one thread, 1M float32: 10% faster than the baseline loop;
 * |x| by an and-not before the fma was 12% slower than its baseline, so the
 * sum of |x| has none). */
#define FMA_LANES(k)                                                        \
  do {                                                                      \
    const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(p + i + 4 * k));         \
    a##k = _mm256_fmadd_pd(v, map == REDUX_SUM_OF_SQUARES ? v : one, a##k); \
  } while (0)
/* The 32 lanes of `count` elements into OUT (eight 4-wide vectors). FAR:
 * the prefetch form (PF_*), a constant at every call site (the function is
 * inlined), so each caller gets one loop with one kind of prefetch. */
__attribute__((target("avx2,fma"), always_inline)) static inline void f32_fma_lane_vectors(const float *p,
                                                                                         int64_t count, int far,
                                                                                         v4d out[8], int map) {
  const __m256d one = _mm256_set1_pd(1.0);
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  int64_t i = 0;
  for (; i + FLANES <= count; i += FLANES) {
    if (far == PF_L1_8K) {
      PREFETCH_L1(p, i, 4, 8192);
      PREFETCH_L1(p, i + 16, 4, 8192);
    } else if (far != PF_NONE) {
      PREFETCH_FAR(p, i, 4, PREFETCH_FAR_BYTES(far));
      PREFETCH_FAR(p, i + 16, 4, PREFETCH_FAR_BYTES(far));
    }
    FMA_LANES(0); FMA_LANES(1); FMA_LANES(2); FMA_LANES(3);
    FMA_LANES(4); FMA_LANES(5); FMA_LANES(6); FMA_LANES(7);
  }
  out[0] = (v4d)a0, out[1] = (v4d)a1, out[2] = (v4d)a2, out[3] = (v4d)a3;
  out[4] = (v4d)a4, out[5] = (v4d)a5, out[6] = (v4d)a6, out[7] = (v4d)a7;
  if (i == count) return;
  double lane[FLANES]; /* the tail's elements i, i + 1, ... to lanes 0, 1, ... */
  memcpy(lane, out, sizeof lane);
  for (int k = 0; i + k < count; ++k) {
    const double v = (double)p[i + k];
    lane[k] += map == REDUX_SUM_OF_SQUARES ? v * v : v;
  }
  memcpy(out, lane, sizeof lane);
}
/* The 32 lanes' sum (tree32_v gives tree32's bits). */
__attribute__((target("avx2,fma"), always_inline)) static inline double f32_fma_lanes(const float *p,
                                                                                    int64_t count, int far) {
  v4d lanes[8];
  f32_fma_lane_vectors(p, count, far, lanes, REDUX_SUM_OF_VALUES);
  return tree32_v(lanes);
}
/* The float32 sum of squares' FMA form (no software prefetch). */
__attribute__((target("avx2,fma"))) static double partial_square_f32_fma(const void *x, int64_t count) {
  v4d lanes[8];
  f32_fma_lane_vectors((const float *)x, count, PF_NONE, lanes, REDUX_SUM_OF_SQUARES);
  return tree32_v(lanes);
}
#undef FMA_LANES

__attribute__((target("avx2,fma"))) static double partial_d_f32_fma(const void *x, int64_t count, int far) {
  const float *p = (const float *)x;
  return far == PF_FAR_16K  ? f32_fma_lanes(p, count, PF_FAR_16K)
         : far == PF_FAR_8K ? f32_fma_lanes(p, count, PF_FAR_8K)
         : far == PF_L1_8K  ? f32_fma_lanes(p, count, PF_L1_8K)
                            : f32_fma_lanes(p, count, PF_NONE);
}

/* Float32 rows [r0, r1) of length n into float32 outputs with the loop
 * inlined: what redux_cpu_sum_rows computes through partial and combine
 * (0.0 + the row's partial, rounded), without two calls and their checks
 * a row. A row's tree is finished after the next row's loop, so its chain
 * of dependent adds overlaps that loop (same adds); its first level is
 * added at once, so four vectors wait instead of eight and stay in
 * registers beside the loop's eight accumulators (docs/notes/cpu.md). */
__attribute__((target("avx2,fma"), always_inline)) static inline void rows_f32_fma_loop(const float *x, float *y,
                                                                                        int64_t r0, int64_t r1,
                                                                                        int64_t n, int far) {
  v4d prev[4];
  for (int64_t r = r0; r < r1; ++r) {
    v4d cur[8];
    f32_fma_lane_vectors(x + r * n, n, far, cur, REDUX_SUM_OF_VALUES);
    if (r > r0) y[r - 1] = (float)(0.0 + tree32_rest(prev));
    tree32_first_level(cur, prev);
  }
  if (r1 > r0) y[r1 - 1] = (float)(0.0 + tree32_rest(prev));
}
__attribute__((target("avx2,fma"))) static void rows_f32_fma(const float *x, float *y, int64_t r0, int64_t r1,
                                                               int64_t n, int far) {
  if (far == PF_FAR_16K) rows_f32_fma_loop(x, y, r0, r1, n, PF_FAR_16K);
  else if (far == PF_FAR_8K) rows_f32_fma_loop(x, y, r0, r1, n, PF_FAR_8K);
  else if (far == PF_L1_8K) rows_f32_fma_loop(x, y, r0, r1, n, PF_L1_8K);
  else rows_f32_fma_loop(x, y, r0, r1, n, PF_NONE);
}

/* float16 by the F16C instruction, eight codes at a time: the same floats
 * as f16_to_float for every code (a signalling NaN comes out quiet, as the
 * conversion to fp64 after f16_to_float makes it), so the same lanes' bits. */
#define F16_BLOCK_F16C(f, h)              \
  for (int k = 0; k < FLANES; k += 8)     \
  _mm256_storeu_ps((f) + k, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((h) + k))))
DEFINE_PARTIAL_D_F16(partial_d_f16c, REDUX_AVX2_F16C, F16_BLOCK_F16C, LOAD_F32, LOAD_F16)
DEFINE_PARTIAL_D_F16(partial_abs_f16c, REDUX_AVX2_F16C, F16_BLOCK_F16C, ABS_F32, ABS_F16)
DEFINE_PARTIAL_D_F16(partial_square_f16c, REDUX_AVX2_F16C, F16_BLOCK_F16C, SQUARE_F32, SQUARE_F16)

/* The 16-bit partials in eight-lane vectors, for CPUs with AVX-512F (and
 * F16C for float16; redux_cpu_eight_lanes): vector j of four holds lanes
 * 8j .. 8j + 7, which DEFINE_PARTIAL_D keeps as its vectors 2j and 2j + 1,
 * so each lane adds the same elements in the same order: the same bits.
 * CVT16(p): 16 codes from p as a __m512 of floats; MAP8: on the fp64 lanes. */
#define BF16X16(p) \
  _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define F16X16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define HIGH8(f) _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))
#define DEFINE_PARTIAL_D8(NAME, ATTR, CVT16, MAP8, LOAD)                                      \
  ATTR static double NAME(const void *x, int64_t count) {                                    \
    const uint16_t *h = (const uint16_t *)x;                                                 \
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;                             \
    int64_t i = 0;                                                                           \
    for (; i + FLANES <= count; i += FLANES) {                                               \
      PREFETCH(x, i, 2);                                                                     \
      PREFETCH(x, i + 16, 2);                                                                \
      const __m512 f0 = CVT16(h + i), f1 = CVT16(h + i + 16);                                \
      a0 = _mm512_add_pd(a0, MAP8(_mm512_cvtps_pd(_mm512_castps512_ps256(f0))));             \
      a1 = _mm512_add_pd(a1, MAP8(_mm512_cvtps_pd(HIGH8(f0))));                              \
      a2 = _mm512_add_pd(a2, MAP8(_mm512_cvtps_pd(_mm512_castps512_ps256(f1))));             \
      a3 = _mm512_add_pd(a3, MAP8(_mm512_cvtps_pd(HIGH8(f1))));                              \
    }                                                                                        \
    v4d acc[8];                                                                              \
    const __m512d wide[4] = {a0, a1, a2, a3};                                                \
    memcpy(acc, wide, sizeof acc);                                                           \
    RETURN_LANES(acc, LOAD, x, i, count);                                                    \
  }
/* The mapped reductions on fp64 lanes (here and in the columns' forms). */
#define VALUE(v) (v)
#define ABS8(v) _mm512_abs_pd(v)
#define ABS4(v) _mm256_andnot_pd(_mm256_set1_pd(-0.0), v)
static inline __attribute__((always_inline)) REDUX_AVX512 __m512d square8(__m512d v) { return _mm512_mul_pd(v, v); }
static inline __attribute__((always_inline)) REDUX_AVX2 __m256d square4(__m256d v) { return _mm256_mul_pd(v, v); }
DEFINE_PARTIAL_D8(partial_d_bf16_8, REDUX_AVX512, BF16X16, VALUE, LOAD_BF16)
DEFINE_PARTIAL_D8(partial_abs_bf16_8, REDUX_AVX512, BF16X16, ABS8, ABS_BF16)
DEFINE_PARTIAL_D8(partial_square_bf16_8, REDUX_AVX512, BF16X16, square8, SQUARE_BF16)
DEFINE_PARTIAL_D8(partial_d_f16_8, REDUX_AVX512_F16C, F16X16, VALUE, LOAD_F16)
DEFINE_PARTIAL_D8(partial_abs_f16_8, REDUX_AVX512_F16C, F16X16, ABS8, ABS_F16)
DEFINE_PARTIAL_D8(partial_square_f16_8, REDUX_AVX512_F16C, F16X16, square8, SQUARE_F16)

/* A bfloat16 partial (MAP as partial_f16's) in eight lanes where the CPU
 * has AVX-512F. */
static double partial_bf16(redux_reduction map, const void *x, int64_t count) {
  const int eight = redux_cpu_eight_lanes();
  if (map == REDUX_SUM_OF_ABS) return eight ? partial_abs_bf16_8(x, count) : partial_abs_bf16(x, count);
  if (map == REDUX_SUM_OF_SQUARES) return eight ? partial_square_bf16_8(x, count) : partial_square_bf16(x, count);
  return eight ? partial_d_bf16_8(x, count) : partial_d_bf16(x, count);
}

/* A float16 partial (MAP: REDUX_SUM_OF_VALUES, _ABS or _SQUARES) in eight
 * lanes where the CPU has AVX-512F and F16C, else by F16C where it has
 * that, else in C. */
static double partial_f16(redux_reduction map, const void *x, int64_t count) {
  const int f16c = redux_cpu_f16c(), eight = f16c && redux_cpu_eight_lanes();
  if (map == REDUX_SUM_OF_ABS)
    return eight ? partial_abs_f16_8(x, count) : f16c ? partial_abs_f16c(x, count) : partial_abs_f16_c(x, count);
  if (map == REDUX_SUM_OF_SQUARES)
    return eight  ? partial_square_f16_8(x, count)
           : f16c ? partial_square_f16c(x, count)
                  : partial_square_f16_c(x, count);
  return eight ? partial_d_f16_8(x, count) : f16c ? partial_d_f16c(x, count) : partial_d_f16_c(x, count);
}

static int has_fma_loop(void) { return redux_cpu_fma_lanes(); }

/* FAR: the prefetch form (PF_*), in the float32 FMA loop only (the one
 * measured); the other loops keep the near prefetch. */
static double partial_f32(const void *x, int64_t count, int far) {
  return has_fma_loop() ? partial_d_f32_fma(x, count, far) : partial_d_f32(x, count);
}
/* A mapped reduction's float32 partial: squares in the FMA form where the CPU has it. */
static double mapped_f32(int abs, const void *x, int64_t count) {
  if (abs) return partial_abs_f32(x, count);
  return has_fma_loop() ? partial_square_f32_fma(x, count) : partial_square_f32(x, count);
}
#else
static int has_fma_loop(void) { return 0; }
static double partial_f32(const void *x, int64_t count, int far) {
  (void)far;
  return partial_d_f32(x, count);
}
static double mapped_f32(int abs, const void *x, int64_t count) {
  return abs ? partial_abs_f32(x, count) : partial_square_f32(x, count);
}
static double partial_f16(redux_reduction map, const void *x, int64_t count) {
  if (map == REDUX_SUM_OF_ABS) return partial_abs_f16_c(x, count);
  if (map == REDUX_SUM_OF_SQUARES) return partial_square_f16_c(x, count);
  return partial_d_f16_c(x, count);
}
static double partial_bf16(redux_reduction map, const void *x, int64_t count) {
  if (map == REDUX_SUM_OF_ABS) return partial_abs_bf16(x, count);
  if (map == REDUX_SUM_OF_SQUARES) return partial_square_bf16(x, count);
  return partial_d_bf16(x, count);
}
#endif

const char *redux_cpu_float32_loop(void) { return has_fma_loop() ? "avx2+fma" : "baseline"; }

/* Compensated: value = hi + lo. */
static inline void two_sum_add(double *hi, double *lo, double x) {
  const double s = *hi + x;
  const double bp = s - *hi;
  const double err = (*hi - (s - bp)) + (x - bp);
  *hi = s;
  *lo += err;
}

static inline void dd_combine(double *hi, double *lo, double bhi, double blo) {
  const double blo_total = *lo + blo;
  *lo = blo_total;
  two_sum_add(hi, lo, bhi);
}

#define DEFINE_PARTIAL_DD(NAME, LOAD, ELEM)                                       \
  REDUX_HOT static void NAME(const void *x, int64_t count, double *out_hi, double *out_lo) { \
    double hi[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};                                  \
    double lo[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};                                  \
    int64_t i = 0;                                                                \
    for (; i + LANES <= count; i += LANES) {                                      \
      PREFETCH(x, i, ELEM);                                                       \
      for (int k = 0; k < LANES; ++k) two_sum_add(&hi[k], &lo[k], LOAD(x, i + k)); \
    }                                                                             \
    for (int k = 0; i + k < count; ++k) two_sum_add(&hi[k], &lo[k], LOAD(x, i + k)); \
    for (int w = 1; w < LANES; w *= 2)                                            \
      for (int k = 0; k < LANES; k += 2 * w) dd_combine(&hi[k], &lo[k], hi[k + w], lo[k + w]); \
    *out_hi = hi[0];                                                              \
    *out_lo = lo[0];                                                              \
  }
DEFINE_PARTIAL_DD(partial_dd_f64, LOAD_F64, 8)
DEFINE_PARTIAL_DD(partial_abs_dd_f64, ABS_F64, 8)
DEFINE_PARTIAL_DD(partial_square_dd_f64, SQUARE_F64, 8)

REDUX_HOT static int64_t partial_i64(const void *x, int64_t count) {
  const int64_t *p = (const int64_t *)x;
  uint64_t lane[LANES] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + LANES <= count; i += LANES) {
    PREFETCH(p, i, 8);
    for (int k = 0; k < LANES; ++k) lane[k] += (uint64_t)p[i + k];
  }
  uint64_t s = 0;
  for (; i < count; ++i) s += (uint64_t)p[i];
  for (int k = 0; k < LANES; ++k) s += lane[k];
  return (int64_t)s;
}

/* ---- C API ---- */

/* A mapped reduction's partial (redux_reduction_supported checked): fp64
 * lanes, or compensated for float64 input. */
static void mapped_partial(redux_reduction r, const void *x, int64_t count, redux_dtype in, redux_cpu_acc *acc) {
  const int abs = r == REDUX_SUM_OF_ABS;
  switch (in) {
    case REDUX_F64:
      if (abs) partial_abs_dd_f64(x, count, &acc->hi, &acc->lo);
      else partial_square_dd_f64(x, count, &acc->hi, &acc->lo);
      break;
    case REDUX_F32: acc->hi = mapped_f32(abs, x, count); break;
    case REDUX_F16: acc->hi = partial_f16(r, x, count); break;
    default: acc->hi = partial_bf16(r, x, count); break;
  }
}

/* FAR: the float32 loop's prefetch form for the whole problem's input, of
 * which this range may be a part (prefetch_form). */
static redux_status reduce_partial(redux_reduction r, const void *x, int64_t count, redux_dtype in, redux_dtype out,
                                   redux_cpu_acc *acc, int far) {
  if (!redux_reduction_supported(r, in, out)) return REDUX_ERR_DTYPE;
  if (count < 0) return REDUX_ERR_SHAPE;
  acc->hi = 0.0;
  acc->lo = 0.0;
  acc->i = 0;
  if (r == REDUX_SUM_OF_ABS || r == REDUX_SUM_OF_SQUARES) {
    mapped_partial(r, x, count, in, acc);
  } else if (is_float_class(out)) {
    acc->hi = in == REDUX_F32 ? partial_f32(x, count, far)
            : in == REDUX_F16 ? partial_f16(REDUX_SUM_OF_VALUES, x, count)
                              : partial_bf16(REDUX_SUM_OF_VALUES, x, count);
  } else if (out == REDUX_F64) {
    /* float32 into float64: the float32 loop's fp64 lanes, unrounded (as
     * accurate as the output needs, at the float32 sum's speed) */
    if (in == REDUX_F64) partial_dd_f64(x, count, &acc->hi, &acc->lo);
    else acc->hi = partial_f32(x, count, far);
  } else {
    acc->i = partial_i64(x, count);
  }
  return REDUX_OK;
}

redux_status redux_cpu_sum_partial(const void *x, int64_t count, redux_dtype in, redux_dtype out,
                                   redux_cpu_acc *acc) {
  return reduce_partial(REDUX_SUM_OF_VALUES, x, count, in, out, acc,
                        count >= 0 ? prefetch_form(count * redux_dtype_size(in)) : PF_NONE);
}

/* MEAN_N: 0 for a sum; for the mean (REDUX_MEAN_OF_VALUES, float32 and
 * float64) the element count n: the fp64 total (as the float64 sum stores
 * it) divided by n, then rounded once, as redux.mean's composite on the
 * CPU computes it. */
static void store_output(redux_dtype out, double hi, double lo, int64_t i, void *y, int64_t k, int64_t mean_n) {
  if (mean_n > 0) {
    const double mean = (isfinite(hi) ? hi + lo : hi) / (double)mean_n;
    if (out == REDUX_F32) ((float *)y)[k] = (float)mean;
    else ((double *)y)[k] = mean;
    return;
  }
  switch (out) {
    case REDUX_F32: ((float *)y)[k] = (float)hi; break;
    /* inf/NaN inputs leave lo NaN (inf - inf): hi alone is then the answer */
    case REDUX_F64: ((double *)y)[k] = isfinite(hi) ? hi + lo : hi; break;
    /* rounded once from fp64 (a float first would round twice) */
    case REDUX_F16: ((uint16_t *)y)[k] = double_to_f16(hi); break;
    case REDUX_BF16: ((uint16_t *)y)[k] = double_to_bf16(hi); break;
    case REDUX_I64: ((int64_t *)y)[k] = i; break;
  }
}

/* Combines accs[0], accs[stride], ... (count of them) in that order
 * (MEAN_N as store_output's; the mean combines as the float64 sum). */
static void combine_strided(const redux_cpu_acc *accs, int64_t count, int64_t stride, redux_dtype out, void *y,
                            int64_t y_index, int64_t mean_n) {
  double hi = 0.0, lo = 0.0;
  uint64_t i = 0;
  for (int64_t k = 0; k < count; ++k) {
    const redux_cpu_acc *a = &accs[k * stride];
    if (out == REDUX_F64 || mean_n > 0) dd_combine(&hi, &lo, a->hi, a->lo);
    else hi += a->hi;
    i += (uint64_t)a->i;
  }
  store_output(out, hi, lo, (int64_t)i, y, y_index, mean_n);
}

redux_status redux_cpu_sum_combine(const redux_cpu_acc *accs, int64_t count, redux_dtype out, void *y,
                                   int64_t y_index) {
  combine_strided(accs, count, 1, out, y, y_index, 0);
  return REDUX_OK;
}

/* The element count a reduction's outputs divide by: n for the mean, else 0. */
static int64_t mean_count(redux_reduction r, int64_t n) { return r == REDUX_MEAN_OF_VALUES ? n : 0; }

/* FAR as in reduce_partial. */
static redux_status reduce_rows(redux_reduction r, const void *x, void *y, int64_t row_begin, int64_t row_end,
                                int64_t n, redux_dtype in, redux_dtype out, int far) {
  if (!redux_reduction_supported(r, in, out)) return REDUX_ERR_DTYPE;
  if (n < 0 || row_begin < 0 || row_end < row_begin) return REDUX_ERR_SHAPE;
#if REDUX_FMA_LOOP
  if (r == REDUX_SUM_OF_VALUES && in == out && in == REDUX_F32 && has_fma_loop()) { /* float32 into float32 */
    rows_f32_fma((const float *)x, (float *)y, row_begin, row_end, n, far);
    return REDUX_OK;
  }
#endif
  const char *base = (const char *)x;
  const int64_t pitch = n * redux_dtype_size(in);
  for (int64_t row = row_begin; row < row_end; ++row) {
    redux_cpu_acc acc;
    reduce_partial(r, base + row * pitch, n, in, out, &acc, far);
    combine_strided(&acc, 1, 1, out, y, row, mean_count(r, n));
  }
  return REDUX_OK;
}

redux_status redux_cpu_sum_rows(const void *x, void *y, int64_t row_begin, int64_t row_end, int64_t n,
                                redux_dtype in, redux_dtype out) {
  const int far =
      n >= 0 && row_end >= row_begin ? prefetch_form((row_end - row_begin) * n * redux_dtype_size(in)) : PF_NONE;
  return reduce_rows(REDUX_SUM_OF_VALUES, x, y, row_begin, row_end, n, in, out, far);
}

/* One columns work item: columns [c0, c0 + width) of slice o, over rows
 * [r0, r1) of x, a dense [outer, rows, inner] array (rows: its length of n),
 * into acc[0, width). */
#define COL_LOOP(ACC_STMT)                                         \
  for (int64_t r = r0; r < r1; ++r) {                              \
    const int64_t row = (o * rows + r) * inner + c0;               \
    for (int64_t c = first; c < width; ++c) { ACC_STMT; }          \
  }

/* A mapped reduction's columns: MAP (fabs or square) of each element. */
#define COL_MAPPED(MAP)                                                                  \
  if (in == REDUX_F64) COL_LOOP(two_sum_add(&hi[c], &lo[c], MAP(LOAD_F64(x, row + c)))) \
  else if (in == REDUX_F32) COL_LOOP(hi[c] += MAP(LOAD_F32(x, row + c)))               \
  else if (in == REDUX_F16) COL_LOOP(hi[c] += MAP(LOAD_F16(x, row + c)))               \
  else COL_LOOP(hi[c] += MAP(LOAD_BF16(x, row + c)))

#if REDUX_FMA_LOOP
/* Float32 (T float) or 16-bit (T uint16_t) columns summed in registers:
 * a vector of W columns an accumulator, NACC of them, over the rows in
 * order; each column's fp64 adds are COL_LOOP's (x, |x| or x * x rounded,
 * then added), so the same bits, without a load and a store of the
 * column's sum an element. */
#define COLS_IN_REGISTERS(NAME, ATTR, T, VD, W, NACC, CVT, MAP, LOAD, ADD, STORE)                \
  ATTR static void NAME(const void *block, int64_t pitch, int64_t nrows, int64_t passes, double *hi) { \
    const T *x = (const T *)block;                                                                \
    for (int64_t r0 = 0; r0 < nrows; r0 += COLS_ROW_BLOCK) {                                      \
      const int64_t r1 = r0 + COLS_ROW_BLOCK < nrows ? r0 + COLS_ROW_BLOCK : nrows;               \
      for (int64_t k = 0; k < passes; ++k) {                                                      \
        double *h = hi + k * W * NACC;                                                            \
        VD acc[NACC];                                                                             \
        for (int j = 0; j < NACC; ++j) acc[j] = LOAD(h + W * j);                                  \
        const T *p = x + r0 * pitch + k * W * NACC;                                               \
        for (int64_t r = r0; r < r1; ++r, p += pitch)                                             \
          for (int j = 0; j < NACC; ++j) acc[j] = ADD(acc[j], MAP(CVT(p + W * j)));              \
        for (int j = 0; j < NACC; ++j) STORE(h + W * j, acc[j]);                                  \
      }                                                                                           \
    }                                                                                             \
  }
enum { COLS8 = 16 * 8, COLS4 = 12 * 4 }; /* the columns of one pass: 16 zmm or 12 ymm accumulators */
/* rows a pass takes before the next: a block of 128 rows stays in L1/L2
 * for the next pass (8 and 32 were slower, no blocking slower for 256 wide) */
enum { COLS_ROW_BLOCK = 128 };
/* the eight-lane (16 zmm) and four-lane (12 ymm) forms of one load and map */
#define COLS8_IN_REGISTERS(NAME, TARGET, T, LOAD, MAP) \
  COLS_IN_REGISTERS(NAME, TARGET, T, __m512d, 8, 16, LOAD, MAP, _mm512_loadu_pd, _mm512_add_pd, _mm512_storeu_pd)
#define COLS4_IN_REGISTERS(NAME, TARGET, T, LOAD, MAP) \
  COLS_IN_REGISTERS(NAME, TARGET, T, __m256d, 4, 12, LOAD, MAP, _mm256_loadu_pd, _mm256_add_pd, _mm256_storeu_pd)
COLS8_IN_REGISTERS(cols8_values, REDUX_AVX512, float, REDUX_LANES8_F32, VALUE)
COLS8_IN_REGISTERS(cols8_abs, REDUX_AVX512, float, REDUX_LANES8_F32, ABS8)
COLS8_IN_REGISTERS(cols8_squares, REDUX_AVX512, float, REDUX_LANES8_F32, square8)
COLS4_IN_REGISTERS(cols4_values, REDUX_AVX2, float, REDUX_LANES4_F32, VALUE)
COLS4_IN_REGISTERS(cols4_abs, REDUX_AVX2, float, REDUX_LANES4_F32, ABS4)
COLS4_IN_REGISTERS(cols4_squares, REDUX_AVX2, float, REDUX_LANES4_F32, square4)
COLS8_IN_REGISTERS(cols8_values_f16, REDUX_AVX512_F16C, uint16_t, REDUX_LANES8_F16, VALUE)
COLS8_IN_REGISTERS(cols8_abs_f16, REDUX_AVX512_F16C, uint16_t, REDUX_LANES8_F16, ABS8)
COLS8_IN_REGISTERS(cols8_squares_f16, REDUX_AVX512_F16C, uint16_t, REDUX_LANES8_F16, square8)
COLS4_IN_REGISTERS(cols4_values_f16, REDUX_AVX2_F16C, uint16_t, REDUX_LANES4_F16, VALUE)
COLS4_IN_REGISTERS(cols4_abs_f16, REDUX_AVX2_F16C, uint16_t, REDUX_LANES4_F16, ABS4)
COLS4_IN_REGISTERS(cols4_squares_f16, REDUX_AVX2_F16C, uint16_t, REDUX_LANES4_F16, square4)
COLS8_IN_REGISTERS(cols8_values_bf16, REDUX_AVX512, uint16_t, REDUX_LANES8_BF16, VALUE)
COLS8_IN_REGISTERS(cols8_abs_bf16, REDUX_AVX512, uint16_t, REDUX_LANES8_BF16, ABS8)
COLS8_IN_REGISTERS(cols8_squares_bf16, REDUX_AVX512, uint16_t, REDUX_LANES8_BF16, square8)
COLS4_IN_REGISTERS(cols4_values_bf16, REDUX_AVX2, uint16_t, REDUX_LANES4_BF16, VALUE)
COLS4_IN_REGISTERS(cols4_abs_bf16, REDUX_AVX2, uint16_t, REDUX_LANES4_BF16, ABS4)
COLS4_IN_REGISTERS(cols4_squares_bf16, REDUX_AVX2, uint16_t, REDUX_LANES4_BF16, square4)

/* A dtype's register forms: [eight lanes, four lanes][values, |x|, x * x]. */
typedef void (*cols_pass)(const void *block, int64_t pitch, int64_t nrows, int64_t passes, double *hi);
static const cols_pass F32_COLS[2][3] = {{cols8_values, cols8_abs, cols8_squares},
                                         {cols4_values, cols4_abs, cols4_squares}};
static const cols_pass F16_COLS[2][3] = {{cols8_values_f16, cols8_abs_f16, cols8_squares_f16},
                                         {cols4_values_f16, cols4_abs_f16, cols4_squares_f16}};
static const cols_pass BF16_COLS[2][3] = {{cols8_values_bf16, cols8_abs_bf16, cols8_squares_bf16},
                                          {cols4_values_bf16, cols4_abs_bf16, cols4_squares_bf16}};

/* The leading columns of a block [width columns from p, rows nrows, pitch
 * apart] that the register forms `forms` sum into hi; returns how many (a
 * multiple of their pass, 0 on a CPU without AVX2). */
static int64_t cols_in_registers(const cols_pass forms[2][3], redux_reduction red, const void *p, int64_t pitch,
                                 int64_t nrows, int64_t width, double *hi) {
  const int eight = redux_cpu_eight_lanes();
  if (!eight && !__builtin_cpu_supports("avx2")) return 0;
  const int64_t pass = eight ? COLS8 : COLS4, passes = width / pass;
  if (passes == 0) return 0;
  const int map = red == REDUX_SUM_OF_ABS ? 1 : red == REDUX_SUM_OF_SQUARES ? 2 : 0;
  forms[eight ? 0 : 1][map](p, pitch, nrows, passes, hi);
  return passes * pass;
}
/* float16 columns [0, width) of a block [nrows rows, pitch apart], each
 * row's codes converted by F16C first: COL_LOOP's adds in its order on the
 * same values (f16_to_float's), so the same bits. */
REDUX_AVX2_F16C static void f16_cols_f16c(redux_reduction red, const uint16_t *h, int64_t pitch, int64_t nrows,
                                          int64_t width, double *hi) {
  float v[REDUX_CPU_COL_BLOCK];
  for (int64_t r = 0; r < nrows; ++r, h += pitch) {
    int64_t c = 0;
    for (; c + 8 <= width; c += 8) _mm256_storeu_ps(v + c, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + c))));
    for (; c < width; ++c) v[c] = f16_to_float(h[c]);
    if (red == REDUX_SUM_OF_ABS)
      for (c = 0; c < width; ++c) hi[c] += fabs((double)v[c]);
    else if (red == REDUX_SUM_OF_SQUARES)
      for (c = 0; c < width; ++c) hi[c] += (double)v[c] * (double)v[c];
    else
      for (c = 0; c < width; ++c) hi[c] += (double)v[c];
  }
}
/* The leading columns of a block of dtype `in` summed into hi by the
 * forms above; COL_LOOP adds the rest. float16 needs F16C (then every
 * column: the register passes, f16_cols_f16c the rest). */
static int64_t cols_first_in_registers(redux_reduction red, redux_dtype in, const void *p, int64_t pitch,
                                       int64_t nrows, int64_t width, double *hi) {
  if (in == REDUX_F32) return cols_in_registers(F32_COLS, red, p, pitch, nrows, width, hi);
  if (in == REDUX_BF16) return cols_in_registers(BF16_COLS, red, p, pitch, nrows, width, hi);
  if (in != REDUX_F16 || !redux_cpu_f16c()) return 0;
  const int64_t done = cols_in_registers(F16_COLS, red, p, pitch, nrows, width, hi);
  const uint16_t *h = (const uint16_t *)p;
  if (done < width) f16_cols_f16c(red, h + done, pitch, nrows, width - done, hi + done);
  return width;
}
#else
static int64_t cols_first_in_registers(redux_reduction red, redux_dtype in, const void *p, int64_t pitch,
                                       int64_t nrows, int64_t width, double *hi) {
  (void)red, (void)in, (void)p, (void)pitch, (void)nrows, (void)width, (void)hi;
  return 0;
}
#endif

REDUX_HOT static void cols_item(const void *x, int64_t rows, int64_t inner, int64_t o, int64_t c0, int64_t width,
                                int64_t r0, int64_t r1, redux_reduction red, redux_dtype in, redux_dtype out,
                                redux_cpu_acc *acc) {
  double hi[REDUX_CPU_COL_BLOCK];
  double lo[REDUX_CPU_COL_BLOCK];
  uint64_t iv[REDUX_CPU_COL_BLOCK];
  for (int64_t c = 0; c < width; ++c) {
    hi[c] = 0.0;
    lo[c] = 0.0;
    iv[c] = 0;
  }
  /* columns [0, first) summed in registers, the rest below */
  const int64_t first = cols_first_in_registers(
      red, in, (const char *)x + ((o * rows + r0) * inner + c0) * redux_dtype_size(in), inner, r1 - r0, width, hi);
  if (red == REDUX_SUM_OF_ABS) {
    COL_MAPPED(fabs)
  } else if (red == REDUX_SUM_OF_SQUARES) {
    COL_MAPPED(square)
  } else if (is_float_class(out)) {
    if (in == REDUX_F32) COL_LOOP(hi[c] += LOAD_F32(x, row + c))
    else if (in == REDUX_F16) COL_LOOP(hi[c] += LOAD_F16(x, row + c))
    else COL_LOOP(hi[c] += LOAD_BF16(x, row + c))
  } else if (out == REDUX_F64) {
    if (in == REDUX_F64) COL_LOOP(two_sum_add(&hi[c], &lo[c], LOAD_F64(x, row + c)))
    else COL_LOOP(hi[c] += LOAD_F32(x, row + c))
  } else {
    COL_LOOP(iv[c] += (uint64_t)((const int64_t *)x)[row + c])
  }
  for (int64_t c = 0; c < width; ++c) {
    acc[c].hi = hi[c];
    acc[c].lo = lo[c];
    acc[c].i = (int64_t)iv[c];
  }
}

/* Columns block b of a columns problem: its first column and width. */
static int64_t col_blocks(int64_t inner) { return (inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK; }
static int64_t col_width(int64_t inner, int64_t c0) {
  return inner - c0 < REDUX_CPU_COL_BLOCK ? inner - c0 : REDUX_CPU_COL_BLOCK;
}

static redux_status reduce_cols(redux_reduction r, const void *x, void *y, redux_shape s, int64_t item_begin,
                               int64_t item_end, redux_dtype in, redux_dtype out) {
  if (!redux_reduction_supported(r, in, out)) return REDUX_ERR_DTYPE;
  if (s.outer < 0 || s.n < 0 || s.inner < 0 || item_begin < 0 || item_end < item_begin)
    return REDUX_ERR_SHAPE;
  const int64_t blocks = col_blocks(s.inner);
  redux_cpu_acc acc[REDUX_CPU_COL_BLOCK];
  for (int64_t k = item_begin; k < item_end; ++k) {
    const int64_t o = k / blocks;
    const int64_t c0 = (k % blocks) * REDUX_CPU_COL_BLOCK;
    const int64_t width = col_width(s.inner, c0);
    cols_item(x, s.n, s.inner, o, c0, width, 0, s.n, r, in, out, acc);
    for (int64_t c = 0; c < width; ++c)
      store_output(out, acc[c].hi, acc[c].lo, acc[c].i, y, o * s.inner + c0 + c, mean_count(r, s.n));
  }
  return REDUX_OK;
}

redux_status redux_cpu_sum_cols(const void *x, void *y, redux_shape s, int64_t item_begin, int64_t item_end,
                                redux_dtype in, redux_dtype out) {
  return reduce_cols(REDUX_SUM_OF_VALUES, x, y, s, item_begin, item_end, in, out);
}

/* ---- the CPU reduction tree (redux_cpu_plan) ----
 * n is cut into units: REDUX_CPU_CHUNK elements of a row (rows, full) or
 * REDUX_CPU_COL_CHUNK_ROWS rows (columns); a problem whose n fits one unit
 * is one unit of n. One unit: one item per row (or per slice and block of
 * REDUX_CPU_COL_BLOCK columns) writes its outputs. Several: an item per
 * (row or slice, unit[, columns block]) stores partials [outer, units,
 * inner], and one finish item per output combines its partials in unit
 * order. */

static int64_t at_least_one(int64_t v) { return v > 0 ? v : 1; }

int64_t redux_cpu_sum_unit(redux_family family, redux_shape s) {
  const int64_t unit = family == REDUX_COLS ? REDUX_CPU_COL_CHUNK_ROWS : REDUX_CPU_CHUNK;
  return s.n > unit ? unit : s.n;
}

/* The plan of reduction r; TRIAL: whether its prefetch form may be a timed
 * trial (only for callers that report the call's time). */
static redux_cpu_plan plan_reduce(redux_reduction r, redux_family family, redux_shape s, redux_dtype in, int trial) {
  redux_cpu_plan p = {0, 0, 0, 1, 1, 1, 0, 0, (int)r};
  const int64_t unit = redux_cpu_sum_unit(family, s);
  p.units = unit > 0 ? (s.n + unit - 1) / unit : 1;
  const int64_t blocks = family == REDUX_COLS ? col_blocks(s.inner) : 1;
  const int64_t inner = family == REDUX_COLS ? s.inner : 1;
  const int64_t per_item = unit * (inner < REDUX_CPU_COL_BLOCK ? inner : REDUX_CPU_COL_BLOCK);
  p.items = s.outer * p.units * blocks;
  p.item_grain = at_least_one(REDUX_CPU_CHUNK / at_least_one(per_item));
  if (p.units > 1) {
    p.partials = s.outer * p.units * inner;
    p.finishes = s.outer * inner;
    p.finish_grain = family == REDUX_COLS ? 4096 : 64;
  }
  const int64_t bytes = s.outer * s.n * s.inner * redux_dtype_size(in);
  /* Trials only where the form is used: the float32 loop of full and rows sums. */
  if (r != REDUX_SUM_OF_VALUES && r != REDUX_MEAN_OF_VALUES) return p; /* the mapped loops: near prefetch */
  p.far_prefetch = trial && r == REDUX_SUM_OF_VALUES && in == REDUX_F32 && family != REDUX_COLS
                       ? prefetch_form_of(bytes, &p.prefetch_trial)
                       : prefetch_form(bytes);
  return p;
}

redux_cpu_plan redux_cpu_reduce_plan(redux_reduction r, redux_family family, redux_shape s, redux_dtype in) {
  return plan_reduce(r, family, s, in, 1);
}

redux_cpu_plan redux_cpu_sum_plan(redux_family family, redux_shape s, redux_dtype in) {
  return plan_reduce(REDUX_SUM_OF_VALUES, family, s, in, 1);
}

/* Partials of units [u0, u0 + k) for work items [begin, end) (item = (o,
 * unit[, columns block])) of x, a dense [outer, rows of those units, inner]
 * array; partials [outer, k, inner]. */
static redux_status unit_items(redux_reduction r, redux_family family, redux_shape s, const void *x, int64_t u0,
                               int64_t k, int64_t begin, int64_t end, redux_dtype in, redux_dtype out,
                               redux_cpu_acc *partials, int far) {
  const int64_t unit = redux_cpu_sum_unit(family, s);
  const int64_t rows = ((u0 + k) * unit < s.n ? (u0 + k) * unit : s.n) - u0 * unit;
  const char *base = (const char *)x;
  const int64_t es = redux_dtype_size(in);
  if (family != REDUX_COLS) {
    for (int64_t it = begin; it < end; ++it) {
      const int64_t row = it / k, u = it % k;
      const int64_t count = rows - u * unit < unit ? rows - u * unit : unit;
      const redux_status st =
          reduce_partial(r, base + (row * rows + u * unit) * es, count, in, out, &partials[it], far);
      if (st != REDUX_OK) return st;
    }
    return REDUX_OK;
  }
  const int64_t blocks = col_blocks(s.inner);
  for (int64_t it = begin; it < end; ++it) {
    const int64_t b = it % blocks, u = (it / blocks) % k, o = (it / blocks) / k;
    const int64_t c0 = b * REDUX_CPU_COL_BLOCK;
    const int64_t r1 = (u + 1) * unit < rows ? (u + 1) * unit : rows;
    cols_item(x, rows, s.inner, o, c0, col_width(s.inner, c0), u * unit, r1, r, in, out,
              &partials[(o * k + u) * s.inner + c0]);
  }
  return REDUX_OK;
}

redux_status redux_cpu_sum_items(const redux_cpu_plan *p, redux_family family, redux_shape s, const void *x,
                                 void *y, redux_cpu_acc *partials, int64_t begin, int64_t end, redux_dtype in,
                                 redux_dtype out) {
  const redux_reduction r = (redux_reduction)p->reduction;
  if (!redux_reduction_supported(r, in, out)) return REDUX_ERR_DTYPE;
  if (begin < 0 || end < begin || end > p->items) return REDUX_ERR_SHAPE;
  if (p->units == 1) {
    if (family == REDUX_COLS) return reduce_cols(r, x, y, s, begin, end, in, out);
    return reduce_rows(r, x, y, begin, end, s.n, in, out, p->far_prefetch);
  }
  return unit_items(r, family, s, x, 0, p->units, begin, end, in, out, partials, p->far_prefetch);
}

/* Output k (slice k / inner, column k % inner) from its `units` partials. */
static redux_status finish_outputs(redux_shape s, int64_t inner, int64_t units, const redux_cpu_acc *partials,
                                   void *y, int64_t begin, int64_t end, redux_dtype out, int64_t mean_n) {
  if (begin < 0 || end < begin || end > s.outer * inner) return REDUX_ERR_SHAPE;
  for (int64_t k = begin; k < end; ++k) {
    const int64_t o = k / inner, c = k % inner;
    combine_strided(&partials[o * units * inner + c], units, inner, out, y, k, mean_n);
  }
  return REDUX_OK;
}

redux_status redux_cpu_sum_finish(const redux_cpu_plan *p, redux_family family, redux_shape s,
                                  const redux_cpu_acc *partials, void *y, int64_t begin, int64_t end,
                                  redux_dtype out) {
  if (end > p->finishes) return REDUX_ERR_SHAPE;
  return finish_outputs(s, family == REDUX_COLS ? s.inner : 1, p->units, partials, y, begin, end, out,
                        mean_count((redux_reduction)p->reduction, s.n));
}

/* ---- sharded sums (redux.h) ---- */

redux_status redux_cpu_sum_unit_partials(redux_family family, redux_shape whole, int64_t outer_count,
                                         const void *x, int64_t unit_begin, int64_t unit_end, int64_t item_begin,
                                         int64_t item_end, redux_dtype in, redux_dtype out,
                                         redux_cpu_acc *partials) {
  if (!redux_dtype_pair_supported(in, out)) return REDUX_ERR_DTYPE;
  if (outer_count < 1 || outer_count > whole.outer) return REDUX_ERR_SHAPE;
  /* The CPU tree of a slice does not depend on outer: plan the held slices. */
  const redux_shape s = {outer_count, whole.n, whole.inner};
  const redux_cpu_plan p = plan_reduce(REDUX_SUM_OF_VALUES, family, s, in, 0);
  const int64_t k = unit_end - unit_begin;
  const int64_t blocks = family == REDUX_COLS ? col_blocks(s.inner) : 1;
  if (p.units < 2 || unit_begin < 0 || k < 1 || unit_end > p.units || item_begin < 0 || item_end < item_begin ||
      item_end > s.outer * k * blocks)
    return REDUX_ERR_SHAPE;
  return unit_items(REDUX_SUM_OF_VALUES, family, s, x, unit_begin, k, item_begin, item_end, in, out, partials,
                    p.far_prefetch);
}

redux_status redux_cpu_sum_from_partials(redux_family family, redux_shape whole, int64_t outer_count,
                                         const redux_cpu_acc *partials, void *y, int64_t out_begin,
                                         int64_t out_end, redux_dtype out) {
  if (outer_count < 1 || outer_count > whole.outer) return REDUX_ERR_SHAPE;
  const redux_shape s = {outer_count, whole.n, whole.inner};
  const int64_t unit = redux_cpu_sum_unit(family, s);
  const int64_t units = unit > 0 ? (s.n + unit - 1) / unit : 1;
  if (units < 2) return REDUX_ERR_SHAPE;
  return finish_outputs(s, family == REDUX_COLS ? s.inner : 1, units, partials, y, out_begin, out_end, out, 0);
}
