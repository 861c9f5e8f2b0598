/* The read-bandwidth probe (include/redux/probe.h): a harness facility, not
 * a sum. It streams the input once with one of the load patterns that read
 * DRAM fastest in the bench/ timings (which one wins depends on the GPU and
 * the size), so the harness can show each sum against a pure read of the
 * same bytes. */
#include "common.cuh"
#include "grid.cuh"
#include "redux/probe.h"

namespace redux {
namespace {

/* max of |x| over a block, stored to sink[blockIdx.x]: keeps every load
 * alive with no long chain. */
__device__ __forceinline__ void block_max_to_sink(float m, float *sink) {
  __shared__ float warp_max[kBlock / 32];
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBlock / 32; ++w) m = fmaxf(m, warp_max[w]);
    sink[blockIdx.x] = m;
  }
}

__device__ __forceinline__ float abs_max4(float m, float4 v) {
  return fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
}

/* Not a sum: grid-stride, 4 16-byte loads in flight per thread, one block
 * per occupancy slot: the fastest pattern of the H200 at 1 GiB
 * (bench/reads.cu); ordinary loads (fastest at 1 GiB) or evict-first ones
 * (fastest up to 256 MiB). */
template <bool EVICT_FIRST>
__global__ void __launch_bounds__(kBlock) read_probe_kernel(const float *__restrict__ x, int64_t n, float *sink) {
  constexpr int U = 4;
  const int64_t stride = (int64_t)gridDim.x * kBlock;
  const int64_t n4 = n / 4;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  float m = 0.0f;
  int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = EVICT_FIRST ? __ldcs(&x4[i + u * stride]) : x4[i + u * stride];
#pragma unroll
    for (int u = 0; u < U; ++u) m = abs_max4(m, v[u]);
  }
  for (; i < n4; i += stride) m = abs_max4(m, EVICT_FIRST ? __ldcs(&x4[i]) : x4[i]);
  block_max_to_sink(m, sink);
}

/* Not a sum: a block per piece of kBlock 16-byte vectors (16 KB of fp32),
 * one load a thread, blocks launched per piece: the fastest read of 52.4M
 * fp32 measured on the H100 and the H200; the grid-stride probe reads those
 * bytes 3-4% slower on the H200 and 8% slower on the H100 (and is the
 * faster from 512 MiB up; docs/notes/full-sum.md). */
template <bool EVICT_FIRST>
__global__ void __launch_bounds__(kBlock) read_pieces_kernel(const float *__restrict__ x, int64_t n, float *sink) {
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
  float m = 0.0f;
  if (i < n / 4) m = abs_max4(m, EVICT_FIRST ? __ldcs(&x4[i]) : x4[i]);
  block_max_to_sink(m, sink);
}

}  // namespace
}  // namespace redux

using namespace redux;

/* Blocks (one sink float each) a probe of n floats launches. Both
 * grid-stride kernels have the same occupancy (same code but the hint). */
extern "C" int64_t redux_cuda_read_probe_sink_len(int64_t n, int pattern) {
  if (pattern == REDUX_PROBE_PIECES) return ceil_div(n / 4, (int64_t)kBlock);
  return device_fit((const void *)read_probe_kernel<false>, 0);
}

extern "C" redux_status redux_cuda_read_probe(const float *x, int64_t n, float *sink, int evict_first, int pattern,
                                              void *stream) {
  if ((uintptr_t)x % 16 != 0 || n < 4) return REDUX_ERR_SHAPE;
  if (pattern != REDUX_PROBE_GRID_STRIDE && pattern != REDUX_PROBE_PIECES) return REDUX_ERR_SHAPE;
  const int64_t g = redux_cuda_read_probe_sink_len(n, pattern);
  if (g > 0x7fffffff) return REDUX_ERR_SHAPE;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (pattern == REDUX_PROBE_PIECES) {
    if (evict_first) read_pieces_kernel<true><<<(unsigned)g, kBlock, 0, st>>>(x, n, sink);
    else read_pieces_kernel<false><<<(unsigned)g, kBlock, 0, st>>>(x, n, sink);
  } else {
    if (evict_first) read_probe_kernel<true><<<(unsigned)g, kBlock, 0, st>>>(x, n, sink);
    else read_probe_kernel<false><<<(unsigned)g, kBlock, 0, st>>>(x, n, sink);
  }
  return launch_status();
}
