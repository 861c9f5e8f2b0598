// When a composite takes a row kernel (row_kernels.h).
#include "row_kernels.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>

namespace redux_shim {

bool row_kernel_reads(at::ScalarType t) {
  return std::find(std::begin(kRowKernelDtypes), std::end(kRowKernelDtypes), t) != std::end(kRowKernelDtypes);
}

bool takes_row_kernel(const at::Tensor &x, const std::vector<int64_t> &reduced) {
  if (x.dim() == 0 || reduced.size() != 1 || reduced[0] != x.dim() - 1) return false;
  if (!row_kernel_reads(x.scalar_type())) return false;
  const c10::DeviceType d = x.device().type();
  if (d != c10::DeviceType::CPU && d != c10::DeviceType::CUDA && d != c10::DeviceType::Meta) return false;
  const c10::SymInt n = x.sym_size(-1);
  if (!(n.sym_ge(1) & n.sym_le(kRowKernelMaxN)).guard_bool(__FILE__, __LINE__)) return false;
  const bool recorded = at::GradMode::is_enabled() && x.requires_grad() &&
                        !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutogradFunctionality);
  return !recorded && !torch::autograd::isFwGradDefined(x);
}

}  // namespace redux_shim
