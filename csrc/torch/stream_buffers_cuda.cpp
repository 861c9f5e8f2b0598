// Per-stream counters and workspace: see stream_buffers.h. Keyed by the stream's
// process-unique id (cudaStreamGetId), never by its handle: a destroyed
// stream's handle can be reused by a new stream while the old one's last
// kernel still runs.
#include "stream_buffers.h"

#include <ATen/ops/empty.h>

#include <mutex>
#include <unordered_map>
#include <functional>

#include "redux/redux.h"

namespace redux_shim {
namespace {

// Streams with their own buffers, per process; further streams use the
// per-call path (still correct, an allocation and a memset more per call).
constexpr size_t kMaxStreams = 1024;

struct Key {
  int device;
  unsigned long long stream_id;
  bool operator==(const Key &o) const { return device == o.device && stream_id == o.stream_id; }
};
struct KeyHash {
  size_t operator()(const Key &k) const { return std::hash<unsigned long long>()(k.stream_id) * 31u + (size_t)k.device; }
};

}  // namespace

StreamBuffers stream_buffers(int device, cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  if (capture != cudaStreamCaptureStatusNone) return {};
  unsigned long long id = 0;
  if (cudaStreamGetId(stream, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  // Leaked on purpose: the buffers must outlive every kernel, and freeing
  // device memory from a static destructor after the CUDA runtime shut down
  // would fail.
  static std::mutex *mu = new std::mutex;
  static auto *table = new std::unordered_map<Key, char *, KeyHash>;
  const std::lock_guard<std::mutex> lock(*mu);
  const Key key{device, id};
  // One allocation: the counters, then the workspace (256-byte aligned).
  const size_t counter_bytes = REDUX_CUDA_STREAM_COUNTERS * sizeof(unsigned int);
  const auto buffers = [&](char *p) {
    return StreamBuffers{reinterpret_cast<unsigned int *>(p), REDUX_CUDA_STREAM_COUNTERS, p + counter_bytes,
                         kStreamWorkspaceBytes};
  };
  auto it = table->find(key);
  if (it != table->end()) return buffers(it->second);
  if (table->size() >= kMaxStreams) return {};
  // Another thread may be capturing a graph in global mode, which forbids
  // cudaMalloc here unless this thread is in relaxed mode (as torch's
  // allocator does). Restored before returning.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  void *p = nullptr;
  bool ok = cudaMalloc(&p, counter_bytes + kStreamWorkspaceBytes) == cudaSuccess;
  // Counters zeroed in stream order: this stream's first kernel runs after it.
  if (ok && cudaMemsetAsync(p, 0, counter_bytes, stream) != cudaSuccess) {
    cudaFree(p);
    ok = false;
  }
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (!ok) {
    (void)cudaGetLastError();
    return {};
  }
  table->emplace(key, static_cast<char *>(p));
  return buffers(static_cast<char *>(p));
}

void *call_workspace(const StreamBuffers &b, size_t bytes, c10::Device device, at::Tensor *hold) {
  if (bytes == 0) return nullptr;
  if (bytes <= b.workspace_bytes) return b.workspace;
  *hold = at::empty({(int64_t)bytes}, at::TensorOptions().device(device).dtype(at::kByte));
  return hold->mutable_data_ptr();
}

}  // namespace redux_shim
