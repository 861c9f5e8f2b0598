/* Column sums about a center on the CPU (redux.h, redux_cpu_centered_cols_*):
 * var, std and logsumexp of [outer, n, inner] along n, C11.
 *
 * A chunk is one call's item: its rows are read in order, each as fp64 into
 * a row buffer, and each row's terms added to the chunk's column sums (the
 * partials themselves), so every column adds its rows in row order, as
 * redux.h's tree says; the finish adds a column's chunk sums by runs. The
 * same operations as the CUDA kernels (csrc/cuda/centered_cols.cu), so the
 * same sums. Compiled with -ffp-contract=off: (x - c)^2 is a rounded product
 * and a rounded sum, as on the GPU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "rows.h"

/* acc[j] += (d[j] - c[j])^2 */
static REDUX_HOT void add_squares(double *acc, const double *d, const double *c, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const double v = d[j] - c[j];
    acc[j] += v * v;
  }
}

/* acc[j] += exp(d[j] - c[j]); d is overwritten */
static void add_exps(double *acc, double *d, const double *c, int64_t n) {
  for (int64_t j = 0; j < n; ++j) d[j] -= c[j];
  redux_exp_values(d, n, 0.0);
  for (int64_t j = 0; j < n; ++j) acc[j] += d[j];
}

/* The arguments' status, as the CUDA entry gives it: a bad op or shape, then a bad dtype. */
static redux_status centered_args(redux_centered op, redux_shape s, redux_dtype t) {
  if ((op != REDUX_CENTERED_SQUARES && op != REDUX_CENTERED_EXPS) || s.outer < 1 || s.n < 1 || s.inner < 1)
    return REDUX_ERR_SHAPE;
  return t == REDUX_F32 || t == REDUX_F16 || t == REDUX_BF16 ? REDUX_OK : REDUX_ERR_DTYPE;
}

/* The center a column's terms take: the exponentials' shifts by a finite one only. */
static double centered_shift(redux_centered op, double c) {
  return op == REDUX_CENTERED_EXPS && !isfinite(c) ? 0.0 : c;
}

/* A column's sum from its chunk sums p[0], p[stride], ...: REDUX_CENTERED_RUNS runs in order (redux.h). */
static double runs_total(const double *p, int64_t chunks, int64_t stride) {
  const int64_t per = (chunks + REDUX_CENTERED_RUNS - 1) / REDUX_CENTERED_RUNS;
  double total = 0.0;
  for (int64_t g = 0; g < REDUX_CENTERED_RUNS; ++g) {
    double run = 0.0;
    for (int64_t c = g * per; c < (g + 1) * per && c < chunks; ++c) run += p[c * stride];
    total += run;
  }
  return total;
}

redux_status redux_cpu_centered_cols_chunks(redux_centered op, const void *x, const double *center,
                                            double *partials, redux_shape s, redux_dtype t, int64_t item_begin,
                                            int64_t item_end) {
  const redux_status args = centered_args(op, s, t);
  if (args != REDUX_OK) return args;
  const int64_t chunk = redux_centered_cols_chunk(s, t), chunks = redux_centered_cols_chunks(s, t);
  if (item_begin < 0 || item_end < item_begin || item_end > s.outer * chunks) return REDUX_ERR_SHAPE;
  double *d = malloc((size_t)s.inner * sizeof *d), *shift = malloc((size_t)s.inner * sizeof *shift);
  if (d == NULL || shift == NULL) {
    free(d);
    free(shift);
    return REDUX_ERR_SHAPE;
  }
  for (int64_t item = item_begin; item < item_end; ++item) {
    const int64_t o = item / chunks, r0 = (item % chunks) * chunk;
    const int64_t r1 = r0 + chunk < s.n ? r0 + chunk : s.n;
    double *acc = partials + item * s.inner;
    for (int64_t j = 0; j < s.inner; ++j) {
      acc[j] = 0.0;
      shift[j] = centered_shift(op, center[o * s.inner + j]);
    }
    for (int64_t r = r0; r < r1; ++r) {
      load_values(x, o * s.n + r, s.inner, t, d);
      if (op == REDUX_CENTERED_SQUARES) add_squares(acc, d, shift, s.inner);
      else add_exps(acc, d, shift, s.inner);
    }
  }
  free(d);
  free(shift);
  return REDUX_OK;
}

redux_status redux_cpu_centered_cols_finish(redux_centered op, const double *partials, const double *center, void *y,
                                            redux_shape s, redux_dtype t, double divisor, int root,
                                            int64_t col_begin, int64_t col_end) {
  const redux_status args = centered_args(op, s, t);
  if (args != REDUX_OK) return args;
  if (col_begin < 0 || col_end < col_begin || col_end > s.outer * s.inner) return REDUX_ERR_SHAPE;
  const int64_t chunks = redux_centered_cols_chunks(s, t);
  for (int64_t k = col_begin; k < col_end; ++k) {
    const double total = runs_total(partials + (k / s.inner) * chunks * s.inner + k % s.inner, chunks, s.inner);
    double v;
    if (op == REDUX_CENTERED_SQUARES) {
      v = total / divisor;
      if (root) v = sqrt(v);
    } else {
      v = log(total) + centered_shift(op, center[k]);
    }
    store_value(y, k, t, v);
  }
  return REDUX_OK;
}

