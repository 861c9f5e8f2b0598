/* What every CUDA family shares (internal to csrc/cuda): the block size,
 * the cache-hint rule, launch errors. The rest of the plumbing, one concern
 * a header:
 *   dispatch.cuh   (input, output) dtype dispatch, accumulator sizes
 *   workspace.cuh  counters and partials of a launch
 *   grid.cuh       blocks and clusters that fit, the grid of a launch
 *   finish.cuh     the ticket and polled single-pass finishes
 *   internal.cuh   all of them and the families' plans: the one header for
 *                  code that rebuilds a family's kernels outside csrc/cuda
 */
#ifndef REDUX_CUDA_COMMON_CUH
#define REDUX_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include "redux/redux.h"
#include "redux/reduce.cuh"

namespace redux {

/* Threads per block of every family kernel. Part of the reduction tree:
 * changing it changes the bits (never the grid). */
constexpr int kBlock = 256;

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Division by a divisor d >= 1 fixed at launch, of dividends below 2^31,
 * as a multiply-high and a shift (m = ceil(2^(31 + l) / d), l = ceil(log2
 * d)): index math without the integer division's ~20 dependent
 * instructions ahead of a short-lived block's first load. */
struct fast_div {
  uint32_t d, mul, shift;
  __host__ static fast_div of(uint32_t divisor) {
    fast_div f{divisor, 0, 0};
    if (divisor > 1) {
      uint32_t l = 0;
      while ((1ull << l) < divisor) ++l;
      f.mul = (uint32_t)(((1ull << (31 + l)) + divisor - 1) / divisor);
      f.shift = l - 1;
    }
    return f;
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const { return d == 1 ? n : __umulhi(n, mul) >> shift; }
};

/* The smallest power of two >= v (v >= 1): the family plans round chunk
 * sizes up to one. */
inline int64_t pow2_at_least(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/* The cache hint of a family's loads: inputs up to 256 MiB are read with
 * evict-first loads, larger ones with ordinary loads (measured on the H200:
 * evict-first reads 210 MB faster, ordinary loads 1 GiB; the crossover lies
 * between 256 and 512 MB). A hint: never changes what is read, so never
 * the bits. */
constexpr int64_t kStreamMaxBytes = (int64_t)256 << 20;
inline bool stream_hint(int64_t input_bytes) { return input_bytes <= kStreamMaxBytes; }

/* Launch error check shared by the launchers (also clears the error). */
inline redux_status launch_status() {
  return cudaGetLastError() == cudaSuccess ? REDUX_OK : REDUX_ERR_CUDA;
}

}  // namespace redux

#endif /* REDUX_CUDA_COMMON_CUH */
