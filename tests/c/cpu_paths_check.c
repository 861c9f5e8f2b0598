/* The float32 partial's loops give the same bits: built twice by
 * tests/test_reliability.py, as the extension is (the AVX2+FMA loop where
 * the CPU has it) and with -DREDUX_CPU_NO_CLONES (the baseline loop only),
 * and the two outputs compared line by line. Inputs: random mantissas at
 * mixed exponents with an offset (sums that round, never exact), lengths
 * around the 32-lane edges, unaligned starts; full partials and rows, and
 * the mapped reductions' full sums (|x|, x * x into float64), and column
 * sums (values, |x|, x * x, mean) of widths around the register passes'
 * 48 and 128 columns, and 16-bit columns; float16 and bfloat16 partials
 * (values, |x|, x * x) of random codes (float16's subnormals to 65504, a
 * quiet and a signalling NaN), which run the F16C and eight-lane forms
 * where the CPU has them. The first line names the loop that ran (redux_cpu_float32_loop; the test
 * skips when both builds ran the baseline), the second the input size from
 * which it prefetches far (redux_cpu_far_prefetch_bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redux/redux.h"
#include "xorshift.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t next_bits(void) { return xorshift64star(&rng_state); }

/* A float of random sign and mantissa at 2^-20 .. 2^20, plus an offset:
 * adding these rounds at nearly every step. */
static float sample(float offset) {
  const uint64_t b = next_bits();
  const float m = (float)((b >> 40) & 0xffffff) / 16777216.0f + 0.5f;
  const int e = (int)((b >> 8) % 41) - 20;
  float v = m;
  for (int k = 0; k < (e < 0 ? -e : e); ++k) v = e < 0 ? v * 0.5f : v * 2.0f;
  return ((b & 1) ? -v : v) + offset;
}

/* Plan p's items and finishes of `family` over x into y (partials: its
 * partials' room); any status but REDUX_OK ends the program. */
static void run_plan(const redux_cpu_plan *p, redux_family family, redux_shape s, const void *x, void *y,
                     redux_cpu_acc *partials, redux_dtype in, redux_dtype out) {
  if (redux_cpu_sum_items(p, family, s, x, y, partials, 0, p->items, in, out) != REDUX_OK ||
      (p->finishes > 0 && redux_cpu_sum_finish(p, family, s, partials, y, 0, p->finishes, out) != REDUX_OK)) {
    fprintf(stderr, "status error\n");
    exit(2);
  }
}

/* Reduction r of x[0, n) into float64 (the plan's items and finish), as bits. */
static uint64_t mapped_bits(redux_reduction r, const float *x, int64_t n) {
  const redux_shape s = {1, n, 1};
  const redux_cpu_plan p = redux_cpu_reduce_plan(r, REDUX_FULL, s, REDUX_F32);
  redux_cpu_acc partials[8];
  double y = 0.0;
  if (p.partials > 8) {
    fprintf(stderr, "status error\n");
    exit(2);
  }
  run_plan(&p, REDUX_FULL, s, x, &y, partials, REDUX_F32, REDUX_F64);
  uint64_t b;
  memcpy(&b, &y, sizeof b);
  return b;
}

/* Reduction r over the columns of x [outer, rows, inner] into `out`, as
 * an FNV-1a hash of the outputs' bytes. */
static uint64_t cols_hash(redux_reduction r, const void *x, redux_shape s, redux_dtype in, redux_dtype out) {
  const redux_cpu_plan p = redux_cpu_reduce_plan(r, REDUX_COLS, s, in);
  const int64_t count = s.outer * s.inner;
  const size_t width = (size_t)redux_dtype_size(out);
  unsigned char *y = malloc((size_t)count * width);
  redux_cpu_acc *partials = p.partials > 0 ? malloc((size_t)p.partials * sizeof *partials) : NULL;
  run_plan(&p, REDUX_COLS, s, x, y, partials, in, out);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < (size_t)count * width; ++i) h = (h ^ y[i]) * 0x100000001b3ull;
  free(partials);
  free(y);
  return h;
}

