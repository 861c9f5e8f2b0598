// Sharded sums (redux.distributed): the layout of a shard in the whole
// tensor's plan, and the unit partials / finish ops on either backend.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "plan.h"

namespace redux_shim {

// The entries of the int[] layout the sharding op hands to Python and back.
enum LayoutField : int64_t {
  kFamily = 0,   // redux_family, or -1: the whole sum is trivial (empty)
  kOuter,        // the whole problem's shape
  kN,
  kInner,
  kUnit,         // n-length of a unit (the backend's tree); kN: one unit
  kUnits,
  kAccBytes,     // bytes of one partial
  kRole,         // what dim 0 of the tensor is in the plan: 0 part of n, 1 part of outer
  kPerIndex,     // elements of n (role 0) or slices of outer (role 1) per index of dim 0
  kInType,       // redux_dtype the kernels read
  kOutType,      // redux_dtype of the result
  kLayoutFields
};

struct ShardBackend {
  int64_t (*unit)(redux_family, redux_shape, redux_dtype);
  size_t (*acc_bytes)(redux_dtype, redux_dtype);
};

// The layout of a shard of x's dtype and trailing sizes cut out of a tensor
// of global_sizes, and the permutation that brings the dims into the
// plan's order (empty: none). A function of sizes, dims and dtypes only.
struct ShardLayout {
  std::vector<int64_t> fields;  // LayoutField entries
  std::vector<int64_t> perm;
};
ShardLayout shard_layout(const at::Tensor &x, at::IntArrayRef global_sizes, at::OptionalIntArrayRef dim,
                         std::optional<at::ScalarType> dtype, const ShardBackend &backend);
// The shard x as the kernels read it: [outer held, n held, inner].
at::Tensor shard_view(const at::Tensor &x, const ShardLayout &layout);

// Both: the _sum_sharding op.
std::tuple<at::Tensor, std::vector<int64_t>> sharding_impl(const at::Tensor &x, at::IntArrayRef global_sizes,
                                                            at::OptionalIntArrayRef dim,
                                                            std::optional<at::ScalarType> dtype,
                                                            const ShardBackend &backend);

// Checks every field of a layout (of a sum of several units) against the
// backend's tree (a forged layout is an error, never an out-of-bounds
// access) and returns its shape.
redux_shape checked_layout(const char *op, at::IntArrayRef layout, const ShardBackend &backend);
// Checks units [u0, u1) and a [outer held, their rows, inner] view of the
// kernels' input dtype against the layout; returns the shape.
redux_shape checked_view(const char *op, const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1,
                         const ShardBackend &backend);
// Checks [outer held, units, inner, acc bytes] uint8 partials; returns the shape.
redux_shape checked_partials(const char *op, const at::Tensor &partials, at::IntArrayRef layout,
                             const ShardBackend &backend);

// Each backend's tree and its _sum_unit_partials / _sum_from_partials
// (sharded.cpp, sharded_cuda.cpp).
extern const ShardBackend kCpuTree;
at::Tensor unit_partials_cpu(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1);
at::Tensor from_partials_cpu(const at::Tensor &partials, at::IntArrayRef layout);
extern const ShardBackend kCudaTree;
at::Tensor unit_partials_cuda(const at::Tensor &view, at::IntArrayRef layout, int64_t u0, int64_t u1);
at::Tensor from_partials_cuda(const at::Tensor &partials, at::IntArrayRef layout);
// The same two on raw CUDA buffers of a checked layout, on the current
// stream: the ops above check and allocate, then call these.
void unit_partials_into_cuda(const void *view, void *partials, at::IntArrayRef layout, int64_t outer, int64_t u0,
                             int64_t u1, c10::Device device);
void from_partials_into_cuda(const void *partials, void *y, at::IntArrayRef layout, int64_t outer,
                             c10::Device device);

}  // namespace redux_shim
