// The reduction plan: everything the shim decides before a kernel runs.
// Validates the arguments (errors name the argument), applies torch.sum's
// dtype rules, collapses the problem to one of the families of redux.h,
// and says how the kernel's output maps onto the result tensor.
// No arithmetic on elements happens here.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <vector>

#include "redux/redux.h"

namespace redux_shim {

// The C++ signature of redux::sum and redux::mean (their schemas: ops.cpp),
// for typed dispatcher calls.
using SumFn = at::Tensor(const at::Tensor &, at::OptionalIntArrayRef, bool, std::optional<at::ScalarType>);
// Their typed dispatcher handles, looked up once. A call through one is
// dispatched like any op call (autograd, functorch and device keys apply,
// less those the caller's guards exclude).
// The input dtypes redux's kernels read: the floating types it sums,
// every integer type and bool. Listed, not classified, so that a dtype
// torch adds later (as float8 and float4 were) is refused until it is
// added here. The one list of them: Python reads it through
// redux._C.dtypes().
inline constexpr at::ScalarType kReadDtypes[] = {
    at::kFloat, at::kDouble, at::kHalf,   at::kBFloat16, at::kBool,   at::kByte,   at::kChar,
    at::kShort, at::kInt,    at::kLong,   at::kUInt16,   at::kUInt32, at::kUInt64,
};
bool is_supported_input(at::ScalarType t);
// The C kernels' dtype of a torch dtype a sum can give (float32, float64,
// float16, bfloat16, int64), else none: the one list of result dtypes.
std::optional<redux_dtype> to_redux(at::ScalarType t);

// redux.mean's sum dtype for its result dtype: float64 for float32 and
// float64 results, float32 for float16 and bfloat16 (mean.cpp; Python
// reads it through redux._C.mean_dtypes()).
inline at::ScalarType mean_sum_dtype(at::ScalarType out) {
  return (out == at::kFloat || out == at::kDouble) ? at::kDouble : at::kFloat;
}

const c10::TypedOperatorHandle<SumFn> &sum_op();
const c10::TypedOperatorHandle<SumFn> &mean_op();
// redux::_sum_of's signature and handle (self, dim, keepdim, of, dtype, grid).
using SumOfFn = at::Tensor(const at::Tensor &, at::OptionalIntArrayRef, bool, c10::string_view,
                           std::optional<at::ScalarType>, int64_t);
const c10::TypedOperatorHandle<SumOfFn> &sum_of_op();

struct SumPlan {
  at::Tensor input;        // what the kernel reads: dense, maybe converted or copied (see pieces)
  at::ScalarType out_dtype;
  std::vector<int64_t> result_shape;  // torch.sum's result shape (keepdim applied)
  bool trivial = false;    // no kernel needed: the result is all zeros (or empty)
  redux_family family = REDUX_FULL;
  redux_shape shape{1, 1, 1};
  redux_dtype in_t = REDUX_F32;
  redux_dtype out_t = REDUX_F32;
  redux_reduction reduction = REDUX_SUM_OF_VALUES;  // what the kernel adds of each element
  // The kernel writes its outputs in the memory order of the kept dims. When
  // that differs from their logical order, kernel_shape/kernel_perm say how
  // to view the kernel's buffer so it can be copied into the result.
  bool permuted_output = false;
  std::vector<int64_t> kernel_shape;  // sizes of kept dims, kernel order
  std::vector<int64_t> kernel_perm;   // result dim k = kernel dim kernel_perm[k]
  // When kept and reduced dims interleave in memory, the kernel reads
  // self.permute(input_perm) made contiguous (kept dims, then reduced ones).
  std::vector<int64_t> input_perm;
  // The input is not dense: `input` is self itself, read in pieces
  // (pieces.h) into dense buffers of in_t; the family and shape are those
  // of its dense copy. reduced: per dim of self.
  bool pieces = false;
  std::vector<bool> reduced;
};

// The reduced dims of `self`, validated (errors name the argument), wrapped
// to non-negative and sorted. None or [] means every dim.
std::vector<int64_t> reduced_dims(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim);

// What torch.sum's rules decide before any data is looked at: the argument
// checks (errors name the argument), the result dtype and the reduced dims.
// The real kernels' plan and the Meta kernel both start here.
struct SumSpec {
  at::ScalarType out_dtype;
  std::vector<bool> reduced;  // per dim of self
};
SumSpec sum_spec(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                 std::optional<at::ScalarType> dtype);

// torch.sum's result shape: the kept sizes, 1 for reduced dims with keepdim.
// Size: int64_t for real tensors, c10::SymInt for fake ones.
template <typename Size, typename Sizes>
std::vector<Size> result_shape(const Sizes &sizes, const std::vector<bool> &reduced, bool keepdim) {
  std::vector<Size> shape;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) shape.push_back(sizes[d]);
    else if (keepdim) shape.push_back(Size(1));
  }
  return shape;
}

