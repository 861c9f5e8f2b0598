// Sharded sums on CUDA: the ops of sharded.cpp over the CUDA tree's units,
// stream-ordered on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "sharded.h"

namespace redux_shim {
namespace {

std::tuple<at::Tensor, std::vector<int64_t>> sharding_cuda(const at::Tensor &x, at::IntArrayRef global_sizes,
                                                           at::OptionalIntArrayRef dim,
                                                           std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(x.device());
  return sharding_impl(x, global_sizes, dim, dtype,
                       ShardBackend{redux_cuda_sum_unit, redux_cuda_sum_partial_bytes});
}

constexpr const char *kPartialsOp = "redux._sum_unit_partials";
constexpr const char *kFinishOp = "redux._sum_from_partials";

at::Tensor unit_partials_cuda(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1) {
  const c10::cuda::CUDAGuard guard(view.device());
  const redux_shape s = checked_layout(kPartialsOp, layout);
  const auto in = (redux_dtype)layout[kInType], out = (redux_dtype)layout[kOutType];
  TORCH_CHECK(u0 >= 0 && u0 < u1 && u1 <= layout[kUnits], kPartialsOp, ": units [", u0, ", ", u1,
              ") are not a range of the problem's ", layout[kUnits]);
  const int64_t rows = std::min(u1 * layout[kUnit], s.n) - u0 * layout[kUnit];
  TORCH_CHECK(view.dim() == 3 && view.size(1) == rows && view.size(2) == s.inner && view.size(0) >= 1 &&
                  view.size(0) <= s.outer && view.is_contiguous() && view.scalar_type() == scalar_type_of(in),
              kPartialsOp, ": argument 'view' must be a contiguous [outer, ", rows, ", ", s.inner, "] ",
              scalar_type_of(in), " tensor, got ", view.sizes(), " ", view.scalar_type());
  const int64_t outer = view.size(0);
  at::Tensor partials = at::empty({outer, u1 - u0, s.inner, layout[kAccBytes]}, view.options().dtype(at::kByte));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(view.device().index()).stream();
  check_status(kPartialsOp, redux_cuda_sum_unit_partials((redux_family)layout[kFamily], view.const_data_ptr(),
                                                         partials.mutable_data_ptr(), s, outer, u0, u1, in, out,
                                                         stream));
  return partials;
}

at::Tensor from_partials_cuda(const at::Tensor &partials, at::IntArrayRef layout) {
  const c10::cuda::CUDAGuard guard(partials.device());
  const redux_shape s = checked_layout(kFinishOp, layout);
  TORCH_CHECK(partials.dim() == 4 && partials.size(0) >= 1 && partials.size(0) <= s.outer &&
                  partials.size(1) == layout[kUnits] && partials.size(2) == s.inner &&
                  partials.size(3) == layout[kAccBytes] && partials.scalar_type() == at::kByte &&
                  partials.is_contiguous(),
              kFinishOp, ": argument 'partials' must be contiguous uint8 [outer, ", layout[kUnits], ", ", s.inner,
              ", ", layout[kAccBytes], "], got ", partials.sizes());
  const int64_t outer = partials.size(0);
  const auto in = (redux_dtype)layout[kInType], out = (redux_dtype)layout[kOutType];
  at::Tensor y = at::empty({outer, s.inner}, partials.options().dtype(scalar_type_of(out)));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(partials.device().index()).stream();
  check_status(kFinishOp, redux_cuda_sum_from_partials((redux_family)layout[kFamily], partials.const_data_ptr(),
                                                       y.mutable_data_ptr(), s, outer, in, out, stream));
  return y;
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_sum_sharding", &redux_shim::sharding_cuda);
  m.impl("_sum_unit_partials", &redux_shim::unit_partials_cuda);
  m.impl("_sum_from_partials", &redux_shim::from_partials_cuda);
}
