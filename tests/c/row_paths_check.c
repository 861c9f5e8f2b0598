/* The CPU row kernels' forms give the same bits: built twice by
 * tests/test_reliability.py, as the extension is (the AVX2 clones, the
 * exp's AVX2 + FMA forms where the CPU has FMA, and the eight-lane forms
 * where it has AVX-512F) and with
 * -DREDUX_CPU_NO_CLONES (baseline code, four lanes), the first run twice
 * (REDUX_CPU_EIGHT_LANES unset and "0"), and the outputs compared line by
 * line. Rows of float32, float16 and bfloat16 with an offset, lengths
 * around the 16-lane edges and long ones; softmax, log_softmax, logsumexp
 * and their backward, the softmaxes from given parts (checked against the
 * one-kernel bytes), the moments (centered or not, fp64 or rounded
 * results); float32 rows of signed zeros, infinities and NaNs of several
 * payloads (which zero or NaN a row's maximum keeps). The first line says
 * how many lanes the forms use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redux/redux.h"
#include "xorshift.h"
#include "rows.h"

static uint64_t rng_state = 0x13198a2e03707344ull;
static uint64_t next_bits(void) { return xorshift64star(&rng_state); }

/* A value of random sign and mantissa in +-8, plus 1.5. */
static double sample(void) {
  const uint64_t b = next_bits();
  return ((double)(b >> 11) / 9007199254740992.0 - 0.5) * 16.0 + 1.5;
}

static void fill(void *x, int64_t count, redux_dtype t) {
  for (int64_t i = 0; i < count; ++i) {
    const double v = sample();
    if (t == REDUX_F32) ((float *)x)[i] = (float)v;
    else if (t == REDUX_F16) ((uint16_t *)x)[i] = double_to_f16(v);
    else ((uint16_t *)x)[i] = double_to_bf16(v);
  }
}

static void print_bits(const char *what, int64_t n, const void *y, int64_t bytes) {
  printf("%s n=%lld:", what, (long long)n);
  const unsigned char *p = (const unsigned char *)y;
  uint64_t h = 1469598103934665603ull; /* FNV-1a of the output bytes */
  for (int64_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  printf(" %016llx\n", (unsigned long long)h);
}

/* Pattern p of edge values: 0 a mix of +-0, NaNs of several payloads and
 * signs, +-inf and finite values; 1 signed zeros; 2 -inf and finite values;
 * 3 -inf alone. */
static void fill_edges(float *x, int64_t count, int p) {
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t b = next_bits();
    const int k = (int)(b % 8);
    uint32_t u = b & 1 ? 0x80000000u : 0u; /* the sign */
    if (p == 3 || (p == 2 && k < 4)) u = 0xff800000u;
    else if (p == 1 || k == 0) u |= 0u;
    else if (k == 1) u |= 0x7fc00000u | (uint32_t)(b >> 42); /* a quiet NaN */
    else if (k == 2) u |= 0x7f800000u | 1u | (uint32_t)(b >> 43); /* a signaling NaN */
    else if (k == 3) u |= 0x7f800000u;
    else {
      const float v = (float)sample();
      memcpy(&u, &v, sizeof u);
    }
    memcpy(x + i, &u, sizeof u);
  }
}

