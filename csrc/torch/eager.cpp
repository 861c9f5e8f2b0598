// redux._C.sum / redux._C.mean: the eager Python entry of redux.sum and
// redux.mean; redux._C.packet_sum / packet_mean: the same entry as the call
// of the torch.ops.redux.sum / .mean packets; redux._C.packet_op: the call
// of the other public ops' packets, by their schemas. They call the registered ops
// through the dispatcher (every kernel, autograd and dispatch mode as
// torch.ops would) but take their arguments straight from Python, as
// torch.sum's own binding does: the torch.ops call's schema-driven argument
// parsing costs 2-12 us of host time a call (docs/notes/host-path.md;
// bench/cpu_host.py measures it). Only plain tensors
// outside __torch_function__ modes take them (redux.sum also not while
// tracing); no arithmetic here, only argument conversion. redux._C.sum_shards
// is the same kind of entry for redux.distributed's calls of redux._sum_shards.
#include <Python.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/ScopeExit.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/runtime/operator.h>

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

// The op on parsed Python arguments; the GIL is released around the call,
// as torch's bindings do, so other Python threads run while the kernel does.
PyObject *call_parsed(const char *op, const c10::TypedOperatorHandle<SumFn> &handle, PyObject *input,
                      PyObject *dim, bool keepdim, PyObject *dtype) {
  const at::Tensor &self = THPVariable_Unpack(input);
  const auto dims = parse_dim(op, dim);
  const auto scalar_type = parse_dtype(op, dtype);
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    out = handle.call(self, dims ? at::OptionalIntArrayRef(*dims) : at::OptionalIntArrayRef(), keepdim, scalar_type);
  }
  return THPVariable_Wrap(std::move(out));
}

// (input, dim, keepdim, dtype), all positional: redux/__init__.py passes all four.
PyObject *call_op(const char *op, const c10::TypedOperatorHandle<SumFn> &handle, PyObject *const *args,
                  Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs == 4, op, ": expected (input, dim, keepdim, dtype), got ", nargs, " arguments");
  TORCH_CHECK_TYPE(THPVariable_Check(args[0]), op, ": argument 'input' must be a Tensor, got ",
                   Py_TYPE(args[0])->tp_name);
  TORCH_CHECK_TYPE(PyBool_Check(args[2]), op, ": argument 'keepdim' must be a bool, got ", Py_TYPE(args[2])->tp_name);
  return call_parsed(op, handle, args[0], args[1], args[2] == Py_True, args[3]);
  END_HANDLE_TH_ERRORS
}

bool plain_int(PyObject *o) { return PyLong_Check(o) && !PyBool_Check(o); }

// A list or tuple of plain ints (bools excluded).
bool plain_ints(PyObject *seq) {
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i)
    if (!plain_int(PySequence_Fast_GET_ITEM(seq, i))) return false;
  return true;
}

// A dim the op's schema (int[1]?) takes and parse_dim reads the same way:
// None, an int, or a list or tuple of ints (bools excluded, as both refuse).
bool plain_dim(PyObject *dim) { return dim == Py_None || plain_int(dim) || plain_ints(dim); }

// torch.ops.redux.sum(...) / .mean(...): args[0] is the packet's own call
// (torch's route), the rest the call's arguments. A call the eager entry
// serves exactly as that route would (a plain tensor, no __torch_function__
// mode, arguments of the schema's plain types, no keyword twice) goes
// straight to the dispatcher; any other call, errors included, takes
// torch's route unchanged.
PyObject *packet_call(const char *op, const c10::TypedOperatorHandle<SumFn> &handle, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs >= 1, op, ": the packet's call takes torch's route as its first argument");
  PyObject *input = nargs >= 2 ? args[1] : nullptr;
  PyObject *dim = nargs >= 3 ? args[2] : Py_None;
  PyObject *keepdim = nargs >= 4 ? args[3] : Py_False;
  PyObject *dtype = Py_None;
  bool eager = nargs >= 2 && nargs <= 4;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; eager && i < nkw; ++i) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, i);
    PyObject *value = args[nargs + i];
    if (nargs < 3 && PyUnicode_CompareWithASCIIString(name, "dim") == 0) {
      dim = value;
    } else if (nargs < 4 && PyUnicode_CompareWithASCIIString(name, "keepdim") == 0) {
      keepdim = value;
    } else if (PyUnicode_CompareWithASCIIString(name, "dtype") == 0) {
      dtype = value;
    } else {
      eager = false;  // "self", an unknown name, or an argument given twice
    }
  }
  // torch.ops' own parsing takes a bool for an int; torch.sum's refuses a
  // bool and a sequence that starts with one (as torch.sum, later elements
  // are read as ints).
  TORCH_CHECK_TYPE(!PyBool_Check(dim), op, ": argument 'dim' must be None, an int or a sequence of ints, got bool");
  TORCH_CHECK_TYPE(!((PyList_Check(dim) || PyTuple_Check(dim)) && PySequence_Fast_GET_SIZE(dim) > 0 &&
                     PyBool_Check(PySequence_Fast_GET_ITEM(dim, 0))),
                   op, ": argument 'dim' must be a sequence of ints, got one that starts with a bool");
  eager = eager && THPVariable_CheckExact(input) && !at::impl::torch_function_mode_enabled() &&
          PyBool_Check(keepdim) && plain_dim(dim) && (dtype == Py_None || THPDtype_Check(dtype));
  if (!eager) return PyObject_Vectorcall(args[0], args + 1, nargs - 1, kwnames);
  return call_parsed(op, handle, input, dim, keepdim == Py_True, dtype);
  END_HANDLE_TH_ERRORS
}

