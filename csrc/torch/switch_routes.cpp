// The model switch's kernels for the aten ops a training step calls most
// (redux/switch.py), in C++: torch's Python kernels cost a host trip into
// Python per call, which an eager step pays ~40 times. A call the switch's
// Python kernel would hand straight to a redux op (its first branch: the
// dtypes redux reads, no conversion) runs that op here; any other call goes
// to that Python kernel (the fallback), so torch's errors and the unusual
// dtypes stay in one place. Each fast path mirrors that first branch
// exactly; tests compare both. Only dispatch here, no arithmetic.
#include <Python.h>
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/library.h>

#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "extremes.h"
#include "plan.h"
#include "row_kernels.h"
#include "switch_routes.h"

namespace redux_shim {
namespace {

namespace py = pybind11;
using torch::jit::Stack;

// The floating dtypes redux computes in (the switch's _FLOATS).
bool computes_in(at::ScalarType t) { return at::isFloatingType(t) && to_redux(t).has_value(); }

std::optional<at::ScalarType> optional_dtype(const c10::IValue &v) {
  return v.isNone() ? std::nullopt : std::optional<at::ScalarType>(v.toScalarType());
}

// The stack's last n values (the arguments) replaced by the result.
void answer(Stack &s, size_t n, at::Tensor result) {
  torch::jit::drop(s, n);
  torch::jit::push(s, std::move(result));
}

// aten::sum(self, dtype) and sum.dim_IntList(self, dim, keepdim, dtype):
// redux::sum where the switch's _sum calls it (a result dtype redux sums
// into, not complex, an input dtype it reads).
bool sum_of(Stack &s, bool dims) {
  const size_t n = dims ? 4 : 2;
  const auto args = torch::jit::last(s, n);
  const at::Tensor &x = args[0].toTensor();
  const auto dtype = optional_dtype(args[n - 1]);
  const at::ScalarType t = x.scalar_type();
  const at::ScalarType out = dtype.value_or(at::isFloatingType(t) || at::isComplexType(t) ? t : at::kLong);
  if (at::isComplexType(out) || !to_redux(out).has_value() || !is_supported_input(t)) return false;
  std::optional<c10::DimVector> dim;
  if (dims && !args[1].isNone()) dim = args[1].toDimVector();
  const bool keepdim = dims && args[2].toBool();
  answer(s, n, sum_op().call(x, dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, keepdim, dtype));
  return true;
}

// aten::mean / mean.dim: redux::mean where the switch's _mean calls it (a
// floating result dtype redux gives, an input dtype it reads).
bool mean_of(Stack &s, bool dims) {
  const size_t n = dims ? 4 : 2;
  const auto args = torch::jit::last(s, n);
  const at::Tensor &x = args[0].toTensor();
  const auto dtype = optional_dtype(args[n - 1]);
  if (!computes_in(dtype.value_or(x.scalar_type())) || !is_supported_input(x.scalar_type())) return false;
  std::optional<c10::DimVector> dim;
  if (dims && !args[1].isNone()) dim = args[1].toDimVector();
  const bool keepdim = dims && args[2].toBool();
  answer(s, n, mean_op().call(x, dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, keepdim, dtype));
  return true;
}

using SoftmaxFn = at::Tensor(const at::Tensor &, int64_t, std::optional<at::ScalarType>);

const c10::TypedOperatorHandle<SoftmaxFn> &softmax_op(bool log_form) {
  static const auto softmax = c10::Dispatcher::singleton().findSchemaOrThrow("redux::softmax", "").typed<SoftmaxFn>();
  static const auto log_softmax =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::log_softmax", "").typed<SoftmaxFn>();
  return log_form ? log_softmax : softmax;
}

// aten::_softmax / _log_softmax(self, dim, half_to_float): redux::softmax /
// log_softmax for the dtypes redux computes in (float32 results for half_to_float).
bool softmax_of(Stack &s, bool log_form) {
  const auto args = torch::jit::last(s, 3);
  const at::Tensor &x = args[0].toTensor();
  if (!computes_in(x.scalar_type())) return false;
  const std::optional<at::ScalarType> dtype = args[2].toBool() ? std::optional(at::kFloat) : std::nullopt;
  answer(s, 3, softmax_op(log_form).call(x, args[1].toInt(), dtype));
  return true;
}

// aten::_softmax_backward_data / _log_softmax_backward_data(grad, output,
// dim, input_dtype): redux::_exp_rows_backward (op 0 or 1) where the
// switch's _exp_rows_backward takes the call: along the last dim, the
// gradient of the output's shape and dtype, rows a row kernel takes.
bool exp_rows_backward(Stack &s, int64_t op) {
  static const auto handle = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("redux::_exp_rows_backward", "")
                                 .typed<at::Tensor(const at::Tensor &, const at::Tensor &, int64_t)>();
  const auto args = torch::jit::last(s, 4);
  const at::Tensor &grad = args[0].toTensor(), &out = args[1].toTensor();
  const int64_t ndim = out.dim(), dim = args[2].toInt();
  if (ndim == 0 || dim < -ndim || dim >= ndim || (dim + ndim) % ndim != ndim - 1) return false;
  if (!row_kernel_reads(out.scalar_type()) || grad.scalar_type() != out.scalar_type() ||
      grad.sizes() != out.sizes() || out.size(-1) < 1 || out.size(-1) > kRowKernelMaxN)
    return false;
  const at::ScalarType input_dtype = args[3].toScalarType();
  answer(s, 4, handle.call(grad, out, op).to(input_dtype));
  return true;
}

// aten::amax / amin(self, dim, keepdim): redux::amax / amin, every call
// but those of an empty input (the switch's kernel hands the others to it,
// errors included; an empty one of a dtype torch has no loop for, it answers).
bool extreme_of(Stack &s, redux_extreme which) {
  const auto args = torch::jit::last(s, 3);
  if (args[0].toTensor().numel() == 0) return false;
  const c10::DimVector dim = args[1].toDimVector();
  answer(s, 3, extreme_op(which).call(args[0].toTensor(), dim, args[2].toBool()));
  return true;
}

using NormFn = at::Tensor(const at::Tensor &, const at::Scalar &, at::OptionalIntArrayRef, bool,
                          std::optional<at::ScalarType>);

// aten::linalg_vector_norm(self, ord, dim, keepdim, dtype): redux::vector_norm
// for the floating dtypes redux computes in.
bool vector_norm_of(Stack &s) {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::vector_norm", "").typed<NormFn>();
  const auto args = torch::jit::last(s, 5);
  const at::Tensor &x = args[0].toTensor();
  if (!computes_in(x.scalar_type())) return false;
  std::optional<c10::DimVector> dim;
  if (!args[2].isNone()) dim = args[2].toDimVector();
  const at::Scalar ord = args[1].toScalar();
  answer(s, 5, handle.call(x, ord, dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, args[3].toBool(),
                           optional_dtype(args[4])));
  return true;
}

using Fast = bool (*)(Stack &);
struct Route {
  const char *name;  // the aten overload
  Fast fast;
};
constexpr Route kRoutes[] = {
    {"sum", [](Stack &s) { return sum_of(s, false); }},
    {"sum.dim_IntList", [](Stack &s) { return sum_of(s, true); }},
    {"mean", [](Stack &s) { return mean_of(s, false); }},
    {"mean.dim", [](Stack &s) { return mean_of(s, true); }},
    {"_softmax", [](Stack &s) { return softmax_of(s, false); }},
    {"_log_softmax", [](Stack &s) { return softmax_of(s, true); }},
    {"_softmax_backward_data", [](Stack &s) { return exp_rows_backward(s, 0); }},
    {"_log_softmax_backward_data", [](Stack &s) { return exp_rows_backward(s, 1); }},
    {"amax", [](Stack &s) { return extreme_of(s, REDUX_MAX); }},
    {"amin", [](Stack &s) { return extreme_of(s, REDUX_MIN); }},
    {"linalg_vector_norm", vector_norm_of},
};

// An argument as the switch's Python kernel receives it (as torch's Python
// kernels do): a ScalarType as a torch.dtype, the rest as torch converts them.
py::object as_python(const c10::Argument &a, const c10::IValue &v) {
  c10::TypePtr type = a.real_type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  if (type->kind() == c10::TypeKind::ScalarTypeType && v.isInt())
    return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject *>(torch::getTHPDtype(v.toScalarType())));
  return torch::jit::toPyObject(v);
}

bool python_running() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// One op's kernel: the fast path, else the Python fallback, called with the
// schema's positional and keyword-only arguments and returning a Tensor.
class RoutedKernel final : public c10::OperatorKernel {
 public:
  RoutedKernel(Fast fast, PyObject *fallback) : fast_(fast), fallback_(fallback) { Py_INCREF(fallback_); }
  ~RoutedKernel() override {
    if (python_running()) {  // else the interpreter is going: its objects go with it
      const PyGILState_STATE gil = PyGILState_Ensure();
      Py_DECREF(fallback_);
      PyGILState_Release(gil);
    }
  }
  RoutedKernel(const RoutedKernel &) = delete;
  RoutedKernel &operator=(const RoutedKernel &) = delete;

