// The eager Python entries of redux.sum and redux.mean (eager.cpp), in the
// method table of redux._C (ops.cpp): f(input, dim, keepdim, dtype).
#pragma once
#include <Python.h>

namespace redux_shim {
PyObject *eager_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *eager_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
}  // namespace redux_shim
