// Registers, for the op `name` of the redux library, a kernel on the
// backends redux has none for (sparse, quantized, nested, mkldnn) that
// raises an error naming the op and the argument (unsupported.cpp).
#pragma once
#include <torch/library.h>

namespace redux_shim {
void refuse_other_backends(torch::Library &m, const char *name);
}  // namespace redux_shim
