/* The C API of the CUDA kernels (redux.h): picks the family launcher. */
#include "common.cuh"
#include "dispatch.cuh"
#include "families.h"

using namespace redux;

static bool shape_ok(redux_shape s) { return s.outer > 0 && s.n > 0 && s.inner > 0; }

extern "C" size_t redux_cuda_sum_workspace_bytes_beside(redux_family family, redux_shape shape, redux_dtype in,
                                                        redux_dtype out, size_t counters_len) {
  if (!shape_ok(shape)) return 0;
  switch (family) {
    case REDUX_FULL: return chunks_workspace_bytes(shape, in, out, REDUX_FULL, counters_len);
    case REDUX_ROWS: return rows_workspace_bytes(shape, in, out, counters_len);
    case REDUX_COLS: return cols_workspace_bytes(shape, in, out, counters_len);
  }
  return 0;
}

extern "C" size_t redux_cuda_sum_workspace_bytes(redux_family family, redux_shape shape,
                                                 redux_dtype in, redux_dtype out) {
  return redux_cuda_sum_workspace_bytes_beside(family, shape, in, out, 0);
}

extern "C" size_t redux_cuda_sum_counters(redux_family family, redux_shape shape, redux_dtype in,
                                          redux_dtype out) {
  if (!shape_ok(shape) || !redux_dtype_pair_supported(in, out)) return 0;
  switch (family) {
    case REDUX_FULL: return chunks_counters(shape, in, REDUX_FULL);
    case REDUX_ROWS: return rows_counters(shape, in);
    case REDUX_COLS: return cols_counters(shape, in);
  }
  return 0;
}

extern "C" redux_status redux_cuda_reduce(redux_reduction r, redux_family family, const void *x, void *y,
                                          void *workspace, size_t workspace_bytes, unsigned int *counters,
                                          size_t counters_len, redux_shape shape, redux_dtype in, redux_dtype out,
                                          int grid, void *stream) {
  if (!redux_reduction_supported(r, in, out)) return REDUX_ERR_DTYPE;
  if (!shape_ok(shape) || grid < 0) return REDUX_ERR_SHAPE;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (family) {
    case REDUX_FULL:
      if (shape.outer != 1 || shape.inner != 1) return REDUX_ERR_SHAPE;
      return launch_chunks(r, x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st,
                           REDUX_FULL);
    case REDUX_ROWS:
      if (shape.inner != 1) return REDUX_ERR_SHAPE;
      return launch_rows(r, x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st);
    case REDUX_COLS:
      return launch_cols(r, x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st);
  }
  return REDUX_ERR_SHAPE;
}

extern "C" redux_status redux_cuda_sum(redux_family family, const void *x, void *y, void *workspace,
                                       size_t workspace_bytes, unsigned int *counters, size_t counters_len,
                                       redux_shape shape, redux_dtype in, redux_dtype out, int grid,
                                       void *stream) {
  return redux_cuda_reduce(REDUX_SUM_OF_VALUES, family, x, y, workspace, workspace_bytes, counters, counters_len,
                           shape, in, out, grid, stream);
}

/* ---- sharded sums ---- */

extern "C" int64_t redux_cuda_sum_unit(redux_family family, redux_shape shape, redux_dtype in) {
  if (!shape_ok(shape)) return shape.n;
  switch (family) {
    case REDUX_FULL: return chunks_unit(shape, in, REDUX_FULL);
    case REDUX_ROWS: return rows_use_chunks(shape, in) ? chunks_unit(shape, in, REDUX_ROWS) : shape.n;
    case REDUX_COLS: return cols_unit(shape, in);
  }
  return shape.n;
}

extern "C" size_t redux_cuda_sum_partial_bytes(redux_dtype in, redux_dtype out) {
  return redux_dtype_pair_supported(in, out) ? acc_bytes(in, out) : 0;
}

/* The problem's units, or 0 when it has no partials API (one unit, or a bad shape). */
static int64_t units_of(redux_family family, redux_shape shape, redux_dtype in) {
  if (!shape_ok(shape) || (family != REDUX_COLS && shape.inner != 1)) return 0;
  if (family == REDUX_FULL && shape.outer != 1) return 0;
  const int64_t unit = redux_cuda_sum_unit(family, shape, in);
  const int64_t units = (shape.n + unit - 1) / unit;
  return units > 1 ? units : 0;
}

extern "C" redux_status redux_cuda_sum_unit_partials(redux_family family, const void *x, void *partials,
                                                     redux_shape shape, int64_t outer_count, int64_t unit_begin,
                                                     int64_t unit_end, redux_dtype in, redux_dtype out,
                                                     void *stream) {
  if (!redux_dtype_pair_supported(in, out)) return REDUX_ERR_DTYPE;
  const int64_t units = units_of(family, shape, in);
  if (units == 0 || unit_begin < 0 || unit_end <= unit_begin || unit_end > units || outer_count < 1 ||
      outer_count > shape.outer)
    return REDUX_ERR_SHAPE;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (family == REDUX_COLS)
    return cols_unit_partials(x, partials, shape, outer_count, unit_begin, unit_end, in, out, st);
  return chunks_unit_partials(x, partials, shape, outer_count, unit_begin, unit_end, in, out, st, family);
}

extern "C" redux_status redux_cuda_sum_from_partials(redux_family family, const void *partials, void *y,
                                                     redux_shape shape, int64_t outer_count, redux_dtype in,
                                                     redux_dtype out, void *stream) {
  if (!redux_dtype_pair_supported(in, out)) return REDUX_ERR_DTYPE;
  if (units_of(family, shape, in) == 0 || outer_count < 1 || outer_count > shape.outer) return REDUX_ERR_SHAPE;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (family == REDUX_COLS) return cols_from_partials(partials, y, shape, outer_count, in, out, st);
  return chunks_from_partials(partials, y, shape, outer_count, in, out, st, family);
}
