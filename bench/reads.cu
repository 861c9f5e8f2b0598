/* How fast can a kernel read the input, and what does a launch cost?
 *
 * Pure streaming reads of fp32 input (no sum, no output but one word a
 * block), timed the competition's way (common.cuh), at 52.4M, 2^26, 2^27 and
 * 2^28 elements:
 *   grid    resident blocks striding the grid, U 16-byte loads in flight a
 *           thread, 256 or 512 threads;
 *   slab    each block a contiguous slab, U loads in flight;
 *   probe   the product's read probe (include/redux/probe.h), both
 *           patterns and both cache hints: the harness's "read floor";
 * loads evict-first (.cs), ordinary, or non-coherent with a 256 B L2
 * prefetch. Then the launch costs: an empty kernel, and a cudaMemsetAsync
 * before it (why the sums keep their counters zeroed instead of clearing
 * them per call).
 *
 * Build and run on a GPU machine, from the repository root:
 *   nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda bench/reads.cu \
 *        csrc/cuda/read_probe.cu csrc/cpu/status.c -o /tmp/reads && /tmp/reads
 */
#include <cstdint>
#include <cstdio>
#include <string>

#include "common.cuh"
#include "redux/probe.h"

using bench::Timer;

namespace {

enum Hint { H_CS, H_DEF, H_NA256 };

template <int HINT>
__device__ __forceinline__ float4 load(const float4 *p) {
  if constexpr (HINT == H_CS) return __ldcs(p);
  else if constexpr (HINT == H_DEF) return *p;
  else {
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
  }
}

/* Folds a vector into a running value the compiler cannot drop. */
__device__ __forceinline__ float fold(float m, float4 v) {
  return fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
}

template <int BLOCK, int U, int HINT>
__global__ void __launch_bounds__(BLOCK) read_grid(const float4 *__restrict__ x, int64_t n4, float *sink) {
  const int64_t stride = (int64_t)gridDim.x * BLOCK;
  int64_t i = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
  float m = 0.0f;
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load<HINT>(x + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) m = fold(m, v[u]);
  }
  for (; i < n4; i += stride) m = fold(m, load<HINT>(x + i));
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

template <int BLOCK, int U, int HINT>
__global__ void __launch_bounds__(BLOCK) read_slab(const float4 *__restrict__ x, int64_t n4, float *sink) {
  const int64_t per = (n4 + gridDim.x - 1) / gridDim.x;
  const int64_t b = (int64_t)blockIdx.x * per, e = min(b + per, n4);
  float m = 0.0f;
  int64_t i = b + threadIdx.x;
  for (; i + (U - 1) * BLOCK < e; i += U * BLOCK) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load<HINT>(x + i + u * BLOCK);
#pragma unroll
    for (int u = 0; u < U; ++u) m = fold(m, v[u]);
  }
  for (; i < e; i += BLOCK) m = fold(m, load<HINT>(x + i));
  if (m == 12345.0f) sink[blockIdx.x] = m;
}

/* Blocks of `block` threads that fit on the device at once. */
template <typename K>
int resident_blocks(K kernel, int block) {
  int dev = 0, sms = 0, per = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, block, 0));
  return sms * per;
}

template <typename K>
void add_read(std::vector<std::pair<std::string, std::function<void()>>> &rs, const char *name, K kernel, int block,
              const float4 *x4, int64_t n4, float *sink, cudaStream_t st) {
  const int grid = resident_blocks(kernel, block);
  rs.push_back({name, [=] { kernel<<<grid, block, 0, st>>>(x4, n4, sink); }});
}

}  // namespace

int main() {
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Timer T(st);
  const int64_t nmax = (int64_t)1 << 28;
  float *x, *sink;
  CK(cudaMalloc(&x, nmax * 4));
  const int64_t sink_len = redux_cuda_read_probe_sink_len(nmax, REDUX_PROBE_PIECES) + (1 << 16);
  CK(cudaMalloc(&sink, sink_len * 4));
  bench::fill_input_kernel<<<4096, 256, 0, st>>>(x, nmax, 1234u);
  CK(cudaStreamSynchronize(st));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s: streaming reads of fp32 input (no sum); GB/s from the median\n", prop.name);
  for (int64_t n : {(int64_t)52428800, (int64_t)1 << 26, (int64_t)1 << 27, nmax}) {
    const int64_t n4 = n / 4;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    std::vector<std::pair<std::string, std::function<void()>>> rs;
    add_read(rs, "grid b256 u1 cs", read_grid<256, 1, H_CS>, 256, x4, n4, sink, st);
    add_read(rs, "grid b256 u4 cs", read_grid<256, 4, H_CS>, 256, x4, n4, sink, st);
    add_read(rs, "grid b256 u4 def", read_grid<256, 4, H_DEF>, 256, x4, n4, sink, st);
    add_read(rs, "grid b256 u4 na256", read_grid<256, 4, H_NA256>, 256, x4, n4, sink, st);
    add_read(rs, "grid b512 u4 def", read_grid<512, 4, H_DEF>, 512, x4, n4, sink, st);
    add_read(rs, "grid b256 u8 def", read_grid<256, 8, H_DEF>, 256, x4, n4, sink, st);
    add_read(rs, "slab b256 u4 cs", read_slab<256, 4, H_CS>, 256, x4, n4, sink, st);
    add_read(rs, "slab b256 u4 def", read_slab<256, 4, H_DEF>, 256, x4, n4, sink, st);
    add_read(rs, "slab b512 u4 def", read_slab<512, 4, H_DEF>, 512, x4, n4, sink, st);
    for (int pattern : {REDUX_PROBE_GRID_STRIDE, REDUX_PROBE_PIECES})
      for (int evict_first : {1, 0}) {
        std::string name = std::string("probe ") + (pattern == REDUX_PROBE_PIECES ? "pieces" : "grid-stride") +
                           (evict_first ? " cs" : " def");
        rs.push_back({name, [=] {
                        if (redux_cuda_read_probe(x, n, sink, evict_first, pattern, st) != REDUX_OK) exit(1);
                      }});
      }
    for (auto &r : rs) {
      const auto t = T.time(r.second);
      printf("read n=%-10lld %-24s median %8.2f us  mean %8.2f us  %7.1f GB/s\n", (long long)n, r.first.c_str(),
             t.first, t.second, n * 4 / t.first / 1e3);
    }
  }
  printf("launch costs\n");
  auto t = T.time([&] { bench::empty_kernel<<<1, 32, 0, st>>>(); });
  printf("empty kernel           median %8.2f us  mean %8.2f us\n", t.first, t.second);
  t = T.time([&] {
    CK(cudaMemsetAsync(sink, 0, 256, st));
    bench::empty_kernel<<<1, 32, 0, st>>>();
  });
  printf("memset + empty kernel  median %8.2f us  mean %8.2f us\n", t.first, t.second);
  CK(cudaDeviceSynchronize());
  return 0;
}
