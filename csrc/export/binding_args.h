// The argument checks of an exported submission's binding (both bindings
// in csrc/export): custom_kernel's data is a 1-D float32 CUDA input and a
// one-element float32 output on its device.
#ifndef REDUX_EXPORT_BINDING_ARGS_H
#define REDUX_EXPORT_BINDING_ARGS_H

#include <torch/extension.h>

inline void check_submission_args(const torch::Tensor &x, const torch::Tensor &out) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 1,
              "custom_kernel: the input of 'data' must be a 1-D float32 CUDA tensor");
  TORCH_CHECK(out.numel() == 1 && out.scalar_type() == torch::kFloat && out.device() == x.device() &&
                  out.is_contiguous(),
              "custom_kernel: the output of 'data' must be one float32 element on the input's device");
}

#endif /* REDUX_EXPORT_BINDING_ARGS_H */
