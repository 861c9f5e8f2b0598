// Helpers that submissions and evaluators of the competition share: the
// runner protocol's exit codes, a CUDA_CHECK that reports where a CUDA call
// failed and exits with the protocol's CUDA error code, and a small test
// reporter. Header-only, no torch.
#ifndef POPCORN_UTILS_H
#define POPCORN_UTILS_H

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <cuda_runtime.h>

// Exit codes of the runner protocol (GPU_MODE.md).
enum popcorn_exit_code : int {
  POPCORN_EXIT_OK = 0,
  POPCORN_EXIT_USAGE = 2,
  POPCORN_EXIT_CUDA_API = 110,
  POPCORN_EXIT_NO_FD = 111,
  POPCORN_EXIT_TEST_FAIL = 112,
  POPCORN_EXIT_TEST_SPEC = 113,
};

// Reports expression, file, line and function of a failed CUDA call on
// stderr, then exits with POPCORN_EXIT_CUDA_API.
inline void popcorn_cuda_check(cudaError_t status, const char *expr, const char *file, int line,
                               const char *function) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "CUDA error %s (%s) in %s\n  at %s:%d, function %s\n", cudaGetErrorName(status),
               cudaGetErrorString(status), expr, file, line, function);
  std::exit(POPCORN_EXIT_CUDA_API);
}
#define CUDA_CHECK(expr) popcorn_cuda_check((expr), #expr, __FILE__, __LINE__, __func__)

// Collects the outcome of one test: pass, or fail with a message.
class TestReporter {
 public:
  void pass() { state_ = State::Pass; message_.clear(); }
  void fail(std::string message) { state_ = State::Fail; message_ = std::move(message); }
  bool has_passed() const { return state_ == State::Pass; }
  bool has_run() const { return state_ != State::NotRun; }
  const std::string &message() const { return message_; }

 private:
  enum class State { NotRun, Pass, Fail };
  State state_ = State::NotRun;
  std::string message_;
};

#endif  // POPCORN_UTILS_H
