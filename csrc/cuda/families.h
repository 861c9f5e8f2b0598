/* Launchers of the CUDA kernel families (internal to csrc/cuda). Each takes
 * the problem in the C API's terms and launches on `stream`. */
#ifndef REDUX_CUDA_FAMILIES_H
#define REDUX_CUDA_FAMILIES_H

#include <cuda_runtime.h>

#include "redux/redux.h"

namespace redux {

/* Each family: its launcher (counters / counters_len: the caller's zeroed
 * stream counters or NULL, see redux_cuda_sum), its workspace bytes and the
 * ticket counters it needs. */

/* sum_full.cu: chunked single pass, [outer, n]; polled or ticket finish. */
redux_status launch_chunks(const void *x, void *y, void *ws, size_t ws_bytes, unsigned int *counters,
                           size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out, int grid,
                           cudaStream_t stream, redux_family family);
size_t chunks_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, redux_family family);
size_t chunks_counters(redux_shape s, redux_dtype in, redux_family family);

/* sum_rows.cu: lane groups per row for short rows, else launch_chunks. */
redux_status launch_rows(const void *x, void *y, void *ws, size_t ws_bytes, unsigned int *counters,
                         size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out, int grid,
                         cudaStream_t stream);
size_t rows_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out);
size_t rows_counters(redux_shape s, redux_dtype in);

/* sum_cols.cu: [outer, n, inner] -> [outer, inner]. */
redux_status launch_cols(const void *x, void *y, void *ws, size_t ws_bytes, unsigned int *counters,
                         size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out, int grid,
                         cudaStream_t stream);
size_t cols_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out);
size_t cols_counters(redux_shape s, redux_dtype in);
}  // namespace redux

#endif