int main(void) {
#ifdef REDUX_EIGHT_LANES
  printf("lanes %d\n", redux_cpu_eight_lanes() ? 8 : 4);
#else
  printf("lanes 4\n");
#endif
  const int64_t lengths[] = {1, 3, 15, 16, 17, 31, 33, 100, 1000, 4099, 65536};
  const redux_dtype types[] = {REDUX_F32, REDUX_F16, REDUX_BF16};
  const int64_t rows = 3;
  for (size_t k = 0; k < sizeof lengths / sizeof *lengths; ++k) {
    const int64_t n = lengths[k];
    for (int ti = 0; ti < 3; ++ti) {
      const redux_dtype t = types[ti];
      const int64_t es = t == REDUX_F32 ? 4 : 2;
      void *x = malloc((size_t)(rows * n * es)), *g = malloc((size_t)(rows * n * es));
      void *y = malloc((size_t)(rows * n * es)), *dx = malloc((size_t)(rows * n * es));
      double m2[3], mean[3];
      fill(x, rows * n, t);
      fill(g, rows * n, t);
      char what[64];
      for (int op = REDUX_EXP_SOFTMAX; op <= REDUX_EXP_LOGSUMEXP; ++op) {
        if (redux_cpu_exp_rows((redux_exp_op)op, x, y, 0, rows, n, t) != REDUX_OK) return 1;
        snprintf(what, sizeof what, "exp op %d dtype %d", op, (int)t);
        print_bits(what, n, y, op == REDUX_EXP_LOGSUMEXP ? rows * es : rows * n * es);
        if (op == REDUX_EXP_LOGSUMEXP) continue;
        if (redux_cpu_exp_rows_backward((redux_exp_op)op, g, y, dx, 0, rows, n, t) != REDUX_OK) return 1;
        snprintf(what, sizeof what, "exp backward op %d dtype %d", op, (int)t);
        print_bits(what, n, dx, rows * n * es);
      }
      /* softmax and log_softmax from each row's parts (a long row's path,
       * one piece a row): the one-kernel forms' bytes */
      double parts[2 * 3];
      if (redux_cpu_exp_rows(REDUX_EXP_PARTS, x, parts, 0, rows, n, t) != REDUX_OK) return 1;
      for (int op = REDUX_EXP_SOFTMAX; op <= REDUX_EXP_LOG_SOFTMAX; ++op) {
        if (redux_cpu_exp_rows((redux_exp_op)op, x, y, 0, rows, n, t) != REDUX_OK) return 1;
        if (redux_cpu_exp_rows_apply((redux_exp_op)op, x, parts, dx, 0, rows, n, t) != REDUX_OK) return 1;
        if (memcmp(y, dx, (size_t)(rows * n * es)) != 0) {
          fprintf(stderr, "apply op %d dtype %d n=%lld: not the one-kernel bytes\n", op, (int)t, (long long)n);
          return 2;
        }
        snprintf(what, sizeof what, "exp apply op %d dtype %d", op, (int)t);
        print_bits(what, n, dx, rows * n * es);
      }
      for (int centered = 0; centered < 2; ++centered) {
        if (redux_cpu_moment_rows(x, m2, centered ? mean : NULL, 0, rows, n, t, REDUX_F64, (double)n, centered,
                                  0) != REDUX_OK)
          return 1;
        snprintf(what, sizeof what, "moments centered %d dtype %d", centered, (int)t);
        print_bits(what, n, m2, sizeof m2);
        if (centered) print_bits("means", n, mean, sizeof mean);
      }
      free(x), free(g), free(y), free(dx);
    }
  }
  const int64_t edge_lengths[] = {1, 5, 16, 17, 33, 100};
  for (size_t k = 0; k < sizeof edge_lengths / sizeof *edge_lengths; ++k) {
    const int64_t n = edge_lengths[k];
    float x[3 * 100], y[3 * 100];
    for (int p = 0; p < 4; ++p) {
      fill_edges(x, rows * n, p);
      for (int op = REDUX_EXP_SOFTMAX; op <= REDUX_EXP_PARTS; ++op) {
        double parts[2 * 3];
        void *out = op == REDUX_EXP_PARTS ? (void *)parts : (void *)y;
        if (redux_cpu_exp_rows((redux_exp_op)op, x, out, 0, rows, n, REDUX_F32) != REDUX_OK) return 1;
        /* NaN payloads are not compared: the baseline's fma (the C library's) may give another NaN */
        if (op == REDUX_EXP_PARTS)
          for (int i = 0; i < 2 * 3; ++i) parts[i] = parts[i] != parts[i] ? (double)NAN : parts[i];
        else
          for (int i = 0; i < 3 * 100; ++i) y[i] = y[i] != y[i] ? NAN : y[i];
        char what[64];
        snprintf(what, sizeof what, "edges %d exp op %d", p, op);
        print_bits(what, n, out,
                   op == REDUX_EXP_PARTS ? (int64_t)sizeof parts : op == REDUX_EXP_LOGSUMEXP ? rows * 4 : rows * n * 4);
      }
    }
  }
  return 0;
}
