/* Launchers of the CUDA kernel families (internal to csrc/cuda). Each takes
 * the problem in the C API's terms and launches on `stream`. */
#ifndef REDUX_CUDA_FAMILIES_H
#define REDUX_CUDA_FAMILIES_H

#include <cuda_runtime.h>

#include "redux/redux.h"

namespace redux {

/* Each family: its launcher of reduction r (counters / counters_len: the
 * caller's zeroed stream counters or NULL, see redux_cuda_sum), its
 * workspace bytes and the ticket counters it needs (the same for every
 * reduction: they share the sum's accumulators and trees). */

/* sum_chunks.cu: chunked single pass, [outer, n]; polled or ticket finish. */
redux_status launch_chunks(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                           unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in,
                           redux_dtype out, int grid, cudaStream_t stream, redux_family family);
size_t chunks_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, redux_family family,
                              size_t counters_len);
size_t chunks_counters(redux_shape s, redux_dtype in, redux_family family);

/* sum_rows.cu: lane groups per row for short rows, else launch_chunks. */
redux_status launch_rows(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                         unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out,
                         int grid, cudaStream_t stream);
size_t rows_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, size_t counters_len);
size_t rows_counters(redux_shape s, redux_dtype in);

/* sum_cols.cu: [outer, n, inner] -> [outer, inner]. */
redux_status launch_cols(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                         unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out,
                         int grid, cudaStream_t stream);
size_t cols_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, size_t counters_len);
size_t cols_counters(redux_shape s, redux_dtype in);

/* Sharded sums (redux.h): a family's unit along n (n itself when the
 * problem is one unit), the partials of units [u0, u1) of `outer` slices
 * held as a dense [outer, rows of those units, inner] input, and their
 * finish from [outer, units, inner] partials; s is the whole problem,
 * which fixes the plan. */
int64_t chunks_unit(redux_shape s, redux_dtype in, redux_family family);
redux_status chunks_unit_partials(const void *x, void *partials, redux_shape s, int64_t outer, int64_t u0,
                                  int64_t u1, redux_dtype in, redux_dtype out, cudaStream_t stream,
                                  redux_family family);
redux_status chunks_from_partials(const void *partials, void *y, redux_shape s, int64_t outer, redux_dtype in,
                                  redux_dtype out, cudaStream_t stream, redux_family family);
bool rows_use_chunks(redux_shape s, redux_dtype in);
int64_t cols_unit(redux_shape s, redux_dtype in);
redux_status cols_unit_partials(const void *x, void *partials, redux_shape s, int64_t outer, int64_t u0,
                                int64_t u1, redux_dtype in, redux_dtype out, cudaStream_t stream);
redux_status cols_from_partials(const void *partials, void *y, redux_shape s, int64_t outer, redux_dtype in,
                                redux_dtype out, cudaStream_t stream);
}  // namespace redux

#endif
