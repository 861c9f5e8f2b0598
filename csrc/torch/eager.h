// The eager Python entries of redux.sum and redux.mean (eager.cpp), in the
// method table of redux._C (ops.cpp): f(input, dim, keepdim, dtype); and the
// calls of the torch.ops packets of every public op.
#pragma once
#include <Python.h>

namespace redux_shim {
PyObject *eager_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *eager_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
// torch.ops.redux.sum / .mean's call (redux/__init__.py): f(torch_route, *args, **kwargs).
PyObject *packet_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *packet_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
// The other public ops' packets: op_handle("redux::amax") gives a capsule
// of the op's handle, once; packet_op(torch_route, capsule, *args,
// **kwargs) converts plain arguments by the op's schema and calls it boxed,
// as torch's route does after its own parsing, and hands any other call to
// the route.
PyObject *op_handle(PyObject *self, PyObject *name);
PyObject *packet_op(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
// redux.distributed's call of redux._sum_shards: f(route, x, lengths, rank,
// dim, keepdim, dtype, group_name, comm_device), route the op's overload.
PyObject *sum_shards(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
}  // namespace redux_shim
