/* How fast are the product's column and row families on their targets?
 *
 * redux_cuda_sum on the column targets ((8192, 8192) and (2048, 65536)
 * over dim 0, (256, 4096, 64) over dim 1) in fp32, fp16 and fp64, and on
 * the short-row targets ((65536, 2048) and (2097152, 64) over dim 1) in
 * fp32; every output checked against the fp64 reference before it is
 * timed the competition's way (common.cuh). torch.sum's times for the
 * same shapes: python -m leaderboard shapes (or bench/cols_ab.py).
 *
 * Build and run on a GPU machine, from the repository root:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda bench/families.cu \
 *        csrc/cuda/*.cu csrc/cpu/status.c -o /tmp/families && /tmp/families
 * FAMILIES=cols or FAMILIES=rows runs one family (bench/sweep.sh does).
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "common.cuh"
#include "redux/redux.h"

namespace {

struct Ctx {
  bench::Timer &T;
  cudaStream_t st;
  void *x, *y, *ws;
  size_t ws_cap, x_cap;
  unsigned int *counters;
  int failures = 0;
};

template <typename T>
double output_value(const std::vector<char> &h, int64_t i) {
  if constexpr (std::is_same<T, __half>::value) return __half2float(reinterpret_cast<const __half *>(h.data())[i]);
  else return (double)reinterpret_cast<const T *>(h.data())[i];
}

/* Sums x of shape s over its middle dim with the product, checks every
 * output against the fp64 reference, then times it. */
template <typename T>
void run(Ctx &c, redux_family family, redux_shape s, redux_dtype dt, const char *dname, const char *label) {
  const unsigned seed = 777u;
  const int64_t elems = s.outer * s.n * s.inner;
  const size_t wsb = redux_cuda_sum_workspace_bytes(family, s, dt, dt);
  if ((size_t)elems * sizeof(T) > c.x_cap || wsb > c.ws_cap) {
    printf("%s %s (%lld,%lld,%lld): does not fit this program's buffers\n", label, dname, (long long)s.outer,
           (long long)s.n, (long long)s.inner);
    return;
  }
  bench::fill_input_kernel<<<4096, 256, 0, c.st>>>(static_cast<T *>(c.x), elems, seed);
  auto call = [&] {
    redux_cuda_sum(family, c.x, c.y, c.ws, wsb, c.counters, REDUX_CUDA_STREAM_COUNTERS, s, dt, dt, 0, c.st);
  };
  call();
  CK(cudaStreamSynchronize(c.st));
  CK(cudaGetLastError());
  const int64_t outs = s.outer * s.inner;
  std::vector<char> h(outs * sizeof(T));
  CK(cudaMemcpy(h.data(), c.y, h.size(), cudaMemcpyDeviceToHost));
  std::vector<double> ref(outs, 0.0), abs_sum(outs, 0.0);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.n; ++k)
      for (int64_t i = 0; i < s.inner; ++i) {
        const double v = bench::host_value<T>((o * s.n + k) * s.inner + i, seed);
        ref[o * s.inner + i] += v;
        abs_sum[o * s.inner + i] += std::fabs(v);
      }
  const double tol = std::is_same<T, __half>::value ? 1e-3 : 1e-7;
  int64_t bad = 0;
  for (int64_t j = 0; j < outs; ++j)
    if (!bench::close_to(output_value<T>(h, j), ref[j], abs_sum[j], tol)) ++bad;
  if (bad) {
    printf("FAIL %s %s (%lld,%lld,%lld): %lld of %lld outputs off the reference\n", label, dname,
           (long long)s.outer, (long long)s.n, (long long)s.inner, (long long)bad, (long long)outs);
    ++c.failures;
    return;
  }
  const auto t = c.T.time(call);
  printf("%s %s (%lld,%lld,%lld) redux  median %8.2f us  mean %8.2f us  %7.1f GB/s\n", label, dname,
         (long long)s.outer, (long long)s.n, (long long)s.inner, t.first, t.second,
         (double)elems * sizeof(T) / t.first / 1e3);
}

}  // namespace

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  bench::Timer T(st);
  Ctx c{T, st};
  c.x_cap = (size_t)1 << 30;
  c.ws_cap = 64u << 20;
  CK(cudaMalloc(&c.x, c.x_cap));
  CK(cudaMalloc(&c.y, 32u << 20));
  CK(cudaMalloc(&c.ws, c.ws_cap));
  CK(cudaMalloc(&c.counters, REDUX_CUDA_STREAM_COUNTERS * 4));
  CK(cudaMemset(c.counters, 0, REDUX_CUDA_STREAM_COUNTERS * 4));
  const char *which = getenv("FAMILIES");
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s: the column and row families; each output checked against the fp64 reference first\n", prop.name);
  if (!which || strstr(which, "cols")) {
    const redux_shape shapes[] = {{1, 8192, 8192}, {1, 2048, 65536}, {256, 4096, 64}};
    for (const redux_shape &s : shapes) run<float>(c, REDUX_COLS, s, REDUX_F32, "fp32", "cols");
    for (const redux_shape &s : shapes) run<__half>(c, REDUX_COLS, s, REDUX_F16, "fp16", "cols");
    for (const redux_shape &s : shapes) run<double>(c, REDUX_COLS, s, REDUX_F64, "fp64", "cols");
  }
  if (!which || strstr(which, "rows")) {
    const redux_shape shapes[] = {{65536, 2048, 1}, {2097152, 64, 1}};
    for (const redux_shape &s : shapes) run<float>(c, REDUX_ROWS, s, REDUX_F32, "fp32", "rows");
  }
  CK(cudaDeviceSynchronize());
  if (c.failures) printf("%d shapes failed their check\n", c.failures);
  return c.failures ? 1 : 0;
}
