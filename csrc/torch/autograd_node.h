// What redux's C++ autograd nodes share (autograd.cpp, extremes.cpp).
#pragma once

#include <torch/csrc/autograd/function.h>

#include <memory>
#include <type_traits>

namespace redux_shim {

// A new graph node, held the way this torch holds nodes: std::shared_ptr
// (torch 2.11) or c10::intrusive_ptr (newer releases).
using NodePtr = decltype(torch::autograd::Edge{}.function);
template <class N>
auto make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) return std::make_shared<N>();
  else return c10::make_intrusive<N>();
}

}  // namespace redux_shim
