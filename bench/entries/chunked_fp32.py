#!POPCORN leaderboard vectorsum_v2
# A comparison entry written from the public description of the B200 #1
# vectorsum_v2 entry (our code, in CUDA; theirs is Triton): one program
# (block of 8 warps) per 8192 elements, evict-first loads, an fp32 tree;
# each block stores its partial, takes a ticket from a relaxed atomic
# counter, and the last block loads all partials and sums them in index
# order (deterministic run to run, fp32 accumulation).
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 256;   // 8 warps
constexpr int kChunk = 8192;    // elements per block: 8 float4 per thread

__device__ __forceinline__ float block_sum(float v, float *warp_part) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? warp_part[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32)
    for (int off = 4; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
  __syncthreads();
  return v;  // valid in thread 0
}

__global__ void __launch_bounds__(kThreads) chunk_sum_kernel(const float *__restrict__ x, int64_t n, float *partials,
                                                             unsigned int *counter, float *out) {
  __shared__ float warp_part[kThreads / 32];
  __shared__ bool last;
  const int64_t base = (int64_t)blockIdx.x * kChunk;
  float acc = 0.0f;
  if (base + kChunk <= n) {
    const float4 *x4 = reinterpret_cast<const float4 *>(x + base);
    float4 v[kChunk / (4 * kThreads)];
#pragma unroll
    for (int k = 0; k < kChunk / (4 * kThreads); ++k) v[k] = __ldcs(x4 + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kChunk / (4 * kThreads); ++k) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  } else {
    for (int64_t i = base + threadIdx.x; i < n; i += kThreads) acc += x[i];
  }
  acc = block_sum(acc, warp_part);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float s = 0.0f;
  for (int64_t k = threadIdx.x; k < gridDim.x; k += kThreads) s += __ldcg(&partials[k]);
  s = block_sum(s, warp_part);
  if (threadIdx.x == 0) {
    *out = s;
    *counter = 0;
  }
}

torch::Tensor chunk_sum(torch::Tensor x, torch::Tensor out, torch::Tensor partials, torch::Tensor counter) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(), "custom_kernel: 'data' must be contiguous float32 CUDA");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0, "custom_kernel: 'data' must be 16-byte aligned");
  if (x.numel() == 0) return out.zero_().view(c10::IntArrayRef{});
  const int64_t blocks = (x.numel() + kChunk - 1) / kChunk;
  chunk_sum_kernel<<<(unsigned)blocks, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), x.numel(), partials.data_ptr<float>(),
      reinterpret_cast<unsigned int *>(counter.data_ptr<int32_t>()), out.data_ptr<float>());
  return out.view(c10::IntArrayRef{});
}
"""

_module = load_inline(name="entry_chunked_fp32",
                      cpp_sources="torch::Tensor chunk_sum(torch::Tensor x, torch::Tensor out, torch::Tensor partials, torch::Tensor counter);",
                      cuda_sources=CUDA_SRC, functions=["chunk_sum"], extra_cuda_cflags=["-O3"], verbose=False)
_scratch = {}


def custom_kernel(data):
    x, output = data
    # Partials sized per input size, and a counter the last block resets:
    # buffers, not cached answers.
    key = (x.device, x.numel())
    if key not in _scratch:
        blocks = max(1, (x.numel() + 8191) // 8192)
        _scratch[key] = (torch.empty(blocks, device=x.device), torch.zeros(1, dtype=torch.int32, device=x.device))
    partials, counter = _scratch[key]
    return _module.chunk_sum(x, output, partials, counter)
