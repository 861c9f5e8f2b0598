/* The C API of the CUDA kernels (redux.h): picks the family launcher. */
#include "common.cuh"
#include "families.h"

using namespace redux;

static bool shape_ok(redux_shape s) { return s.outer > 0 && s.n > 0 && s.inner > 0; }

extern "C" size_t redux_cuda_sum_workspace_bytes(redux_family family, redux_shape shape,
                                                 redux_dtype in, redux_dtype out) {
  if (!shape_ok(shape)) return 0;
  switch (family) {
    case REDUX_FULL: return chunks_workspace_bytes(shape, in, out, REDUX_FULL);
    case REDUX_ROWS: return rows_workspace_bytes(shape, in, out);
    case REDUX_COLS: return cols_workspace_bytes(shape, in, out);
  }
  return 0;
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

extern "C" redux_status redux_cuda_sum(redux_family family, const void *x, void *y, void *workspace,
                                       size_t workspace_bytes, unsigned int *counters, size_t counters_len,
                                       redux_shape shape, redux_dtype in, redux_dtype out, int grid,
                                       void *stream) {
  if (!redux_dtype_pair_supported(in, out)) return REDUX_ERR_DTYPE;
  if (!shape_ok(shape) || grid < 0) return REDUX_ERR_SHAPE;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (family) {
    case REDUX_FULL:
      if (shape.outer != 1 || shape.inner != 1) return REDUX_ERR_SHAPE;
      return launch_chunks(x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st,
                           REDUX_FULL);
    case REDUX_ROWS:
      if (shape.inner != 1) return REDUX_ERR_SHAPE;
      return launch_rows(x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st);
    case REDUX_COLS:
      return launch_cols(x, y, workspace, workspace_bytes, counters, counters_len, shape, in, out, grid, st);
  }
  return REDUX_ERR_SHAPE;
}