// A plain int (not a bool) that fits int64 into out; false for anything else.
bool plain_int64(PyObject *o, int64_t &out) {
  if (!plain_int(o)) return false;
  out = PyLong_AsLongLong(o);
  if (out == -1 && PyErr_Occurred()) {  // beyond int64: the route's error
    PyErr_Clear();
    return false;
  }
  return true;
}

// int[] (int[1] also takes an int): a list or tuple of plain ints.
bool push_plain_ints(const c10::Argument &arg, PyObject *v, torch::jit::Stack &stack) {
  int64_t i = 0;
  if (arg.N().has_value() && plain_int64(v, i)) {
    stack.emplace_back(std::vector<int64_t>{i});
    return true;
  }
  if (!PyList_Check(v) && !PyTuple_Check(v)) return false;
  std::vector<int64_t> ints;
  for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(v); ++k) {
    if (!plain_int64(PySequence_Fast_GET_ITEM(v, k), i)) return false;
    ints.push_back(i);
  }
  stack.emplace_back(std::move(ints));
  return true;
}

// One argument of a schema from a plain Python value, as torch's route
// would convert it; false (nothing pushed) for any other value, which the
// route then gets. Tensors must be plain (subclasses have their hooks).
bool push_plain(const c10::Argument &arg, PyObject *v, torch::jit::Stack &stack) {
  c10::TypePtr type = arg.real_type();
  if (type->kind() == c10::TypeKind::OptionalType) {
    if (v == Py_None) {
      stack.emplace_back();
      return true;
    }
    type = type->expectRef<c10::OptionalType>().getElementType();
  }
  int64_t i = 0;
  switch (type->kind()) {
    case c10::TypeKind::TensorType:
      if (!THPVariable_CheckExact(v)) return false;
      stack.emplace_back(THPVariable_Unpack(v));
      return true;
    case c10::TypeKind::BoolType:
      if (!PyBool_Check(v)) return false;
      stack.emplace_back(v == Py_True);
      return true;
    case c10::TypeKind::IntType:
      if (!plain_int64(v, i)) return false;
      stack.emplace_back(i);
      return true;
    case c10::TypeKind::ScalarTypeType:
      if (!THPDtype_Check(v)) return false;
      stack.emplace_back(reinterpret_cast<THPDtype *>(v)->scalar_type);
      return true;
    case c10::TypeKind::NumberType:  // a Scalar: an int or a float (a bool or a tensor takes the route)
      if (PyFloat_CheckExact(v)) {
        stack.emplace_back(PyFloat_AS_DOUBLE(v));
        return true;
      }
      if (!plain_int64(v, i)) return false;
      stack.emplace_back(i);
      return true;
    case c10::TypeKind::ListType:
      return type->expectRef<c10::ListType>().getElementType()->kind() == c10::TypeKind::IntType &&
             push_plain_ints(arg, v, stack);
    default:
      return false;
  }
}

// An op's returns, all tensors: one as itself, several as a tuple (as torch.ops gives them).
PyObject *returned_tensors(const c10::FunctionSchema &schema, torch::jit::Stack &stack) {
  for (const c10::IValue &r : stack)
    TORCH_INTERNAL_ASSERT(r.isTensor(), "packet_op: ", schema.name(), " returned a value that is not a tensor");
  if (stack.size() == 1) return THPVariable_Wrap(std::move(stack[0]).toTensor());
  PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(stack.size()));
  if (!tuple) throw python_error();
  for (size_t j = 0; j < stack.size(); ++j) {
    PyObject *t = THPVariable_Wrap(std::move(stack[j]).toTensor());
    if (!t) {
      Py_DECREF(tuple);
      throw python_error();
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(j), t);
  }
  return tuple;
}

}  // namespace

