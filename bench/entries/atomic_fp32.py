#!POPCORN leaderboard vectorsum_v2
# A comparison entry written from the public description of the H100 #1
# vectorsum_v2 entry (our code, not theirs): fp32 accumulation; 4288 blocks
# of 1024 threads, specialised to the ranked size; streaming 16-byte loads,
# two per thread per tile, grid-stride over tiles; warp shuffles, then a
# block tree; one float2 atomicAdd per block into one of 4 slots; an integer
# ticket, and the last block adds the slots and resets them. Not
# deterministic (float atomics), by design: it is what redux must beat.
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 1024;
constexpr int kBlocks = 4288;

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

__global__ void __launch_bounds__(kThreads) atomic_sum_kernel(const float *__restrict__ x, int64_t n, float2 *slots,
                                                              unsigned int *ticket, float *out) {
  __shared__ float warp_part[kThreads / 32];
  __shared__ bool last;
  const float4 *x4 = reinterpret_cast<const float4 *>(x);
  const int64_t n4 = n / 4;
  const int64_t stride = (int64_t)gridDim.x * kThreads;
  float acc = 0.0f;
  // A tile is 2 * kThreads contiguous float4 (32 KB), two per thread;
  // blocks grid-stride over tiles.
  for (int64_t i = (int64_t)blockIdx.x * 2 * kThreads + threadIdx.x; i < n4; i += 2 * stride) {
    const float4 a = __ldcs(x4 + i);
    const float4 b = i + kThreads < n4 ? __ldcs(x4 + i + kThreads) : make_float4(0.f, 0.f, 0.f, 0.f);
    acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w));
  }
  if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4) acc += x[4 * n4 + threadIdx.x];
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = warp_sum(warp_part[threadIdx.x]);
    if (threadIdx.x == 0) {
#if __CUDA_ARCH__ >= 900
      atomicAdd(&slots[blockIdx.x & 3], make_float2(v, 0.0f));
#else
      atomicAdd(&slots[blockIdx.x & 3].x, v);
#endif
      __threadfence();
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    float s = 0.0f;
    for (int k = 0; k < 4; ++k) {
      s += __ldcg(&slots[k].x) + __ldcg(&slots[k].y);
      slots[k] = make_float2(0.0f, 0.0f);
    }
    *ticket = 0;
    *out = s;
  }
}

torch::Tensor atomic_sum(torch::Tensor x, torch::Tensor out, torch::Tensor scratch) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "custom_kernel: 'data' must be contiguous float32 CUDA");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0, "custom_kernel: 'data' must be 16-byte aligned");
  auto stream = at::cuda::getCurrentCUDAStream();
  if (x.numel() == 0) return out.zero_().view(c10::IntArrayRef{});
  atomic_sum_kernel<<<kBlocks, kThreads, 0, stream>>>(x.data_ptr<float>(), x.numel(),
      reinterpret_cast<float2 *>(scratch.data_ptr()), reinterpret_cast<unsigned int *>(scratch.data_ptr<int32_t>() + 8),
      out.data_ptr<float>());
  return out.view(c10::IntArrayRef{});
}
"""

_module = load_inline(name="entry_atomic_fp32", cpp_sources="torch::Tensor atomic_sum(torch::Tensor x, torch::Tensor out, torch::Tensor scratch);",
                      cuda_sources=CUDA_SRC, functions=["atomic_sum"], extra_cuda_cflags=["-O3"], verbose=False)
_scratch = {}


def custom_kernel(data):
    x, output = data
    # 4 float2 slots and the ticket, zeroed once per device: the last block
    # resets them (a buffer, not a cached answer).
    scratch = _scratch.get(x.device)
    if scratch is None:
        scratch = _scratch[x.device] = torch.zeros(16, dtype=torch.int32, device=x.device)
    return _module.atomic_sum(x, output, scratch)
