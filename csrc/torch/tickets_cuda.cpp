// Per-stream ticket counters: see tickets.h. Keyed by the stream's
// process-unique id (cudaStreamGetId), never by its handle: a destroyed
// stream's handle can be reused by a new stream while the old one's last
// kernel still runs.
#include "tickets.h"

#include <mutex>
#include <unordered_map>
#include <functional>

#include "redux/redux.h"

namespace redux_shim {
namespace {

// Streams with their own counters, per process; further streams use the
// workspace path (still correct, one memset more per call).
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

StreamCounters stream_counters(int device, cudaStream_t stream) {
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
  // Leaked on purpose: the counters must outlive every kernel, and freeing
  // device memory from a static destructor after the CUDA runtime shut down
  // would fail.
  static std::mutex *mu = new std::mutex;
  static auto *table = new std::unordered_map<Key, unsigned int *, KeyHash>;
  const std::lock_guard<std::mutex> lock(*mu);
  const Key key{device, id};
  auto it = table->find(key);
  if (it != table->end()) return {it->second, REDUX_CUDA_STREAM_COUNTERS};
  if (table->size() >= kMaxStreams) return {};
  // Another thread may be capturing a graph in global mode, which forbids
  // cudaMalloc here unless this thread is in relaxed mode (as torch's
  // allocator does). Restored before returning.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  void *p = nullptr;
  const size_t bytes = REDUX_CUDA_STREAM_COUNTERS * sizeof(unsigned int);
  bool ok = cudaMalloc(&p, bytes) == cudaSuccess;
  // Zeroed in stream order: this stream's first kernel runs after it.
  if (ok && cudaMemsetAsync(p, 0, bytes, stream) != cudaSuccess) {
    cudaFree(p);
    ok = false;
  }
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (!ok) {
    (void)cudaGetLastError();
    return {};
  }
  table->emplace(key, static_cast<unsigned int *>(p));
  return {static_cast<unsigned int *>(p), REDUX_CUDA_STREAM_COUNTERS};
}

}  // namespace redux_shim
