/* Where does the product's full fp32 sum stand against the ladder's best
 * rung, CUB and a pure read, and what do its stream counters save?
 *
 * At the six competition sizes and 2^28, timed the competition's way
 * (common.cuh), each result first checked against the fp64 reference:
 *   redux            redux_cuda_sum with zeroed per-stream counters (what
 *                    the extension and the exported submission do);
 *   redux +memset    the same with no counters passed: the launcher zeroes
 *                    counter words in the workspace with cudaMemsetAsync;
 *   sum_last_block   rung 7 of the ladder (single pass, last-block finish);
 *   cub              rung 8, cub::DeviceReduce::Sum;
 *   read floor       the read probe's fastest pattern (bench/reads.cu).
 *
 * Build and run on a GPU machine, from the repository root:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda bench/full_sum.cu \
 *        csrc/cuda/*.cu csrc/cpu/status.c -o /tmp/full_sum && /tmp/full_sum
 * FULL_SUM_ONLY_REDUX=1 times the product alone (bench/sweep.sh full).
 */
#include <cstdint>
#include <cstdio>
#include <string>

#include "common.cuh"
#include "redux/probe.h"
#include "redux/redux.h"

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  bench::Timer T(st);
  const int64_t nmax = (int64_t)1 << 28;
  const unsigned seed = 1234u;
  float *x, *y, *sink;
  CK(cudaMalloc(&x, nmax * 4));
  CK(cudaMalloc(&y, 64));
  CK(cudaMalloc(&sink, (redux_cuda_read_probe_sink_len(nmax, REDUX_PROBE_PIECES) + (1 << 16)) * 4));
  bench::fill_input_kernel<<<4096, 256, 0, st>>>(x, nmax, seed);
  const size_t ws_cap = 64u << 20;
  void *ws;
  CK(cudaMalloc(&ws, ws_cap));
  unsigned int *counters;
  CK(cudaMalloc(&counters, REDUX_CUDA_STREAM_COUNTERS * 4));
  CK(cudaMemset(counters, 0, REDUX_CUDA_STREAM_COUNTERS * 4));
  CK(cudaDeviceSynchronize());
  const bool only_redux = getenv("FULL_SUM_ONLY_REDUX") != nullptr;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s: full fp32 sums; each result checked against the fp64 reference first\n", prop.name);

  const int64_t sizes[] = {1638400, 3276800, 6553600, 13107200, 26214400, 52428800, nmax};
  int failures = 0;
  for (int64_t n : sizes) {
    double ref = 0.0, abs_sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = bench::host_value<float>(i, seed);
      ref += v;
      abs_sum += std::fabs(v);
    }
    const redux_shape s{1, n, 1};
    const size_t wsb = redux_cuda_sum_workspace_bytes(REDUX_FULL, s, REDUX_F32, REDUX_F32);
    struct Entry { std::string name; std::function<void()> f; bool sums; };
    std::vector<Entry> es;
    es.push_back({"redux", [&] {
                    redux_cuda_sum(REDUX_FULL, x, y, ws, wsb, counters, REDUX_CUDA_STREAM_COUNTERS, s, REDUX_F32,
                                   REDUX_F32, 0, st);
                  }, true});
    if (!only_redux) {
      es.push_back({"redux +memset", [&] {
                      redux_cuda_sum(REDUX_FULL, x, y, ws, wsb, nullptr, 0, s, REDUX_F32, REDUX_F32, 0, st);
                    }, true});
      const size_t w7 = redux_cuda_ladder_workspace_bytes(REDUX_RUNG_LAST_BLOCK, n);
      es.push_back({"sum_last_block", [&] { redux_cuda_ladder_sum(REDUX_RUNG_LAST_BLOCK, x, y, n, ws, w7, 0, st); },
                    true});
      const size_t w8 = redux_cuda_ladder_workspace_bytes(REDUX_RUNG_CUB, n);
      es.push_back({"cub", [&] { redux_cuda_ladder_sum(REDUX_RUNG_CUB, x, y, n, ws, w8, 0, st); }, true});
      es.push_back({"read floor (probe pieces cs)", [&] {
                      redux_cuda_read_probe(x, n, sink, 1, REDUX_PROBE_PIECES, st);
                    }, false});
    }
    for (auto &e : es) {
      if (e.sums) { /* validated before it is timed */
        CK(cudaMemsetAsync(y, 0xff, 4, st));
        e.f();
        CK(cudaStreamSynchronize(st));
        CK(cudaGetLastError());
        float out = 0;
        CK(cudaMemcpy(&out, y, 4, cudaMemcpyDeviceToHost));
        /* fp32 output: one rounding of the result, plus fp32 accumulation for the rungs that use it */
        const double tol = e.name.rfind("redux", 0) == 0 ? 1e-7 : 1e-5;
        if (!bench::close_to(out, ref, abs_sum, tol)) {
          printf("FAIL sum n=%lld %s: %.9g against the reference %.9g\n", (long long)n, e.name.c_str(), out, ref);
          ++failures;
          continue;
        }
      }
      const auto t = T.time(e.f);
      printf("sum n=%-10lld %-30s median %8.2f us  mean %8.2f us  %7.1f GB/s\n", (long long)n, e.name.c_str(),
             t.first, t.second, n * 4 / t.first / 1e3);
    }
  }
  CK(cudaDeviceSynchronize());
  if (failures) printf("%d results failed their check\n", failures);
  return failures ? 1 : 0;
}
