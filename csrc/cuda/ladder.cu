/* The reduction ladder: each rung one idea more than the last. 1-D float32
 * in, one float32 out, fp64 accumulation throughout (so every rung passes
 * the competition's check; float atomics over 5e7 offset values do not).
 * Numbers, names and ideas: the variants table (include/redux/variants.h).
 * Validated by tests/test_ladder.py, scored by `python -m leaderboard`.
 *
 *   rung 1 atomic_naive   one fp64 atomicAdd per element into one cell.
 *                         Serialized at one L2 address: the slowest rung.
 *   rung 2 smem_tree      one element per thread into shared memory, tree
 *                         halving with __syncthreads, one atomic per block.
 *   rung 3 warp_shuffle   one element per thread, warp shuffles, per-warp
 *                         results through shared memory, one atomic per block.
 *   rung 4 grid_stride    a grid sized to the device; each thread sums many
 *                         elements in registers first, then rung 3's reduce.
 *   rung 5 two_pass       rung 4 into a FIXED grid of partials (bits do not
 *                         depend on the GPU), then a one-block second kernel.
 *   rung 6 vec4           rung 4 with 16-byte (float4) loads.
 *   rung 7 last_block     rung 6, per-block partials, and the last block to
 *                         finish (integer ticket) combines them: one launch.
 *   rung 8 cub            cub::DeviceReduce::Sum, float accumulation: what a
 *                         user would pick instead of writing kernels.
 *   finish_kernel         fp64 cell -> float32 output (rungs 1-4, 6).
 * Rungs 1-4, 6 and 7 are not bitwise reproducible (atomic order, or a grid
 * from the device); rung 5 is. redux::sum (rung 9) is the product
 * (sum_chunks.cu, sum_rows.cu, sum_cols.cu).
 */
#include <cub/device/device_reduce.cuh>

#include "common.cuh"
#include "finish.cuh"
#include "grid.cuh"

namespace redux {
namespace {

using P = sum_policy<float, float>; /* fp64 accumulator */
constexpr int kTwoPassGrid = 1024;  /* fixed: rung 4 is deterministic */

__global__ void zero_cell_kernel(double *cell) { *cell = 0.0; }

__global__ void finish_kernel(const double *cell, float *y) { *y = (float)*cell; }

__global__ void atomic_naive_kernel(const float *__restrict__ x, int64_t n, double *cell) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(cell, (double)x[i]);
}

__global__ void __launch_bounds__(kBlock) smem_tree_kernel(const float *__restrict__ x, int64_t n, double *cell) {
  __shared__ double s[kBlock];
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  s[threadIdx.x] = i < n ? (double)x[i] : 0.0;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(cell, s[0]);
}

__global__ void __launch_bounds__(kBlock) warp_shuffle_kernel(const float *__restrict__ x, int64_t n, double *cell) {
  __shared__ double scratch[kBlock / 32];
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  double v = i < n ? (double)x[i] : 0.0;
  v = block_reduce_sum<P, kBlock>(v, scratch);
  if (threadIdx.x == 0) atomicAdd(cell, v);
}

/* Per-thread grid-stride sum, scalar or float4 loads. */
template <bool VEC4>
__device__ __forceinline__ double thread_grid_sum(const float *__restrict__ x, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * kBlock;
  const int64_t t = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  double acc = 0.0;
  if (VEC4) {
    const int64_t n4 = n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    for (int64_t i = t; i < n4; i += stride) {
      const float4 v = __ldcs(x4 + i);
      acc += (double)v.x;
      acc += (double)v.y;
      acc += (double)v.z;
      acc += (double)v.w;
    }
    for (int64_t i = n4 * 4 + t; i < n; i += stride) acc += (double)x[i];
  } else {
    for (int64_t i = t; i < n; i += stride) acc += (double)x[i];
  }
  return acc;
}

template <bool VEC4>
__global__ void __launch_bounds__(kBlock) grid_stride_kernel(const float *__restrict__ x, int64_t n, double *cell) {
  __shared__ double scratch[kBlock / 32];
  double v = block_reduce_sum<P, kBlock>(thread_grid_sum<VEC4>(x, n), scratch);
  if (threadIdx.x == 0) atomicAdd(cell, v);
}

__global__ void __launch_bounds__(kBlock) partials_kernel(const float *__restrict__ x, int64_t n, double *partials) {
  __shared__ double scratch[kBlock / 32];
  double v = block_reduce_sum<P, kBlock>(thread_grid_sum<false>(x, n), scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

__global__ void __launch_bounds__(kBlock) combine_partials_kernel(const double *partials, int count, float *y) {
  __shared__ double scratch[kBlock / 32];
  double v = 0.0;
  for (int k = threadIdx.x; k < count; k += kBlock) v += partials[k];
  v = block_reduce_sum<P, kBlock>(v, scratch);
  if (threadIdx.x == 0) *y = (float)v;
}

__global__ void __launch_bounds__(kBlock)
last_block_kernel(const float *__restrict__ x, int64_t n, double *partials, unsigned int *counter, float *y) {
  __shared__ double scratch[kBlock / 32];
  double v = block_reduce_sum<P, kBlock>(thread_grid_sum<true>(x, n), scratch);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
  if (!last_block_ticket(counter, 0, gridDim.x)) return;
  double r = 0.0;
  for (unsigned int k = threadIdx.x; k < gridDim.x; k += kBlock) r += load_partial(&partials[k]);
  r = block_reduce_sum<P, kBlock>(r, scratch);
  if (threadIdx.x == 0) *y = (float)r;
}

int device_fill_grid(const void *kernel) { return (int)device_fit(kernel, 0); }

size_t cub_temp_bytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, (const float *)nullptr, (float *)nullptr, n);
  return bytes;
}

}  // namespace
}  // namespace redux

