// The eager Python entries of redux.sum and redux.mean (eager.cpp), in the
// method table of redux._C (ops.cpp): f(input, dim, keepdim, dtype); and the
// calls of their torch.ops packets.
#pragma once
#include <Python.h>

namespace redux_shim {
PyObject *eager_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *eager_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
// torch.ops.redux.sum / .mean's call (redux/__init__.py): f(torch_route, *args, **kwargs).
PyObject *packet_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *packet_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
}  // namespace redux_shim