  void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet, Stack *stack) {
    if (fast_(*stack)) return;
    const auto &arguments = op.schema().arguments();
    const size_t n = arguments.size();
    py::gil_scoped_acquire gil;
    py::list args;
    py::dict kwargs;
    const auto values = torch::jit::last(*stack, n);
    for (size_t i = 0; i < n; ++i) {
      py::object v = as_python(arguments[i], values[i]);
      if (arguments[i].kwarg_only()) kwargs[py::str(arguments[i].name())] = v;
      else args.append(v);
    }
    py::object out = py::reinterpret_borrow<py::object>(fallback_)(*py::tuple(args), **kwargs);
    TORCH_CHECK(THPVariable_Check(out.ptr()), "redux's switch: the Python kernel of ", op.schema().name(),
                " returned ", Py_TYPE(out.ptr())->tp_name, ", not a Tensor");
    answer(*stack, n, THPVariable_Unpack(out.ptr()));
  }

 private:
  Fast fast_;
  PyObject *fallback_;
};

constexpr const char *kCapsule = "redux.switch_routes";

// The capsule's pointer: the registrations, null once removed.
struct Routes {
  std::unique_ptr<torch::Library> library;
};

// A handle dropped without unroute(): the registrations go with it, but not
// while the interpreter shuts down (the dispatcher may outlive it).
void free_routes(PyObject *capsule) {
  if (python_running()) delete static_cast<Routes *>(PyCapsule_GetPointer(capsule, kCapsule));
}

}  // namespace