/* A random finite float16 code: any sign, exponent field 0-30 (subnormals
 * included), mantissa. */
static uint16_t f16_code(void) {
  const uint64_t b = next_bits();
  return (uint16_t)(((b >> 20) & 0x8000u) | ((((b >> 32) % 31) << 10)) | (b & 0x3ffu));
}

/* A random finite bfloat16 code: any sign, exponents 2^-40 .. 2^40. */
static uint16_t bf16_code(void) {
  const uint64_t b = next_bits();
  return (uint16_t)(((b >> 20) & 0x8000u) | ((87u + (uint32_t)((b >> 32) % 81)) << 7) | (b & 0x7fu));
}

static void print_cols(void) {
  const int64_t shapes[][3] = {{1, 5, 1},    {1, 33, 47},   {2, 100, 48},  {1, 7, 49},  {1, 300, 127},
                               {1, 64, 128}, {1, 1000, 129}, {3, 50, 256}, {1, 4100, 300}, {1, 3, 1000}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si)
    for (int start = 0; start < 4; ++start) {
      const redux_shape s = {shapes[si][0], shapes[si][1], shapes[si][2]};
      const int64_t count = s.outer * s.n * s.inner;
      float *buf = malloc((size_t)(count + start) * sizeof(float));
      for (int64_t i = 0; i < count + start; ++i) buf[i] = sample(0.3f);
      const float *x = buf + start;
      printf("cols %lldx%lldx%lld start=%d values=%016llx,%016llx abs=%016llx square=%016llx mean=%016llx\n",
             (long long)s.outer, (long long)s.n, (long long)s.inner, start,
             (unsigned long long)cols_hash(REDUX_SUM_OF_VALUES, x, s, REDUX_F32, REDUX_F32),
             (unsigned long long)cols_hash(REDUX_SUM_OF_VALUES, x, s, REDUX_F32, REDUX_F64),
             (unsigned long long)cols_hash(REDUX_SUM_OF_ABS, x, s, REDUX_F32, REDUX_F64),
             (unsigned long long)cols_hash(REDUX_SUM_OF_SQUARES, x, s, REDUX_F32, REDUX_F64),
             (unsigned long long)cols_hash(REDUX_MEAN_OF_VALUES, x, s, REDUX_F32, REDUX_F32));
      free(buf);
      for (int bf = 0; bf < 2; ++bf) {
        const redux_dtype t = bf ? REDUX_BF16 : REDUX_F16;
        uint16_t *codes = malloc((size_t)(count + start) * sizeof *codes);
        for (int64_t i = 0; i < count + start; ++i) codes[i] = bf ? bf16_code() : f16_code();
        const uint16_t *h = codes + start;
        printf("%s cols %lldx%lldx%lld start=%d values=%016llx,%016llx abs=%016llx square=%016llx\n",
               bf ? "bf16" : "f16", (long long)s.outer, (long long)s.n, (long long)s.inner, start,
               (unsigned long long)cols_hash(REDUX_SUM_OF_VALUES, h, s, t, t),
               (unsigned long long)cols_hash(REDUX_SUM_OF_VALUES, h, s, t, REDUX_F32),
               (unsigned long long)cols_hash(REDUX_SUM_OF_ABS, h, s, t, REDUX_F32),
               (unsigned long long)cols_hash(REDUX_SUM_OF_SQUARES, h, s, t, REDUX_F32));
        free(codes);
      }
    }
}

/* Reduction r of the 16-bit codes h[0, n) of dtype t (into float32): the
 * fp64 bits of the plan's partials, then the output's. */
static void print_16_mapped(redux_reduction r, const uint16_t *h, int64_t n, redux_dtype t) {
  const redux_shape s = {1, n, 1};
  const redux_cpu_plan p = redux_cpu_reduce_plan(r, REDUX_FULL, s, t);
  redux_cpu_acc partials[8] = {{0}};
  float y = 0.0f;
  if (p.partials > 8) {
    fprintf(stderr, "status error\n");
    exit(2);
  }
  run_plan(&p, REDUX_FULL, s, h, &y, partials, t, REDUX_F32);
  for (int64_t k = 0; k < p.partials; ++k) {
    uint64_t b;
    memcpy(&b, &partials[k].hi, sizeof b);
    printf(" %016llx", (unsigned long long)b);
  }
  uint32_t yb;
  memcpy(&yb, &y, sizeof yb);
  printf(" -> %08x", yb);
}

