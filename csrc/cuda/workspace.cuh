/* A family launch's workspace (internal to csrc/cuda): the zeroed counter
 * words its finish uses and the partials, carved from the caller's
 * workspace, or the caller's per-stream counters (see redux.h,
 * redux_cuda_sum_counters). */
#ifndef REDUX_CUDA_WORKSPACE_CUH
#define REDUX_CUDA_WORKSPACE_CUH

#include "common.cuh"

namespace redux {

/* What a family's cut of a problem needs in workspace. segments: the zeroed
 * uint32 counter words its finish uses: one ticket counter per output group
 * finished by a last block, or the slots of a polled finish (0: every work
 * item writes its outputs directly); partials: accumulators in workspace. */
struct family_plan {
  int64_t segments;
  int64_t partials;
};

/* Workspace: [segments x uint32 counters, padded to 256 B][partials]. The
 * counter room is used only when the caller passes no stream counters. */
inline size_t counters_bytes(const family_plan &p) {
  return p.segments == 0 ? 0 : (size_t)ceil_div(p.segments * 4, 256) * 256;
}
inline size_t workspace_bytes(const family_plan &p, size_t acc_bytes) {
  return p.segments == 0 ? 0 : counters_bytes(p) + (size_t)p.partials * acc_bytes;
}

/* The counter words and partials of a launch. Counters are the caller's
 * zeroed stream counters when it passed enough of them (kernels leave them
 * zeroed), else the workspace's, zeroed here on `stream`. Both must be
 * 16-byte aligned (a polled finish stores 16-byte slots there): stream
 * counters that are not are passed over, a workspace that is not is an
 * error. cudaMalloc and torch's allocator align to 256 bytes or more. */
inline redux_status check_workspace(const family_plan &p, const void *ws, size_t ws_bytes, size_t acc_bytes) {
  if (ws_bytes < workspace_bytes(p, acc_bytes)) return REDUX_ERR_SHAPE;
  if (p.segments != 0 && (uintptr_t)ws % 16 != 0) return REDUX_ERR_SHAPE;
  return REDUX_OK;
}
template <typename acc_t>
redux_status prepare_workspace(const family_plan &p, void *ws, size_t ws_bytes, unsigned int *stream_counters,
                               size_t stream_counters_len, cudaStream_t stream, unsigned int **counters,
                               acc_t **partials) {
  const redux_status ok = check_workspace(p, ws, ws_bytes, sizeof(acc_t));
  if (ok != REDUX_OK) return ok;
  *partials = p.segments ? reinterpret_cast<acc_t *>(static_cast<char *>(ws) + counters_bytes(p)) : nullptr;
  if (p.segments == 0) {
    *counters = nullptr;
  } else if (stream_counters != nullptr && stream_counters_len >= (size_t)p.segments &&
             (uintptr_t)stream_counters % 16 == 0) {
    *counters = stream_counters;
  } else {
    *counters = static_cast<unsigned int *>(ws);
    if (cudaMemsetAsync(ws, 0, counters_bytes(p), stream) != cudaSuccess) return REDUX_ERR_CUDA;
  }
  return REDUX_OK;
}

}  // namespace redux

#endif /* REDUX_CUDA_WORKSPACE_CUH */
