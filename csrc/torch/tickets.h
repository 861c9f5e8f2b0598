// Per-stream ticket counters for the CUDA kernels (see redux.h,
// redux_cuda_sum_counters): one zeroed set of REDUX_CUDA_STREAM_COUNTERS
// counters per (device, stream), kept for the life of the process. Kernels
// leave them zeroed, so calls on a stream skip a zeroing memset each.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace redux_shim {

struct StreamCounters {
  unsigned int *ptr = nullptr;  // nullptr: let the C API zero counters in the workspace
  size_t len = 0;
};

// The counters private to `stream` on `device`, or none (the per-call
// workspace path) when: the stream is capturing a CUDA graph (a replay may
// run beside this stream's own work, so it must own its counters), the
// stream has no process-unique id, the stream table is full, or allocation
// fails. Thread-safe.
StreamCounters stream_counters(int device, cudaStream_t stream);

}  // namespace redux_shim