static void print_16_bit(void) {
  /* past REDUX_CPU_CHUNK, the plan's fp64 partials are printed too */
  const int64_t lengths[] = {1, 31, 32, 33, 64, 95, 97, 1000, 1025, 4096 + 17, 3 * REDUX_CPU_CHUNK + 33};
  for (int bf = 0; bf < 2; ++bf)
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; ++li)
      for (int nan = 0; nan < 3; ++nan)
        for (int start = 0; start < 2; ++start) {
          const redux_dtype t = bf ? REDUX_BF16 : REDUX_F16;
          const int64_t n = lengths[li];
          uint16_t *buf = malloc((size_t)(n + start) * sizeof *buf);
          for (int64_t i = 0; i < n + start; ++i) buf[i] = bf ? bf16_code() : f16_code();
          /* a quiet NaN; a signalling one (negative) */
          if (nan) buf[start + n / 2] = bf ? (nan == 1 ? 0x7fc1u : 0xff81u) : (nan == 1 ? 0x7e01u : 0xfc01u);
          redux_cpu_acc acc;
          if (redux_cpu_sum_partial(buf + start, n, t, REDUX_F32, &acc) != REDUX_OK) {
            fprintf(stderr, "status error\n");
            exit(2);
          }
          uint64_t db;
          memcpy(&db, &acc.hi, sizeof db);
          printf("%s n=%lld nan=%d start=%d partial=%016llx abs", bf ? "bf16" : "f16", (long long)n, nan, start,
                 (unsigned long long)db);
          print_16_mapped(REDUX_SUM_OF_ABS, buf + start, n, t);
          printf(" square");
          print_16_mapped(REDUX_SUM_OF_SQUARES, buf + start, n, t);
          printf("\n");
          free(buf);
        }
}

int main(void) {
  printf("loop %s\n", redux_cpu_float32_loop());
  printf("far prefetch from %lld bytes\n", (long long)redux_cpu_far_prefetch_bytes());
  const int64_t lengths[] = {1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 1000, 1023, 1024, 1025, 4096 + 17,
                             REDUX_CPU_CHUNK - 1, REDUX_CPU_CHUNK, REDUX_CPU_CHUNK + 31};
  const float offsets[] = {0.0f, 0.3f, -1000.0f};
  for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; ++li)
    for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; ++oi)
      for (int start = 0; start < 4; ++start) {
        const int64_t n = lengths[li];
        float *buf = malloc((size_t)(n + start) * sizeof(float));
        for (int64_t i = 0; i < n + start; ++i) buf[i] = sample(offsets[oi]);
        redux_cpu_acc acc;
        float rows[3];
        const int64_t row_n = n / 3;
        if (redux_cpu_sum_partial(buf + start, n, REDUX_F32, REDUX_F32, &acc) != REDUX_OK ||
            redux_cpu_sum_rows(buf + start, rows, 0, 3, row_n, REDUX_F32, REDUX_F32) != REDUX_OK) {
          fprintf(stderr, "status error\n");
          return 2;
        }
        uint64_t db;
        uint32_t rb[3];
        memcpy(&db, &acc.hi, sizeof db);
        memcpy(rb, rows, sizeof rb);
        printf("n=%lld offset=%g start=%d partial=%016llx rows=%08x,%08x,%08x abs=%016llx square=%016llx\n",
               (long long)n, offsets[oi], start, (unsigned long long)db, rb[0], rb[1], rb[2],
               (unsigned long long)mapped_bits(REDUX_SUM_OF_ABS, buf + start, n),
               (unsigned long long)mapped_bits(REDUX_SUM_OF_SQUARES, buf + start, n));
        free(buf);
      }
  print_cols();
  print_16_bit();
  return 0;
}
