// redux::_moment_rows(x, divisor, root) -> (var or std, mean) along the last
// dim (redux.h's moments of rows), for var.cpp's composites on the CPU:
// the rows fanned out over at::parallel_for (a row is one call's: its bits
// do not depend on the thread count). CPU and Meta kernels; CUDA has none
// yet (the composites do not call it there).
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <tuple>

#include "plan.h"

namespace redux_shim {
namespace {

constexpr const char *kOp = "redux._moment_rows";

void check_args(const at::Tensor &x) {
  TORCH_CHECK(x.defined(), kOp, ": argument 'x' is an undefined tensor");
  TORCH_CHECK(x.dim() >= 1, kOp, ": argument 'x' is 0-dim: there is no last dim to reduce");
  const at::ScalarType t = x.scalar_type();
  TORCH_CHECK(t == at::kFloat || t == at::kHalf || t == at::kBFloat16, kOp, ": argument 'x' has dtype ", t,
              ", which is not supported (expected float32, float16 or bfloat16)");
}

std::tuple<at::Tensor, at::Tensor> moment_rows_cpu(const at::Tensor &x, double divisor, bool root) {
  check_args(x);
  TORCH_CHECK(x.size(-1) > 0, kOp, ": argument 'x' has an empty last dim");
  const at::Tensor in = x.contiguous();
  const int64_t n = x.size(-1), rows = x.numel() / n;
  const auto shape = x.sizes().slice(0, x.dim() - 1);
  at::Tensor var = at::empty(shape, x.options()), mean = at::empty(shape, x.options());
  std::atomic<int> failed{REDUX_OK};
  const void *px = in.const_data_ptr();
  void *pv = var.mutable_data_ptr(), *pm = mean.mutable_data_ptr();
  const redux_dtype t = *to_redux(x.scalar_type());
  // pieces of at least ~32K elements: a row's cost is its length
  at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / n), [&](int64_t begin, int64_t end) {
    const redux_status s = redux_cpu_moment_rows(px, pv, pm, begin, end, n, t, divisor, root);
    if (s != REDUX_OK) failed.store(s);
  });
  check_status(kOp, (redux_status)failed.load());
  return {var, mean};
}

std::tuple<at::Tensor, at::Tensor> moment_rows_meta(const at::Tensor &x, double, bool) {
  check_args(x);
  const auto shape = x.sym_sizes().slice(0, x.dim() - 1);
  return {at::empty_symint(shape, x.options()), at::empty_symint(shape, x.options())};
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) { m.impl("_moment_rows", &redux_shim::moment_rows_cpu); }
TORCH_LIBRARY_IMPL(redux, Meta, m) { m.impl("_moment_rows", &redux_shim::moment_rows_meta); }
