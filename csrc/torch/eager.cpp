// redux._C.sum / redux._C.mean: the eager Python entry of redux.sum and
// redux.mean. They call the registered ops through the dispatcher (every
// kernel, autograd and dispatch mode as torch.ops would) but take their
// arguments straight from Python, as torch.sum's own binding does: the
// torch.ops call's schema-driven argument parsing cost ~2 us of host time
// a call (stop 38, bench/cpu_host.py). redux/__init__.py uses them only for
// plain tensors outside tracing and __torch_function__ modes; no arithmetic
// here, only argument conversion.
#include <Python.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/ScopeExit.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <optional>
#include <vector>

#include "eager.h"
#include "plan.h"

namespace redux_shim {
namespace {

// An int of dim: a Python int or anything with __index__ (a numpy integer),
// never a bool (torch.sum refuses those too).
bool is_dim_int(PyObject *o) { return !PyBool_Check(o) && (PyLong_Check(o) || PyIndex_Check(o)); }

int64_t dim_int(PyObject *o) {
  const int64_t v = PyLong_Check(o) ? PyLong_AsLongLong(o) : PyNumber_AsSsize_t(o, PyExc_OverflowError);
  if (PyErr_Occurred()) throw python_error();
  return v;
}

// dim: None, an int, or a list or tuple of ints (torch.sum's forms).
std::optional<std::vector<int64_t>> parse_dim(const char *op, PyObject *dim) {
  if (dim == Py_None) return std::nullopt;
  if (is_dim_int(dim)) return std::vector<int64_t>{dim_int(dim)};
  TORCH_CHECK_TYPE(PyList_Check(dim) || PyTuple_Check(dim), op, ": argument 'dim' must be None, an int or a ",
                   "sequence of ints, got ", Py_TYPE(dim)->tp_name);
  std::vector<int64_t> dims;
  // The size and item re-read each time: an element's __index__ may change a list.
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(dim); ++i) {
    PyObject *item = PySequence_Fast_GET_ITEM(dim, i);
    TORCH_CHECK_TYPE(is_dim_int(item), op, ": argument 'dim' must be a sequence of ints, got an element of ",
                     "type ", Py_TYPE(item)->tp_name);
    Py_INCREF(item);
    const auto release = c10::make_scope_exit([item] { Py_DECREF(item); });  // also when dim_int throws
    dims.push_back(dim_int(item));
  }
  return dims;
}

std::optional<at::ScalarType> parse_dtype(const char *op, PyObject *dtype) {
  if (dtype == Py_None) return std::nullopt;
  TORCH_CHECK_TYPE(THPDtype_Check(dtype), op, ": argument 'dtype' must be a torch.dtype or None, got ",
                   Py_TYPE(dtype)->tp_name);
  return reinterpret_cast<THPDtype *>(dtype)->scalar_type;
}

// (input, dim, keepdim, dtype), all positional: redux/__init__.py passes all four.
PyObject *call_op(const char *op, const c10::TypedOperatorHandle<SumFn> &handle, PyObject *const *args,
                  Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs == 4, op, ": expected (input, dim, keepdim, dtype), got ", nargs, " arguments");
  TORCH_CHECK_TYPE(THPVariable_Check(args[0]), op, ": argument 'input' must be a Tensor, got ",
                   Py_TYPE(args[0])->tp_name);
  TORCH_CHECK_TYPE(PyBool_Check(args[2]), op, ": argument 'keepdim' must be a bool, got ", Py_TYPE(args[2])->tp_name);
  const at::Tensor &input = THPVariable_Unpack(args[0]);
  const auto dims = parse_dim(op, args[1]);
  const bool keepdim = args[2] == Py_True;
  const auto dtype = parse_dtype(op, args[3]);
  at::Tensor out;
  {
    // As torch's bindings do: other Python threads run while the kernel does.
    pybind11::gil_scoped_release no_gil;
    out = handle.call(input, dims ? at::OptionalIntArrayRef(*dims) : at::OptionalIntArrayRef(), keepdim, dtype);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

}  // namespace

PyObject *eager_sum(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return call_op("redux.sum", sum_op(), args, nargs);
}

PyObject *eager_mean(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return call_op("redux.mean", mean_op(), args, nargs);
}

}  // namespace redux_shim
