/* The read-bandwidth probe (include/redux/probe.h): a harness facility, not
 * a sum. It streams the input once with the load pattern that read DRAM
 * fastest in the bench/ timings, so the harness can show each sum against
 * a pure read of the same bytes. */
#include "common.cuh"
#include "grid.cuh"
#include "redux/probe.h"

namespace redux {
namespace {

/* Not a sum: the load pattern that read DRAM fastest in the variant timings
 * (bench/variants.cu): grid-stride, 4 16-byte loads in
 * flight per thread, one block per occupancy slot; ordinary loads (fastest
 * at 1 GiB) or evict-first ones (fastest up to 256 MiB). */
template <bool EVICT_FIRST>
__global__ void __launch_bounds__(kBlock) read_probe_kernel(const float *__restrict__ x, int64_t n, float *sink) {
  /* max of |x| over the block keeps every load alive, with no long chain */
  constexpr int U = 4;
  __shared__ float warp_max[kBlock / 32];
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
    for (int u = 0; u < U; ++u)
      m = fmaxf(m, fmaxf(fmaxf(fabsf(v[u].x), fabsf(v[u].y)), fmaxf(fabsf(v[u].z), fabsf(v[u].w))));
  }
  for (; i < n4; i += stride) {
    const float4 v = EVICT_FIRST ? __ldcs(&x4[i]) : x4[i];
    m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
  }
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kBlock / 32; ++w) m = fmaxf(m, warp_max[w]);
    sink[blockIdx.x] = m;
  }
}

}  // namespace
}  // namespace redux

using namespace redux;

/* Both probe kernels have the same occupancy (same code but the hint). */
extern "C" int redux_cuda_read_probe_blocks(void) {
  return (int)device_fit((const void *)read_probe_kernel<false>, 0);
}

extern "C" redux_status redux_cuda_read_probe(const float *x, int64_t n, float *sink, int evict_first, void *stream) {
  if ((uintptr_t)x % 16 != 0 || n < 4) return REDUX_ERR_SHAPE;
  const int g = redux_cuda_read_probe_blocks();
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (evict_first) read_probe_kernel<true><<<g, kBlock, 0, st>>>(x, n, sink);
  else read_probe_kernel<false><<<g, kBlock, 0, st>>>(x, n, sink);
  return launch_status();
}