/* ---- Column softmaxes: a thread takes blocks of 16 to EXP_COLS_BLOCK
 * adjacent columns of one slice (a 64-byte line of float32 a row or more)
 * and reads them in pieces of at most EXP_COLS_PIECE rows, each row's
 * values as fp64 into a buffer; the sums follow the chunk tree above. Where
 * a block's columns fit in EXP_COLS_KEPT doubles, the buffer keeps what the
 * outputs need (a softmax's exponentials, a log_softmax's x - c'), so x is
 * read once and an exp computed once; else the outputs read x again. */
#define EXP_COLS_BLOCK 64
#define EXP_COLS_PIECE 256
#define EXP_COLS_KEPT (1 << 18)
#define EXP_COLS_AHEAD 16 /* rows a strided read or write is prefetched ahead */

/* Rows [r0, r1) of columns [j0, j0 + w) of slice o as fp64 x - shift, row after row into d. */
#define LOAD_SHIFTED(T, CONVERT)                                                 \
  for (int64_t r = r0; r < r1; ++r, d += w) {                                  \
    const T *p = (const T *)x + (o * s.n + r) * s.inner + j0;                  \
    if (r + EXP_COLS_AHEAD < r1)                                                \
      for (int64_t j = 0; j < w; j += 64 / (int64_t)sizeof(T))                 \
        __builtin_prefetch(p + EXP_COLS_AHEAD * s.inner + j);                   \
    for (int64_t j = 0; j < w; ++j) d[j] = (double)CONVERT(p[j]) - shift[j];   \
  }
#define AS_IS(v) (v)
static REDUX_HOT void load_shifted(const void *x, redux_shape s, redux_dtype t, int64_t o, int64_t j0, int64_t w,
                                   int64_t r0, int64_t r1, const double *shift, double *d) {
  switch (t) {
    case REDUX_F32: LOAD_SHIFTED(float, AS_IS); break;
    case REDUX_F16: LOAD_SHIFTED(uint16_t, f16_to_float); break;
    default: LOAD_SHIFTED(uint16_t, bf16_to_float); break;
  }
}

/* Rows [r0, r1) of the outputs from d: d * by (softmax) or d - by, rounded once to t. */
#define STORE_OUTPUTS(T, CONVERT)                                                          \
  for (int64_t r = r0; r < r1; ++r, d += w) {                                            \
    T *q = (T *)y + (o * s.n + r) * s.inner + j0;                                        \
    if (r + EXP_COLS_AHEAD < r1)                                                         \
      for (int64_t j = 0; j < w; j += 64 / (int64_t)sizeof(T))                          \
        __builtin_prefetch(q + EXP_COLS_AHEAD * s.inner + j, 1);                         \
    if (scale)                                                                           \
      for (int64_t j = 0; j < w; ++j) q[j] = CONVERT(d[j] * by[j]);                      \
    else                                                                                 \
      for (int64_t j = 0; j < w; ++j) q[j] = CONVERT(d[j] - by[j]);                      \
  }
static REDUX_HOT void store_outputs(void *y, redux_shape s, redux_dtype t, int64_t o, int64_t j0, int64_t w,
                                    int64_t r0, int64_t r1, int scale, const double *by, const double *d) {
  switch (t) {
    case REDUX_F32: STORE_OUTPUTS(float, TO_F32); break;
    case REDUX_F16: STORE_OUTPUTS(uint16_t, TO_F16); break;
    default: STORE_OUTPUTS(uint16_t, TO_BF16); break;
  }
}

/* One block's columns, its geometry and scratch: kept (n * w doubles, or
 * NULL where they do not fit), piece (EXP_COLS_PIECE * w), sums (chunks * w). */
typedef struct exp_cols_block {
  int64_t o, j0, w;
  double *kept, *piece, *sums;
  double shift[EXP_COLS_BLOCK], by[EXP_COLS_BLOCK];
} exp_cols_block;

/* The end of the piece that starts at row r: EXP_COLS_PIECE rows, not past its chunk or n. */
static int64_t piece_end(int64_t r, int64_t chunk, int64_t n) {
  const int64_t chunk_end = (r / chunk + 1) * chunk, end = r + EXP_COLS_PIECE;
  const int64_t e = end < chunk_end ? end : chunk_end;
  return e < n ? e : n;
}

