/* Launchers of the CUDA kernel families (internal to csrc/cuda). Each takes
 * the problem in the C API's terms and launches on `stream`. */
#ifndef REDUX_CUDA_FAMILIES_H
#define REDUX_CUDA_FAMILIES_H

#include <cuda_runtime.h>

#include "redux/redux.h"

namespace redux {

/* sum_full.cu: chunked single pass with last-block finish, [outer, n]. */
redux_status launch_chunks(const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s,
                           redux_dtype in, redux_dtype out, int grid, cudaStream_t stream);
size_t chunks_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out);

/* sum_rows.cu: lane groups per row for short rows, else launch_chunks. */
redux_status launch_rows(const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s,
                         redux_dtype in, redux_dtype out, int grid, cudaStream_t stream);
size_t rows_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out);

/* sum_cols.cu: [outer, n, inner] -> [outer, inner]. */
redux_status launch_cols(const void *x, void *y, void *ws, size_t ws_bytes, redux_shape s,
                         redux_dtype in, redux_dtype out, int grid, cudaStream_t stream);
size_t cols_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out);

}  // namespace redux

#endif
