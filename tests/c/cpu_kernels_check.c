/* Stand-alone check of the C11 CPU kernels (csrc/cpu), built and run by
 * tests/test_reliability.py with -fsanitize=address,undefined: every dtype
 * pair, lengths around the lane and chunk edges, unaligned starts, rows and
 * columns, against a plain fp64 (or int64) reference. Exits non-zero and
 * prints the case on the first mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redux/redux.h"
#include "xorshift.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double next_uniform(void) { /* in [0, 1) */
  return (double)(xorshift64star(&rng_state) >> 11) * (1.0 / 9007199254740992.0);
}

static int elem_size(redux_dtype t) { return (t == REDUX_F64 || t == REDUX_I64) ? 8 : (t == REDUX_F32 ? 4 : 2); }

/* Values exactly representable in every float dtype: multiples of 1/4 in
 * [-64, 64), so the fp64 reference is exact and any error is the kernel's. */
static double sample(void) { return floor(next_uniform() * 512.0) / 4.0 - 64.0; }

static void store(void *p, redux_dtype t, int64_t i, double v) {
  switch (t) {
    case REDUX_F32: ((float *)p)[i] = (float)v; break;
    case REDUX_F64: ((double *)p)[i] = v; break;
    case REDUX_F16: { /* v = k/4, |v| < 64: exact in fp16; build the bits */
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      uint16_t h = (uint16_t)((u >> 16) & 0x8000u);
      uint32_t a = u & 0x7fffffffu;
      if (a) h |= (uint16_t)(((a >> 23) - 112u) << 10 | ((a >> 13) & 0x3ffu));
      ((uint16_t *)p)[i] = h;
      break;
    }
    case REDUX_BF16: {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
      break;
    }
    case REDUX_I64: ((int64_t *)p)[i] = (int64_t)(v * 4.0); break;
  }
}