/* The block's exponentials' column sums by the chunk tree, then by = 1 / S or log(S) (NaN where c is not finite). */
static void exp_cols_sums(redux_exp_op op, const void *x, const double *c, exp_cols_block *b, redux_shape s,
                          redux_dtype t) {
  const int64_t chunk = redux_centered_cols_chunk(s, t), chunks = redux_centered_cols_chunks(s, t), w = b->w;
  double acc[EXP_COLS_BLOCK];
  for (int64_t r0 = 0, r1; r0 < s.n; r0 = r1) {
    r1 = piece_end(r0, chunk, s.n);
    const int64_t len = (r1 - r0) * w;
    double *d = b->kept ? b->kept + r0 * w : b->piece, *e = d;
    load_shifted(x, s, t, b->o, b->j0, w, r0, r1, b->shift, d);
    if (b->kept && op == REDUX_EXP_LOG_SOFTMAX) { /* keep x - c', exponentiate a copy */
      e = b->piece;
      memcpy(e, d, (size_t)len * sizeof *e);
    }
    redux_exp_values(e, len, 0.0);
    if (r0 % chunk == 0)
      for (int64_t j = 0; j < w; ++j) acc[j] = 0.0;
    for (int64_t r = 0; r < r1 - r0; ++r)
      for (int64_t j = 0; j < w; ++j) acc[j] += e[r * w + j];
    if (r1 % chunk == 0 || r1 == s.n)
      for (int64_t j = 0; j < w; ++j) b->sums[(r0 / chunk) * w + j] = acc[j];
  }
  for (int64_t j = 0; j < w; ++j) {
    const double total = runs_total(b->sums + j, chunks, w);
    b->by[j] = !isfinite(c[j]) ? NAN : op == REDUX_EXP_SOFTMAX ? 1.0 / total : log(total);
  }
}

/* The block's outputs: exp(x - c') * by or (x - c') - by, rounded once to t. */
static void exp_cols_outputs(redux_exp_op op, const void *x, void *y, exp_cols_block *b, redux_shape s,
                             redux_dtype t) {
  const int64_t w = b->w;
  if (b->kept) {
    store_outputs(y, s, t, b->o, b->j0, w, 0, s.n, op == REDUX_EXP_SOFTMAX, b->by, b->kept);
    return;
  }
  for (int64_t r0 = 0, r1; r0 < s.n; r0 = r1) {
    r1 = piece_end(r0, s.n, s.n);
    load_shifted(x, s, t, b->o, b->j0, w, r0, r1, b->shift, b->piece);
    if (op == REDUX_EXP_SOFTMAX) redux_exp_values(b->piece, (r1 - r0) * w, 0.0);
    store_outputs(y, s, t, b->o, b->j0, w, r0, r1, op == REDUX_EXP_SOFTMAX, b->by, b->piece);
  }
}

/* The block width for columns of n rows: as many as EXP_COLS_KEPT keeps, from 16 to EXP_COLS_BLOCK. */
static int64_t block_width(int64_t n) {
  const int64_t w = EXP_COLS_KEPT / n;
  return w < 16 ? 16 : w > EXP_COLS_BLOCK ? EXP_COLS_BLOCK : w;
}

redux_status redux_cpu_exp_cols(redux_exp_op op, const void *x, const double *center, void *y, redux_shape s,
                                redux_dtype t, int64_t col_begin, int64_t col_end) {
  const redux_status args = centered_args(REDUX_CENTERED_EXPS, s, t);
  if (args != REDUX_OK) return args;
  if ((op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX) || col_begin < 0 || col_end < col_begin ||
      col_end > s.outer * s.inner)
    return REDUX_ERR_SHAPE;
  const int64_t width = block_width(s.n);
  exp_cols_block b;
  b.kept = s.n * width <= EXP_COLS_KEPT ? malloc((size_t)(s.n * width) * sizeof(double)) : NULL;
  b.piece = malloc((size_t)EXP_COLS_PIECE * width * sizeof(double));
  b.sums = malloc((size_t)redux_centered_cols_chunks(s, t) * width * sizeof(double));
  const int failed = b.piece == NULL || b.sums == NULL || (s.n * width <= EXP_COLS_KEPT && b.kept == NULL);
  for (int64_t k = col_begin; k < col_end && !failed; k += b.w) {
    b.o = k / s.inner;
    b.j0 = k % s.inner;
    b.w = s.inner - b.j0 < col_end - k ? s.inner - b.j0 : col_end - k;
    if (b.w > width) b.w = width;
    const double *c = center + b.o * s.inner + b.j0;
    for (int64_t j = 0; j < b.w; ++j) b.shift[j] = centered_shift(REDUX_CENTERED_EXPS, c[j]);
    exp_cols_sums(op, x, c, &b, s, t);
    exp_cols_outputs(op, x, y, &b, s, t);
  }
  free(b.kept);
  free(b.piece);
  free(b.sums);
  return failed ? REDUX_ERR_SHAPE : REDUX_OK;
}
