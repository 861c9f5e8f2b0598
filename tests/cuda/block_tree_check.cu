/* block_reduce_sum (include/redux/reduce.cuh) against the 32-lane second
 * stage it replaced (two dependent shuffle levels fewer): the narrower
 * tree must give the same bits in thread 0 for every accumulator type.
 *
 * Each case fills a block of 256 threads with accumulators that a kernel can
 * hold (built from P::zero() with P::add, so never -0): random magnitudes
 * over a wide exponent range, exact cancellations, zeros, infinities and
 * NaNs; then thread 0's result of both trees is compared bit for bit.
 * Prints one line per accumulator type and exits non-zero on a mismatch.
 * Built and run by tests/test_cuda_tree.py (GPU machines with nvcc). */
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "redux/reduce.cuh"

using namespace redux;

namespace {

constexpr int kThreads = 256;

/* The second stage as it was: warp 0 reduces over all 32 lanes. */
template <typename P, int BLOCK>
__device__ typename P::acc_t block_reduce_wide(typename P::acc_t v, typename P::acc_t *scratch) {
  constexpr int WARPS = BLOCK / 32;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_reduce_sum<P>(v, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < WARPS ? scratch[lane] : P::zero();
    v = warp_reduce_sum<P>(v, 32);
  }
  __syncthreads();
  return v;
}

/* Case c, thread t: K elements added from P::zero(). */
template <typename In, typename Out, int K>
__global__ void tree_kernel(const In *elems, typename sum_policy<In, Out>::acc_t *out) {
  using P = sum_policy<In, Out>;
  using acc_t = typename P::acc_t;
  __shared__ acc_t scratch[kThreads / 32];
  acc_t a = P::zero();
  const In *e = elems + ((size_t)blockIdx.x * kThreads + threadIdx.x) * K;
  for (int k = 0; k < K; ++k) a = P::add(a, e[k]);
  const acc_t narrow = block_reduce_sum<P, kThreads>(a, scratch);
  const acc_t wide = block_reduce_wide<P, kThreads>(a, scratch);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = narrow;
    out[2 * blockIdx.x + 1] = wide;
  }
}

unsigned long long rng = 0x9e3779b97f4a7c15ull;
unsigned long long next() {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* An element of case `c`: the case picks the mix of values. */
double element(int c, size_t i) {
  const double u = (double)(next() >> 11) / 9007199254740992.0;
  const double sign = (next() & 1) ? 1.0 : -1.0;
  const int kind = c % 8;
  if (kind == 0) return sign * u * 100.0 + 3.0;                        /* offset data */
  if (kind == 1) return sign * std::ldexp(1.0 + u, (int)(next() % 120) - 60); /* wide range */
  if (kind == 2) return (i % 2 ? -1.0 : 1.0) * std::ldexp(1.0, (int)(next() % 40)); /* cancels */
  if (kind == 3) return (next() % 4 == 0) ? sign * u : 0.0;            /* mostly zeros */
  if (kind == 4) return 0.0 * sign;                                    /* +0 and -0 only */
  if (kind == 5) return (i == 37) ? INFINITY : sign * u;               /* one inf */
  if (kind == 6) return (i == 999) ? NAN : sign * u;                   /* one NaN */
  return (i == 5) ? INFINITY : (i == 7) ? -INFINITY : sign * u * 1e30; /* inf - inf */
}

template <typename In> In convert(double v);
template <> float convert<float>(double v) { return (float)v; }
template <> double convert<double>(double v) { return v; }
template <> __half convert<__half>(double v) { return __float2half((float)v); }
template <> long long convert<long long>(double v) {
  return std::isfinite(v) ? (long long)(v * 1e6) : (long long)next();
}

template <typename In, typename Out, typename Dev = In>
int check(const char *name) {
  using acc_t = typename sum_policy<Dev, Out>::acc_t;
  constexpr int K = 4, kCases = 64;
  const size_t n = (size_t)kCases * kThreads * K;
  std::vector<In> h(n);
  for (int c = 0; c < kCases; ++c)
    for (size_t i = 0; i < (size_t)kThreads * K; ++i) h[(size_t)c * kThreads * K + i] = convert<In>(element(c, i));
  In *d = nullptr;
  acc_t *out = nullptr;
  if (cudaMalloc(&d, n * sizeof(In)) != cudaSuccess || cudaMalloc(&out, 2 * kCases * sizeof(acc_t)) != cudaSuccess) {
    printf("%s: cudaMalloc failed\n", name);
    return 1;
  }
  cudaMemcpy(d, h.data(), n * sizeof(In), cudaMemcpyHostToDevice);
  tree_kernel<Dev, Out, K><<<kCases, kThreads>>>(reinterpret_cast<const Dev *>(d), out);
  std::vector<acc_t> r(2 * kCases);
  const cudaError_t e = cudaMemcpy(r.data(), out, r.size() * sizeof(acc_t), cudaMemcpyDeviceToHost);
  cudaFree(d);
  cudaFree(out);
  if (e != cudaSuccess) {
    printf("%s: %s\n", name, cudaGetErrorString(e));
    return 1;
  }
  int bad = 0;
  for (int c = 0; c < kCases; ++c)
    if (std::memcmp(&r[2 * c], &r[2 * c + 1], sizeof(acc_t)) != 0) ++bad;
  printf("%s: %d cases, %d with different bits\n", name, kCases, bad);
  return bad != 0;
}

}  // namespace

int main() {
  int fails = 0;
  fails += check<float, float>("fp32 in, fp64 accumulator");
  fails += check<__half, __half>("fp16 in, fp32 accumulator");
  fails += check<double, double>("fp64 in, compensated fp64 accumulator");
  fails += check<long long, int64_t, int64_t>("int64 in, wrapping int64 accumulator");
  printf(fails ? "block tree check: FAILED\n" : "block tree check: all bits equal\n");
  return fails ? 1 : 0;
}
