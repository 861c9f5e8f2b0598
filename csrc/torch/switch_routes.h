// The model switch's kernels for its most called aten ops, in C++
// (switch_routes.cpp), in the method table of redux._C (ops.cpp):
// route_aten({name: fallback}) registers them at the CPU and CUDA keys and
// returns a handle; unroute(handle) removes them.
#pragma once
#include <Python.h>

namespace redux_shim {
PyObject *route_aten(PyObject *self, PyObject *fallbacks);
PyObject *unroute(PyObject *self, PyObject *handle);
// The aten ops route_aten takes, as a tuple of overload names ("sum.dim_IntList").
PyObject *routed_in_cpp(PyObject *self, PyObject *unused);
}  // namespace redux_shim