PyObject *op_handle(PyObject *, PyObject *name) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(PyUnicode_Check(name), "op_handle: expected an op's name (\"redux::amax\"), got ",
                   Py_TYPE(name)->tp_name);
  const char *text = PyUnicode_AsUTF8(name);
  if (!text) throw python_error();
  auto *handle = new c10::OperatorHandle(c10::Dispatcher::singleton().findSchemaOrThrow(text, ""));
  return PyCapsule_New(handle, "redux.op_handle",
                       [](PyObject *capsule) {
                         delete static_cast<c10::OperatorHandle *>(PyCapsule_GetPointer(capsule, "redux.op_handle"));
                       });
  END_HANDLE_TH_ERRORS
}

PyObject *packet_op(PyObject *, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(nargs >= 2 && PyCapsule_IsValid(args[1], "redux.op_handle"),
                   "packet_op: expected (torch's route, op_handle(name), *args, **kwargs)");
  const auto &handle = *static_cast<c10::OperatorHandle *>(PyCapsule_GetPointer(args[1], "redux.op_handle"));
  const auto route = [&] { return PyObject_Vectorcall(args[0], args + 2, nargs - 2, kwnames); };
  const c10::FunctionSchema &schema = handle.schema();
  const auto &params = schema.arguments();
  const Py_ssize_t given = nargs - 2, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (given < 1 || given > static_cast<Py_ssize_t>(params.size()) || at::impl::torch_function_mode_enabled())
    return route();
  // Each parameter's value: positional, then keywords by name, then its default.
  std::vector<PyObject *> value(params.size(), nullptr);
  for (Py_ssize_t k = 0; k < given; ++k) {
    if (params[k].kwarg_only()) return route();
    value[k] = args[2 + k];
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    if (!name) throw python_error();
    size_t j = 0;
    while (j < params.size() && params[j].name() != name) ++j;
    if (j == params.size() || value[j] != nullptr) return route();  // unknown, or given twice
    value[j] = args[nargs + k];
  }
  torch::jit::Stack stack;
  stack.reserve(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    if (value[j] == nullptr) {
      if (!params[j].default_value().has_value()) return route();  // missing: the route's error
      stack.push_back(*params[j].default_value());
    } else if (!push_plain(params[j], value[j], stack)) {
      return route();
    }
  }
  {
    pybind11::gil_scoped_release no_gil;
    handle.callBoxed(stack);
  }
  return returned_tensors(schema, stack);
  END_HANDLE_TH_ERRORS
}

namespace {

// redux._sum_shards's schema, for the distributed entry below.
using ShardsFn = at::Tensor(const at::Tensor &, at::IntArrayRef, int64_t, at::OptionalIntArrayRef, bool,
                            std::optional<at::ScalarType>, c10::string_view, c10::Device);

}  // namespace

PyObject *sum_shards(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  constexpr const char *op = "redux._sum_shards";
  TORCH_CHECK_TYPE(nargs == 9, op, ": expected (route, x, lengths, rank, dim, keepdim, dtype, group_name, ",
                   "comm_device), got ", nargs, " arguments");
  PyObject *x = args[1], *lengths = args[2], *rank = args[3], *dim = args[4], *keepdim = args[5], *dtype = args[6],
           *group = args[7], *device = args[8];
  if (!(THPVariable_CheckExact(x) && !at::impl::torch_function_mode_enabled() && plain_ints(lengths) &&
        plain_int(rank) && plain_dim(dim) && PyBool_Check(keepdim) && (dtype == Py_None || THPDtype_Check(dtype)) &&
        PyUnicode_Check(group) && THPDevice_Check(device)))
    return PyObject_Vectorcall(args[0], args + 1, nargs - 1, nullptr);
  std::vector<int64_t> rows;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(lengths); ++i)
    rows.push_back(dim_int(PySequence_Fast_GET_ITEM(lengths, i)));
  const int64_t me = dim_int(rank);
  const auto dims = parse_dim(op, dim);
  const auto scalar_type = parse_dtype(op, dtype);
  Py_ssize_t name_size = 0;
  const char *name = PyUnicode_AsUTF8AndSize(group, &name_size);
  if (!name) throw python_error();
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::_sum_shards", "").typed<ShardsFn>();
  const at::Tensor &self = THPVariable_Unpack(x);
  at::Tensor out;
  {
    pybind11::gil_scoped_release no_gil;
    out = handle.call(self, rows, me, dims ? at::OptionalIntArrayRef(*dims) : at::OptionalIntArrayRef(),
                      keepdim == Py_True, scalar_type, c10::string_view(name, (size_t)name_size),
                      reinterpret_cast<THPDevice *>(device)->device);
  }
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}

PyObject *eager_sum(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return call_op("redux.sum", sum_op(), args, nargs);
}

PyObject *eager_mean(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return call_op("redux.mean", mean_op(), args, nargs);
}

PyObject *packet_sum(PyObject *, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  return packet_call("redux.sum", sum_op(), args, nargs, kwnames);
}

PyObject *packet_mean(PyObject *, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  return packet_call("redux.mean", mean_op(), args, nargs, kwnames);
}

}  // namespace redux_shim
