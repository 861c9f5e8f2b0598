/* Rows [outer, n] -> [outer], the reduced dim innermost and contiguous.
 *
 *   sum_rows_kernel  short rows (n * elem_size <= kRowsGroupMaxBytes): a
 *                    group of `width` lanes (a power of two <= 32, chosen
 *                    from n) owns a row; lane l takes vectors l, l + width,
 *                    ... of the row, adds them in order, and the group
 *                    reduces with shuffles. kBlock / width rows per block,
 *                    blocks grid-stride over row groups. No workspace.
 *                    Evict-first loads up to kStreamMaxBytes of input (common.cuh).
 *   long rows        launch_chunks (sum_chunks.cu): several blocks per row,
 *                    last-block finish.
 * The lane mapping and trees depend on (n, dtype) only; see sum_chunks.cu.
 */
#include "dispatch.cuh"
#include "families.h"
#include "grid.cuh"

namespace redux {

/* Vectors per lane the lane count aims at: part of the reduction tree
 * (the width, so which lane adds which vector). */
constexpr int kRowsVecsPerLane = 4;
/* Loads in flight per lane (unroll of lane_sum_range): changes no bits.
 * On the H200, 4 and 8 were level at (65536, 2048) fp32 and 4 was 1.3x
 * faster at (2097152, 64), where most rows are shorter than 8 loads. */
constexpr int kRowsUnroll = 4;
constexpr int64_t kRowsGroupMaxBytes = 8192;

/* Lanes per row: enough that each lane has about kRowsVecsPerLane vectors. */
static int rows_width(int64_t n, redux_dtype in) {
  const int64_t per_lane = (16 / redux_dtype_size(in)) * kRowsVecsPerLane;
  int w = 1;
  while (w < 32 && (int64_t)w * per_lane < n) w *= 2;
  return w;
}

template <typename P, bool ALIGNED, bool STREAM>
__global__ void __launch_bounds__(kBlock)
sum_rows_kernel(const typename P::in_t *__restrict__ x, typename P::out_t *__restrict__ y, int64_t outer, int64_t n,
                int width) {
  using In = typename P::in_t;
  using acc_t = typename P::acc_t;
  constexpr int VEC = vec_of<In>::value;
  const int lane = threadIdx.x % width;
  const int group = threadIdx.x / width;
  const int64_t groups = kBlock / width;

  /* The loop bound is uniform across the block: every lane reaches the
   * shuffles of every iteration. */
  for (int64_t row0 = (int64_t)blockIdx.x * groups; row0 < outer; row0 += (int64_t)gridDim.x * groups) {
    const int64_t row = row0 + group;
    acc_t acc = P::zero();
    if (row < outer) acc = lane_sum_range<P, VEC, kRowsUnroll, ALIGNED, STREAM>(x + row * n, 0, n, lane, width, acc);
    acc = warp_reduce_sum<P>(acc, width);
    if (row < outer && lane == 0) y[row] = P::finish(acc, n);
  }
}

struct launch_rows_fn {
  const void *x;
  void *y;
  redux_shape s;
  int width;
  int grid;
  cudaStream_t stream;

  template <typename P>
  redux_status operator()() const {
    using In = typename P::in_t;
    using Out = typename P::out_t;
    const bool aligned = ((uintptr_t)x % 16 == 0) && ((s.n * (int64_t)sizeof(In)) % 16 == 0);
    const bool evict_first = stream_hint(s.outer * s.n * (int64_t)sizeof(In));
    auto kernel = aligned ? (evict_first ? sum_rows_kernel<P, true, true> : sum_rows_kernel<P, true, false>)
                          : (evict_first ? sum_rows_kernel<P, false, true> : sum_rows_kernel<P, false, false>);
    const int64_t items = ceil_div(s.outer, kBlock / width);
    const int g = grid_for(kernel, items, grid);
    kernel<<<g, kBlock, 0, stream>>>(static_cast<const In *>(x), static_cast<Out *>(y), s.outer, s.n,
                                     width);
    return launch_status();
  }
};

bool rows_use_chunks(redux_shape s, redux_dtype in) {
  return s.n * redux_dtype_size(in) > kRowsGroupMaxBytes;
}

redux_status launch_rows(redux_reduction r, const void *x, void *y, void *ws, size_t ws_bytes,
                         unsigned int *counters, size_t counters_len, redux_shape s, redux_dtype in, redux_dtype out,
                         int grid, cudaStream_t stream) {
  if (rows_use_chunks(s, in))
    return launch_chunks(r, x, y, ws, ws_bytes, counters, counters_len, s, in, out, grid, stream, REDUX_ROWS);
  return dispatch_policy(r, in, out, launch_rows_fn{x, y, s, rows_width(s.n, in), grid, stream});
}

size_t rows_workspace_bytes(redux_shape s, redux_dtype in, redux_dtype out, size_t counters_len) {
  return rows_use_chunks(s, in) ? chunks_workspace_bytes(s, in, out, REDUX_ROWS, counters_len) : 0;
}

size_t rows_counters(redux_shape s, redux_dtype in) {
  return rows_use_chunks(s, in) ? chunks_counters(s, in, REDUX_ROWS) : 0;
}

}  // namespace redux
