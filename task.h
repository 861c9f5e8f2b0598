// The vectorsum_v2 submission contract (C++ flavour), as the competition
// states it: a submission implements
//
//     output_t custom_kernel(input_t data);
//
// `data` is the float32 input tensor of `size` elements, generated from
// `seed`, and a preallocated float32 output tensor of shape [1]; the result
// is the sum as a float32 tensor of shape [] (0-dim), which may be a view of
// the output tensor. Redux's own implementation is csrc/torch/competition.cpp.
#ifndef POPCORN_TASK_H
#define POPCORN_TASK_H

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <tuple>

// (data, output): data is 1-D float32 of `size` elements on the GPU; output
// is float32 of shape [1], preallocated by the evaluator.
using input_t = std::tuple<at::Tensor, at::Tensor>;
// The sum, float32, shape [].
using output_t = at::Tensor;

// The arguments of one test or benchmark case, as named in test files
// ("size: 1024; seed: 5236").
struct task_args_t {
  int64_t size;
  int64_t seed;
};
inline constexpr const char *kTaskArgNames[] = {"size", "seed"};

output_t custom_kernel(input_t data);

#endif  // POPCORN_TASK_H
