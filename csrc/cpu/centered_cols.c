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
  const int64_t per = (chunks + REDUX_CENTERED_RUNS - 1) / REDUX_CENTERED_RUNS;
  for (int64_t k = col_begin; k < col_end; ++k) {
    const double *p = partials + (k / s.inner) * chunks * s.inner + k % s.inner;
    double total = 0.0;
    for (int64_t g = 0; g < REDUX_CENTERED_RUNS; ++g) {
      double run = 0.0;
      for (int64_t c = g * per; c < (g + 1) * per && c < chunks; ++c) run += p[c * s.inner];
      total += run;
    }
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
