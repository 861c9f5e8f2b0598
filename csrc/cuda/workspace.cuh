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

/* Workspace: [partials, padded to 256 B][segments x uint32 counters, padded
 * to 256 B]. The counter room is needed only when the caller passes too few
 * stream counters, so it comes last: such a caller's workspace may end
 * before it (workspace_bytes_beside). */
inline size_t counters_bytes(const family_plan &p) {
  return p.segments == 0 ? 0 : (size_t)ceil_div(p.segments * 4, 256) * 256;
}
inline size_t partials_bytes(const family_plan &p, size_t acc_bytes) {
  return p.segments == 0 ? 0 : (size_t)ceil_div(p.partials * (int64_t)acc_bytes, 256) * 256;
}
inline size_t workspace_bytes(const family_plan &p, size_t acc_bytes) {
  return partials_bytes(p, acc_bytes) + counters_bytes(p);
}

/* Whether a launch uses the caller's stream counters: enough of them, and
 * 16-byte aligned (a polled finish stores 16-byte slots there; cudaMalloc
 * and torch's allocator align to 256 bytes or more). */
inline bool uses_stream_counters(const family_plan &p, const unsigned int *stream_counters,
                                 size_t stream_counters_len) {
  return p.segments != 0 && stream_counters != nullptr && stream_counters_len >= (size_t)p.segments &&
         (uintptr_t)stream_counters % 16 == 0;
}

/* The workspace a call needs beside `stream_counters_len` stream counters. */
inline size_t workspace_bytes_beside(const family_plan &p, size_t acc_bytes, size_t stream_counters_len) {
  const bool stream = p.segments != 0 && stream_counters_len >= (size_t)p.segments;
  return stream ? partials_bytes(p, acc_bytes) : workspace_bytes(p, acc_bytes);
}

/* The workspace must hold what the launch uses (the counter room only when
 * the stream counters are not used) and be 16-byte aligned where it holds
 * anything: a workspace that is not is an error. */
inline redux_status check_workspace(const family_plan &p, const void *ws, size_t ws_bytes, size_t acc_bytes,
                                    bool stream_counters) {
  const size_t need = stream_counters ? partials_bytes(p, acc_bytes) : workspace_bytes(p, acc_bytes);
  if (ws_bytes < need) return REDUX_ERR_SHAPE;
  if (need != 0 && (uintptr_t)ws % 16 != 0) return REDUX_ERR_SHAPE;
  return REDUX_OK;
}

/* The counter words and partials of a launch. Counters are the caller's
 * zeroed stream counters when it passed enough of them (kernels leave them
 * zeroed), else the workspace's counter room, zeroed here on `stream`. */
template <typename acc_t>
redux_status prepare_workspace(const family_plan &p, void *ws, size_t ws_bytes, unsigned int *stream_counters,
                               size_t stream_counters_len, cudaStream_t stream, unsigned int **counters,
                               acc_t **partials) {
  const bool from_stream = uses_stream_counters(p, stream_counters, stream_counters_len);
  const redux_status ok = check_workspace(p, ws, ws_bytes, sizeof(acc_t), from_stream);
  if (ok != REDUX_OK) return ok;
  *partials = p.segments != 0 && p.partials != 0 ? static_cast<acc_t *>(ws) : nullptr;
  if (p.segments == 0) {
    *counters = nullptr;
  } else if (from_stream) {
    *counters = stream_counters;
  } else {
    void *room = static_cast<char *>(ws) + partials_bytes(p, sizeof(acc_t));
    *counters = static_cast<unsigned int *>(room);
    if (cudaMemsetAsync(room, 0, counters_bytes(p), stream) != cudaSuccess) return REDUX_ERR_CUDA;
  }
  return REDUX_OK;
}

}  // namespace redux

#endif /* REDUX_CUDA_WORKSPACE_CUH */
