// Every redux op on a backend it has no kernel for (sparse, quantized,
// nested, mkldnn tensors): an error that names the op and the argument, in
// place of the dispatcher's "Could not run ... with arguments from the
// SparseCPU backend".
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>

#include "unsupported.h"

namespace redux_shim {
namespace {

void refuse(const c10::OperatorHandle &op, c10::DispatchKeySet keys, torch::jit::Stack *stack) {
  const auto &schema = op.schema();
  std::string name = schema.name();
  if (name.rfind("redux::", 0) == 0) name = "redux." + name.substr(7);
  // The first tensor argument is the one that picked this backend.
  const size_t nargs = schema.arguments().size();
  const auto args = torch::jit::last(*stack, nargs);
  for (size_t i = 0; i < nargs; ++i) {
    if (!args[i].isTensor()) continue;
    const at::Tensor &t = args[i].toTensor();
    TORCH_CHECK(false, name, ": argument '", schema.arguments()[i].name(), "' is a ", t.scalar_type(),
                " tensor of the ", keys.highestPriorityTypeId(), " backend (layout ", t.layout(),
                "), which is not supported (expected a dense CPU or CUDA tensor)");
  }
  TORCH_CHECK(false, name, ": no kernel for this backend");
}

}  // namespace

void refuse_other_backends(torch::Library &m, const char *name) {
  for (auto key : {c10::DispatchKey::SparseCPU, c10::DispatchKey::SparseCUDA, c10::DispatchKey::SparseCsrCPU,
                   c10::DispatchKey::SparseCsrCUDA, c10::DispatchKey::QuantizedCPU, c10::DispatchKey::QuantizedCUDA,
                   c10::DispatchKey::NestedTensorCPU, c10::DispatchKey::NestedTensorCUDA,
                   c10::DispatchKey::MkldnnCPU, c10::DispatchKey::SparseMeta, c10::DispatchKey::SparseCsrMeta,
                   c10::DispatchKey::QuantizedMeta, c10::DispatchKey::NestedTensorMeta,
                   // above the backend: nested tensors meet it first for ops without autograd
                   c10::DispatchKey::AutogradNestedTensor})
    m.impl(name, torch::dispatch(key, torch::CppFunction::makeFromBoxedFunction<&refuse>()));
}

}  // namespace redux_shim