// `op` names the calling op in error messages. Also checks the device.
SumPlan plan_sum(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                 bool keepdim, std::optional<at::ScalarType> dtype);
// The same plan for a tensor on any device (a meta tensor describes a whole
// sharded tensor: redux.distributed plans the sum it stands for).
SumPlan plan_sum_any_device(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim,
                            bool keepdim, std::optional<at::ScalarType> dtype);
// redux::_sum_of's arguments: the reduction `of` names ("abs": sum |x|,
// "square": sum x * x) and torch.sum's dtype rules, checked (errors name the
// argument) for a floating self and a (self, result) dtype pair the mapped
// reductions take (REDUX_MAPPED_PAIRS). Returns the result dtype. `op`
// names the calling op in the errors.
inline constexpr const char *kSumOfOp = "redux._sum_of";
struct SumOfSpec {
  redux_reduction reduction;
  SumSpec spec;
};
SumOfSpec sum_of_spec(const at::Tensor &self, c10::string_view of, at::OptionalIntArrayRef dim,
                      std::optional<at::ScalarType> dtype, const char *op = kSumOfOp);
// Its plan: plan_sum's, of that reduction; a self that is not dense is
// planned as its dense copy, which the plan reads.
SumPlan plan_sum_of(const at::Tensor &self, c10::string_view of, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype);

// redux::_sum_of_each's arguments: each tensor of xs reduced whole, as
// _sum_of plans it with dim None and `dtype` (its bits); the checks name
// xs[i], and every tensor is on xs[0]'s device. The specs alone for the
// Meta kernel, the plans for the real ones.
void check_sum_of_each(at::TensorList xs, c10::string_view of, at::ScalarType dtype);
std::vector<SumPlan> plan_sum_of_each(at::TensorList xs, c10::string_view of, at::ScalarType dtype);
// redux::_one_pass_mean's plan: the sum's plan of a float32 or float64 self
// into its own dtype, of REDUX_MEAN_OF_VALUES (the division in the finish);
// a self that is not dense is planned as its dense copy. Its spec: the
// result dtype and reduced dims (errors name the argument).
SumSpec one_pass_mean_spec(const at::Tensor &self, at::OptionalIntArrayRef dim);
SumPlan plan_one_pass_mean(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim);

// The at::ScalarType of a redux_dtype.
at::ScalarType scalar_type_of(redux_dtype t);

// Allocates the result and, if needed, the kernel's output buffer.
// Returns {result, kernel_out}; they alias unless plan.permuted_output.
std::pair<at::Tensor, at::Tensor> allocate_outputs(const SumPlan &plan);

// Copies the kernel's buffer into the result when they differ.
void finish_outputs(const SumPlan &plan, at::Tensor &result, const at::Tensor &kernel_out);

// Raises a torch error for a failed C API call.
void check_status(const char *op, redux_status status);

// Whether autograd records a gradient through a call on x here (false below
// autograd, as the switch's calls are, in no_grad, or for x needing none).
bool gradient_recorded(const at::Tensor &x);

}  // namespace redux_shim