static double load_out(const void *p, redux_dtype t, int64_t i) {
  switch (t) {
    case REDUX_F32: return ((const float *)p)[i];
    case REDUX_F64: return ((const double *)p)[i];
    case REDUX_F16: {
      uint16_t h = ((const uint16_t *)p)[i];
      uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
      double v = e ? ldexp(1.0 + m / 1024.0, (int)e - 15) : ldexp((double)m, -24);
      return (h & 0x8000) ? -v : v;
    }
    case REDUX_BF16: {
      uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case REDUX_I64: return (double)((const int64_t *)p)[i];
  }
  return NAN;
}

static double in_value(redux_dtype in, double v) { return in == REDUX_I64 ? (double)(int64_t)(v * 4.0) : v; }

static int failures = 0;
/* FNV-1a over every output byte: builds that must agree bit for bit (with
 * and without the AVX2 clones) print the same hash. */
static uint64_t out_hash = 1469598103934665603ull;
static void hash_bytes(const void *p, size_t n) {
  for (size_t i = 0; i < n; ++i) out_hash = (out_hash ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
}

static void expect(const char *what, redux_dtype in, redux_dtype out, int64_t a, int64_t b, double got,
                   double ref, double mag) {
  /* tolerance: output rounding (half ulp of the output type) */
  double rel = out == REDUX_F16 ? 1.0 / 1024 : out == REDUX_BF16 ? 1.0 / 128 : out == REDUX_F32 ? 1.2e-7 : 1e-15;
  if (in == REDUX_I64 ? got != ref : fabs(got - ref) > rel * fabs(ref) + 1e-12 * mag) {
    fprintf(stderr, "MISMATCH %s in=%d out=%d (%lld, %lld): got %.17g ref %.17g\n", what, in, out, (long long)a,
            (long long)b, got, ref);
    ++failures;
  }
}

int main(void) {
  const redux_dtype pairs[][2] = {{REDUX_F32, REDUX_F32}, {REDUX_F64, REDUX_F64},   {REDUX_F16, REDUX_F16},
                                  {REDUX_BF16, REDUX_BF16}, {REDUX_I64, REDUX_I64}, {REDUX_F16, REDUX_F32},
                                  {REDUX_BF16, REDUX_F32},  {REDUX_F32, REDUX_F64}};
  const int64_t lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 255, 1000, REDUX_CPU_CHUNK - 1, REDUX_CPU_CHUNK + 3};
  int cases = 0;
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; ++p) {
    const redux_dtype in = pairs[p][0], out = pairs[p][1];
    const int es = elem_size(in);
    /* contiguous partial + combine, at every start offset 0..7 */
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; ++li) {
      const int64_t n = lengths[li];
      for (int off = 0; off < 8; ++off) {
        char *buf = malloc((size_t)(n + off) * es + 1);
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
          double v = sample();
          store(buf + off * es, in, i, v);
          ref += in_value(in, v);
          mag += fabs(in_value(in, v));
        }
        redux_cpu_acc acc;
        char y[8];
        if (redux_cpu_sum_partial(buf + off * es, n, in, out, &acc) != REDUX_OK ||
            redux_cpu_sum_combine(&acc, 1, out, y, 0) != REDUX_OK) {
          fprintf(stderr, "status error\n");
          return 2;
        }
        expect("partial", in, out, n, off, load_out(y, out, 0), ref, mag);
        hash_bytes(y, elem_size(out));
        free(buf);
        ++cases;
      }
    }
    /* rows and columns of a [3, n, inner] tensor */
    const int64_t inners[] = {1, 2, 3, 255, 256, 257};
    for (size_t ii = 0; ii < sizeof inners / sizeof inners[0]; ++ii) {
      const int64_t outer = 3, n = 37, inner = inners[ii];
      const int64_t total = outer * n * inner;
      char *x = malloc((size_t)total * es);
      double *vals = malloc((size_t)total * sizeof(double));
      for (int64_t i = 0; i < total; ++i) {
        vals[i] = sample();
        store(x, in, i, vals[i]);
        vals[i] = in_value(in, vals[i]);
      }
      char *y = malloc((size_t)(outer * inner) * 8);
      redux_shape s = {outer, n, inner};
      const int64_t blocks = (inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK;
      if (redux_cpu_sum_cols(x, y, s, 0, outer * blocks, in, out) != REDUX_OK) return 2;
      hash_bytes(y, (size_t)(outer * inner) * elem_size(out));
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c < inner; ++c) {
          double ref = 0, mag = 0;
          for (int64_t r = 0; r < n; ++r) {
            ref += vals[(o * n + r) * inner + c];
            mag += fabs(vals[(o * n + r) * inner + c]);
          }
          expect("cols", in, out, o, c, load_out(y, out, o * inner + c), ref, mag);
        }
      /* the same buffer as [outer * n, inner] rows */
      char *yr = malloc((size_t)(outer * n) * 8);
      if (redux_cpu_sum_rows(x, yr, 0, outer * n, inner, in, out) != REDUX_OK) return 2;
      hash_bytes(yr, (size_t)(outer * n) * elem_size(out));
      for (int64_t r = 0; r < outer * n; ++r) {
        double ref = 0, mag = 0;
        for (int64_t c = 0; c < inner; ++c) {
          ref += vals[r * inner + c];
          mag += fabs(vals[r * inner + c]);
        }
        expect("rows", in, out, r, inner, load_out(yr, out, r), ref, mag);
      }
      free(x);
      free(vals);
      free(y);
      free(yr);
      cases += 2;
    }
  }
  /* bad arguments are refused, never crash */
  redux_cpu_acc acc;
  if (redux_cpu_sum_partial(NULL, -1, REDUX_F32, REDUX_F32, &acc) != REDUX_ERR_SHAPE) ++failures;
  if (redux_cpu_sum_partial(NULL, 0, REDUX_F64, REDUX_F16, &acc) != REDUX_ERR_DTYPE) ++failures;
  /* a mapped reduction refuses the pairs it has no kernel for, and adds
   * |x| and x * x through the sum's tree */
  {
    const redux_shape s = {1, 1000, 1};
    float xf[1000];
    double y = 0.0;
    for (int i = 0; i < 1000; ++i) xf[i] = (float)((i % 7) - 3) * 0.5f;
    const redux_cpu_plan bad = redux_cpu_reduce_plan(REDUX_SUM_OF_SQUARES, REDUX_FULL, s, REDUX_I64);
    if (redux_cpu_sum_items(&bad, REDUX_FULL, s, xf, &y, NULL, 0, bad.items, REDUX_I64, REDUX_I64) != REDUX_ERR_DTYPE)
      ++failures;
    const redux_cpu_plan narrow = redux_cpu_reduce_plan(REDUX_SUM_OF_ABS, REDUX_FULL, s, REDUX_F32);
    if (redux_cpu_sum_items(&narrow, REDUX_FULL, s, xf, &y, NULL, 0, 1, REDUX_F32, REDUX_F32) != REDUX_ERR_DTYPE)
      ++failures;
    double want_abs = 0.0, want_sq = 0.0;
    for (int i = 0; i < 1000; ++i) {
      want_abs += fabs((double)xf[i]);
      want_sq += (double)xf[i] * xf[i];
    }
    const redux_reduction rs[2] = {REDUX_SUM_OF_ABS, REDUX_SUM_OF_SQUARES};
    const double want[2] = {want_abs, want_sq}; /* exact: quarters, few of them */
    for (int k = 0; k < 2; ++k) {
      const redux_cpu_plan p = redux_cpu_reduce_plan(rs[k], REDUX_FULL, s, REDUX_F32);
      if (p.reduction != (int)rs[k] ||
          redux_cpu_sum_items(&p, REDUX_FULL, s, xf, &y, NULL, 0, p.items, REDUX_F32, REDUX_F64) != REDUX_OK ||
          y != want[k])
        ++failures;
      ++cases;
    }
  }
  printf("%d cases, %d failures, output hash %016llx\n", cases, failures, (unsigned long long)out_hash);
  return failures ? 1 : 0;
}
