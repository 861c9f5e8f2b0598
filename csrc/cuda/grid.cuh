/* Grid sizing of the CUDA families (internal to csrc/cuda): blocks that fit
 * on the current device (SM count x occupancy), clusters that fit, and the
 * grid of a launch. The grid never changes a result; the answers are cached
 * per thread, since a device's answer never changes. */
#ifndef REDUX_CUDA_GRID_CUH
#define REDUX_CUDA_GRID_CUH

#include "common.cuh"

namespace redux {

/* compute(dev) for (current device, kernel, key), cached per thread: the
 * launch questions below are asked on every launch, and a device's answer
 * never changes. One cache per kind of question (per Compute type).
 * Returns `fallback` when there is no current device. */
template <typename Compute>
inline int64_t cached_device_answer(const void *kernel, size_t key, int64_t fallback, Compute compute) {
  struct entry { const void *kernel; int dev; size_t key; int64_t value; };
  constexpr int kEntries = 64;
  thread_local entry cache[kEntries];
  thread_local int used = 0, next = 0;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return fallback;
  }
  for (int i = 0; i < used; ++i)
    if (cache[i].kernel == kernel && cache[i].dev == dev && cache[i].key == key) return cache[i].value;
  const int64_t value = compute(dev);
  cache[next] = entry{kernel, dev, key, value};
  next = (next + 1) % kEntries;
  if (used < kEntries) ++used;
  return value;
}

/* SMs of the current device (1 without one). */
inline int64_t device_sms() {
  return cached_device_answer(nullptr, 0, 1, [](int dev) -> int64_t {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms > 0 ? sms : 1;
  });
}

/* Blocks of `block` threads that fit on the current device at once for
 * `kernel`: SM count x occupancy. */
inline int64_t device_fit(const void *kernel, size_t smem, int block = kBlock) {
  return cached_device_answer(kernel, smem, 1, [&](int dev) {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem);
    return (int64_t)(sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
  });
}

/* Clusters of `cluster` blocks of `kernel` (kBlock threads, no dynamic
 * shared memory) that fit on the current device at once; 0 when it cannot
 * run clusters: a GPU older than sm_90, or this kernel's code built from
 * PTX for an older architecture (its cluster code compiled out). */
inline int64_t cluster_fit(const void *kernel, int cluster) {
  return cached_device_answer(kernel, (size_t)cluster, 0, [&](int dev) -> int64_t {
    int major = 0;
    cudaFuncAttributes fa{};
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kernel) != cudaSuccess || major < 9 || fa.ptxVersion < 90) {
      (void)cudaGetLastError();
      return 0;
    }
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = (unsigned)cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)cluster);
    cfg.blockDim = dim3(kBlock);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  });
}

/* Blocks for a launch of `kernel` over `items` work items. The grid never
 * changes the result; it is sized for speed: at most what fits on the device
 * at once, balanced so every block does the same number of items (+-1). */
template <typename K>
int grid_for(K kernel, int64_t items, int forced, size_t smem = 0, int block = kBlock) {
  if (forced > 0) return forced;
  const int64_t fit = device_fit(reinterpret_cast<const void *>(kernel), smem, block);
  const int64_t waves = ceil_div(items, fit);
  const int64_t g = ceil_div(items, waves);
  return (int)(g < 1 ? 1 : g);
}

/* One block per work item (at most 2^31 - 1), for kernels whose blocks
 * loop grid-stride over items: the hardware then deals items to SMs in
 * index order as blocks end, instead of fixing each block's share. Never
 * changes the result. */
inline int grid_per_item(int64_t items, int forced) {
  if (forced > 0) return forced;
  const int64_t most = 0x7fffffff;
  return (int)(items < 1 ? 1 : items > most ? most : items);
}

}  // namespace redux

#endif /* REDUX_CUDA_GRID_CUH */