PyObject *route_aten(PyObject *, PyObject *fallbacks) {
  HANDLE_TH_ERRORS
  TORCH_CHECK_TYPE(PyDict_Check(fallbacks), "redux._C.route_aten: argument 'fallbacks' must be a dict, got ",
                   Py_TYPE(fallbacks)->tp_name);
  auto routes = std::make_unique<Routes>();
  routes->library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", std::nullopt, __FILE__, __LINE__);
  PyObject *key, *fallback;
  Py_ssize_t pos = 0;
  while (PyDict_Next(fallbacks, &pos, &key, &fallback)) {
    TORCH_CHECK_TYPE(PyUnicode_Check(key) && PyCallable_Check(fallback),
                     "redux._C.route_aten: argument 'fallbacks' must map op names to callables");
    const std::string name = PyUnicode_AsUTF8(key);
    const Route *route = nullptr;
    for (const Route &r : kRoutes)
      if (name == r.name) route = &r;
    TORCH_CHECK(route != nullptr, "redux._C.route_aten: no C++ kernel for aten::", name);
    for (const c10::DispatchKey k : {c10::DispatchKey::CPU, c10::DispatchKey::CUDA})
      routes->library->impl(name.c_str(), torch::dispatch(k, torch::CppFunction::makeFromBoxedFunctor(
                                                                 std::make_unique<RoutedKernel>(route->fast, fallback))));
  }
  return PyCapsule_New(routes.release(), kCapsule, free_routes);
  END_HANDLE_TH_ERRORS
}

PyObject *unroute(PyObject *, PyObject *handle) {
  HANDLE_TH_ERRORS
  auto *routes = static_cast<Routes *>(PyCapsule_GetPointer(handle, kCapsule));
  if (routes == nullptr) return nullptr;  // not route_aten's handle: the capsule's TypeError/ValueError
  routes->library.reset();
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}

PyObject *routed_in_cpp(PyObject *, PyObject *) {
  PyObject *names = PyTuple_New(static_cast<Py_ssize_t>(std::size(kRoutes)));
  if (names == nullptr) return nullptr;
  Py_ssize_t i = 0;
  for (const Route &r : kRoutes) {
    PyObject *name = PyUnicode_FromString(r.name);
    if (name == nullptr) {
      Py_DECREF(names);
      return nullptr;
    }
    PyTuple_SET_ITEM(names, i++, name);
  }
  return names;
}

}  // namespace redux_shim
