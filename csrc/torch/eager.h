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
// redux.distributed's call of redux._sum_shards: f(route, x, lengths, rank,
// dim, keepdim, dtype, group_name, comm_device), route the op's overload.
PyObject *sum_shards(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
}  // namespace redux_shim
