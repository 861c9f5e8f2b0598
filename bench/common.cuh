/* What the CUDA measuring programs share: error checks, input generation,
 * the competition's timer, and the fp64 reference check. Measuring code
 * only: nothing here is part of the product, and the product never
 * includes it.
 *
 * The timer is the competition's method (leaderboard/core.py): a 256 MiB
 * write evicts the L2 before every sample, CUDA events around the work, one
 * sample a call; medians are printed beside means. */
#ifndef REDUX_BENCH_COMMON_CUH
#define REDUX_BENCH_COMMON_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

namespace bench {

/* The value of element i: uniform in [-127, 129) in steps of 2^-16 from a
 * hash of i and the seed (an offset of 1, never zeros). Exact in float by
 * construction (an integer under 2^24 times a power of two), so a fused
 * multiply-add on the device cannot make it differ from the host's. */
__host__ __device__ inline float input_value(int64_t i, unsigned seed) {
  unsigned h = (unsigned)i * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return (float)((int)(h & 0xffffff) - 8323072) * (1.0f / 65536.0f);
}

template <typename T>
__global__ void fill_input_kernel(T *x, int64_t n, unsigned seed) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    x[i] = (T)input_value(i, seed);
}

/* Element i as the device holds it in a T (fp16 rounds). */
template <typename T>
inline double host_value(int64_t i, unsigned seed) {
  if constexpr (std::is_same<T, __half>::value) return (double)__half2float(__float2half(input_value(i, seed)));
  else return (double)(T)input_value(i, seed);
}

__global__ void empty_kernel() {}

/* One sample per call of f after a 256 MiB write; sorted, in microseconds. */
struct Timer {
  void *fill = nullptr;
  cudaEvent_t a, b;
  cudaStream_t st;
  explicit Timer(cudaStream_t s) : st(s) {
    CK(cudaMalloc(&fill, 256u << 20));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
  }
  std::vector<double> samples(const std::function<void()> &f, int reps) {
    for (int i = 0; i < 3; ++i) f();
    CK(cudaStreamSynchronize(st));
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) {
      CK(cudaStreamSynchronize(st));
      CK(cudaMemsetAsync(fill, i & 0xff, 256u << 20, st)); /* still running when `a` is recorded */
      CK(cudaEventRecord(a, st));
      f();
      CK(cudaEventRecord(b, st));
      CK(cudaEventSynchronize(b));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, a, b));
      v.push_back(ms * 1e3);
    }
    CK(cudaGetLastError());
    std::sort(v.begin(), v.end());
    return v;
  }
  /* {median, mean} in microseconds. */
  std::pair<double, double> time(const std::function<void()> &f, int reps = 60) {
    const std::vector<double> v = samples(f, reps);
    double mean = 0;
    for (double t : v) mean += t;
    return {v[v.size() / 2], mean / v.size()};
  }
};

/* Whether a result is within rel_tol of its fp64 reference's magnitude
 * (the output's rounding; callers pass it by type) plus 1e-9 of the inputs'
 * absolute sum (the accumulation), and finite. */
inline bool close_to(double got, double ref, double abs_sum, double rel_tol) {
  return std::isfinite(got) && std::fabs(got - ref) <= rel_tol * std::fabs(ref) + 1e-9 * abs_sum;
}

}  // namespace bench

#endif /* REDUX_BENCH_COMMON_CUH */