using namespace redux;

extern "C" size_t redux_cuda_ladder_workspace_bytes(redux_rung rung, int64_t n) {
  switch (rung) {
    case REDUX_RUNG_TWO_PASS: return kTwoPassGrid * sizeof(double);
    case REDUX_RUNG_LAST_BLOCK: return 256 + (size_t)device_fill_grid((const void *)last_block_kernel) * sizeof(double);
    case REDUX_RUNG_CUB: return cub_temp_bytes(n);
    default: return sizeof(double); /* the fp64 cell */
  }
}

extern "C" redux_status redux_cuda_ladder_sum(redux_rung rung, const float *x, float *y, int64_t n, void *ws,
                                              size_t ws_bytes, int grid, void *stream) {
  if (n <= 0 || grid < 0 || (int)rung < 1 || rung >= REDUX_RUNG_END) return REDUX_ERR_SHAPE;
  if (ws_bytes < redux_cuda_ladder_workspace_bytes(rung, n)) return REDUX_ERR_SHAPE;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  double *cell = static_cast<double *>(ws);
  const int64_t one_per_thread = ceil_div(n, kBlock);
  const bool aligned = (uintptr_t)x % 16 == 0;
  switch (rung) {
    case REDUX_RUNG_ATOMIC_NAIVE:
    case REDUX_RUNG_SMEM_TREE:
    case REDUX_RUNG_WARP_SHUFFLE:
      zero_cell_kernel<<<1, 1, 0, st>>>(cell);
      if (one_per_thread > INT32_MAX) return REDUX_ERR_SHAPE;
      if (rung == REDUX_RUNG_ATOMIC_NAIVE) atomic_naive_kernel<<<(unsigned)one_per_thread, kBlock, 0, st>>>(x, n, cell);
      else if (rung == REDUX_RUNG_SMEM_TREE) smem_tree_kernel<<<(unsigned)one_per_thread, kBlock, 0, st>>>(x, n, cell);
      else warp_shuffle_kernel<<<(unsigned)one_per_thread, kBlock, 0, st>>>(x, n, cell);
      finish_kernel<<<1, 1, 0, st>>>(cell, y);
      break;
    case REDUX_RUNG_GRID_STRIDE:
    case REDUX_RUNG_VEC4: {
      const bool vec = rung == REDUX_RUNG_VEC4 && aligned;
      const void *k = vec ? (const void *)grid_stride_kernel<true> : (const void *)grid_stride_kernel<false>;
      const int g = grid > 0 ? grid : device_fill_grid(k);
      zero_cell_kernel<<<1, 1, 0, st>>>(cell);
      if (vec) grid_stride_kernel<true><<<g, kBlock, 0, st>>>(x, n, cell);
      else grid_stride_kernel<false><<<g, kBlock, 0, st>>>(x, n, cell);
      finish_kernel<<<1, 1, 0, st>>>(cell, y);
      break;
    }
    case REDUX_RUNG_TWO_PASS:
      partials_kernel<<<kTwoPassGrid, kBlock, 0, st>>>(x, n, cell);
      combine_partials_kernel<<<1, kBlock, 0, st>>>(cell, kTwoPassGrid, y);
      break;
    case REDUX_RUNG_LAST_BLOCK: {
      if (!aligned) return REDUX_ERR_SHAPE; /* the shim passes aligned tensors */
      const int fill = device_fill_grid((const void *)last_block_kernel);
      const int g = grid > 0 && grid < fill ? grid : fill; /* partials sized for `fill` */
      unsigned int *counter = static_cast<unsigned int *>(ws);
      double *partials = reinterpret_cast<double *>(static_cast<char *>(ws) + 256);
      if (cudaMemsetAsync(counter, 0, sizeof(unsigned int), st) != cudaSuccess) return REDUX_ERR_CUDA;
      last_block_kernel<<<g, kBlock, 0, st>>>(x, n, partials, counter, y);
      break;
    }
    case REDUX_RUNG_CUB: {
      size_t bytes = ws_bytes;
      if (cub::DeviceReduce::Sum(ws, bytes, x, y, n, st) != cudaSuccess) return REDUX_ERR_CUDA;
      break;
    }
    default: return REDUX_ERR_SHAPE;
  }
  return launch_status();
}
