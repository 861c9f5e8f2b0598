// Sharded sums on CUDA: the ops of sharded.cpp over the CUDA tree's units,
// stream-ordered on the current stream.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "sharded.h"

namespace redux_shim {
const ShardBackend kCudaTree{redux_cuda_sum_unit, redux_cuda_sum_partial_bytes};

namespace {

std::tuple<at::Tensor, std::vector<int64_t>> sharding_cuda(const at::Tensor &x, at::IntArrayRef global_sizes,
                                                           at::OptionalIntArrayRef dim,
                                                           std::optional<at::ScalarType> dtype) {
  const c10::cuda::CUDAGuard guard(x.device());
  return sharding_impl(x, global_sizes, dim, dtype, kCudaTree);
}

constexpr const char *kPartialsOp = "redux._sum_unit_partials";
constexpr const char *kFinishOp = "redux._sum_from_partials";

}  // namespace

void unit_partials_into_cuda(const void *view, void *partials, at::IntArrayRef layout, int64_t outer, int64_t u0,
                             int64_t u1, c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  const redux_shape s{layout[kOuter], layout[kN], layout[kInner]};
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index()).stream();
  check_status(kPartialsOp, redux_cuda_sum_unit_partials((redux_family)layout[kFamily], view, partials, s, outer, u0,
                                                         u1, (redux_dtype)layout[kInType],
                                                         (redux_dtype)layout[kOutType], stream));
}

void from_partials_into_cuda(const void *partials, void *y, at::IntArrayRef layout, int64_t outer,
                             c10::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  const redux_shape s{layout[kOuter], layout[kN], layout[kInner]};
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index()).stream();
  check_status(kFinishOp, redux_cuda_sum_from_partials((redux_family)layout[kFamily], partials, y, s, outer,
                                                       (redux_dtype)layout[kInType], (redux_dtype)layout[kOutType],
                                                       stream));
}

at::Tensor unit_partials_cuda(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1) {
  const redux_shape s = checked_view(kPartialsOp, view, layout, u0, u1, kCudaTree);
  const int64_t outer = view.size(0);
  at::Tensor partials = at::empty({outer, u1 - u0, s.inner, layout[kAccBytes]}, view.options().dtype(at::kByte));
  unit_partials_into_cuda(view.const_data_ptr(), partials.mutable_data_ptr(), layout, outer, u0, u1, view.device());
  return partials;
}

at::Tensor from_partials_cuda(const at::Tensor &partials, at::IntArrayRef layout) {
  const redux_shape s = checked_partials(kFinishOp, partials, layout, kCudaTree);
  const int64_t outer = partials.size(0);
  at::Tensor y = at::empty({outer, s.inner}, partials.options().dtype(scalar_type_of((redux_dtype)layout[kOutType])));
  from_partials_into_cuda(partials.const_data_ptr(), y.mutable_data_ptr(), layout, outer, partials.device());
  return y;
}

}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CUDA, m) {
  m.impl("_sum_sharding", &redux_shim::sharding_cuda);
  m.impl("_sum_unit_partials", &redux_shim::unit_partials_cuda);
  m.impl("_sum_from_partials", &redux_shim::from_partials_cuda);
}
