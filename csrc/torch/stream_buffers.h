// Per-stream device buffers for the CUDA kernels, kept for the life of the
// process, one set per (device, stream): ticket counters (see redux.h,
// redux_cuda_sum_counters), which kernels leave zeroed, so calls on a stream
// skip a zeroing memset each; and a workspace for the partials, so calls
// whose workspace fits skip an allocation each. Both are used only in the
// stream's order, so a call never meets another call's partials or tickets.
// (The host time of an allocation per call made the exported submission
// host-bound in the evaluator's ranked loop: docs/notes/host-path.md.)
#pragma once

#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <cstddef>

namespace redux_shim {

struct StreamBuffers {
  unsigned int *counters = nullptr;  // nullptr: let the C API zero counters in the workspace
  size_t counters_len = 0;
  void *workspace = nullptr;  // nullptr: the caller allocates a workspace per call
  size_t workspace_bytes = 0;
};

// The stream's workspace: room for every single-row full sum (at most 8192
// chunks of 16-byte partials, plus their counter words) and small rows and
// columns problems; larger workspaces are allocated per call.
constexpr size_t kStreamWorkspaceBytes = (size_t)256 << 10;

// The buffers private to `stream` on `device`, or none (the per-call path)
// when: the stream is capturing a CUDA graph (a replay may run beside this
// stream's own work, so it must own its buffers), the stream has no
// process-unique id, the stream table is full, or allocation fails.
// Thread-safe.
StreamBuffers stream_buffers(int device, cudaStream_t stream);

// The workspace of a call on `device` that needs `bytes` (nullptr for 0):
// the stream's own (b) when it fits, else a fresh one from torch's caching
// allocator on the current stream, which *hold keeps for the call.
void *call_workspace(const StreamBuffers &b, size_t bytes, c10::Device device, at::Tensor *hold);

}  // namespace redux_shim
