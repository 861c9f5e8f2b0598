// The one TORCH_LIBRARY block: every schema of the redux namespace, and the
// Python module redux._C: variants() hands the variants table
// (include/redux/variants.h) to redux/variants.py; sum() and mean() are
// redux.sum's and redux.mean's eager entries, packet_sum() and packet_mean()
// the calls of torch.ops.redux.sum and .mean, packet_op() those of the other
// public ops (eager.cpp); route_aten() and
// unroute() the model switch's C++ kernels (switch_routes.cpp).
// Backend implementations: sum_cpu.cpp, sum_cuda.cpp, sum_meta.cpp, mean.cpp,
// sharded*.cpp, ladder*.cpp, probe*.cpp, competition.cpp; autograd: autograd.cpp.
#include <Python.h>
#include <torch/library.h>

#include <iterator>
#include <string>
#include <vector>

#include "eager.h"
#include "ladder.h"
#include "plan.h"
#include "row_kernels.h"
#include "switch_routes.h"
#include "unsupported.h"

namespace {

// redux._C.variants(): ((rung, name, deterministic, general, idea), ...)
// for every variant, in rung order. general: full torch.sum semantics.
PyObject *variants_table(PyObject *, PyObject *) {
  PyObject *rows = PyList_New(0);
  if (rows == nullptr) return nullptr;
  auto add = [&](int rung, const char *name, int deterministic, int general, const char *idea) {
    PyObject *row = Py_BuildValue("(isOOs)", rung, name, deterministic ? Py_True : Py_False,
                                  general ? Py_True : Py_False, idea);
    const bool ok = row != nullptr && PyList_Append(rows, row) == 0;
    Py_XDECREF(row);
    return ok;
  };
  bool ok = true;
#define REDUX_ADD_RUNG(RUNG, ID, NAME, DETERMINISTIC, IDEA) ok = ok && add(RUNG, #NAME, DETERMINISTIC, 0, IDEA);
  REDUX_LADDER_RUNGS(REDUX_ADD_RUNG)
#undef REDUX_ADD_RUNG
#define REDUX_ADD_PRODUCT(RUNG, ID, NAME, DETERMINISTIC, IDEA) ok = ok && add(RUNG, #NAME, DETERMINISTIC, 1, IDEA);
  REDUX_PRODUCT_VARIANTS(REDUX_ADD_PRODUCT)
#undef REDUX_ADD_PRODUCT
  if (!ok) {
    Py_DECREF(rows);
    return nullptr;
  }
  PyObject *table = PyList_AsTuple(rows);
  Py_DECREF(rows);
  return table;
}

// (names of the input dtypes redux reads, names of the dtypes a sum gives),
// as torch spells them ("float32"): plan.h's lists, for redux/switch.py.
PyObject *dtypes_table(PyObject *, PyObject *) {
  std::vector<std::string> reads, sums;
  for (at::ScalarType t : redux_shim::kReadDtypes) {
    reads.emplace_back(c10::getDtypeNames(t).first);  // a std::string or a string_view, by torch release
    if (redux_shim::to_redux(t).has_value()) sums.emplace_back(c10::getDtypeNames(t).first);
  }
  auto as_tuple = [](const std::vector<std::string> &names) -> PyObject * {
    PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(names.size()));
    if (tuple == nullptr) return nullptr;
    for (size_t i = 0; i < names.size(); ++i) {
      PyObject *name = PyUnicode_FromString(names[i].c_str());
      if (name == nullptr) {
        Py_DECREF(tuple);
        return nullptr;
      }
      PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), name);
    }
    return tuple;
  };
  PyObject *r = as_tuple(reads);
  PyObject *s = r ? as_tuple(sums) : nullptr;
  if (s == nullptr) {
    Py_XDECREF(r);
    return nullptr;
  }
  PyObject *pair = PyTuple_Pack(2, r, s);
  Py_DECREF(r);
  Py_DECREF(s);
  return pair;
}

// redux._C.mean_dtypes(): ((result dtype, the sum's dtype), ...) of
// redux.mean for every floating result, as torch spells them.
PyObject *mean_dtypes_table(PyObject *, PyObject *) {
  PyObject *rows = PyList_New(0);
  if (rows == nullptr) return nullptr;
  for (at::ScalarType t : redux_shim::kReadDtypes) {
    if (!redux_shim::to_redux(t).has_value() || !at::isFloatingType(t)) continue;
    const std::string out(c10::getDtypeNames(t).first), wide(c10::getDtypeNames(redux_shim::mean_sum_dtype(t)).first);
    PyObject *row = Py_BuildValue("(ss)", out.c_str(), wide.c_str());
    if (row == nullptr || PyList_Append(rows, row) != 0) {
      Py_XDECREF(row);
      Py_DECREF(rows);
      return nullptr;
    }
    Py_DECREF(row);
  }
  PyObject *table = PyList_AsTuple(rows);
  Py_DECREF(rows);
  return table;
}

PyObject *row_kernel_max_n(PyObject *, PyObject *) { return PyLong_FromLongLong(redux_shim::kRowKernelMaxN); }

PyObject *row_kernel_dtypes(PyObject *, PyObject *) {
  PyObject *names = PyTuple_New(std::size(redux_shim::kRowKernelDtypes));
  if (names == nullptr) return nullptr;
  Py_ssize_t i = 0;
  for (at::ScalarType t : redux_shim::kRowKernelDtypes) {
    PyObject *name = PyUnicode_FromString(std::string(c10::getDtypeNames(t).first).c_str());
    if (name == nullptr) {
      Py_DECREF(names);
      return nullptr;
    }
    PyTuple_SET_ITEM(names, i++, name);
  }
  return names;
}

PyMethodDef kMethods[] = {
    {"dtypes", dtypes_table, METH_NOARGS, "(input dtypes redux reads, dtypes a sum gives), as torch's names."},
    {"mean_dtypes", mean_dtypes_table, METH_NOARGS, "((mean's result dtype, its sum's dtype), ...), torch's names."},
    {"row_kernel_max_n", row_kernel_max_n, METH_NOARGS, "The longest row a row kernel is given (row_kernels.h)."},
    {"row_kernel_dtypes", row_kernel_dtypes, METH_NOARGS, "The dtypes the row kernels read, torch's names."},
    {"variants", variants_table, METH_NOARGS, "The variants table: (rung, name, deterministic, general, idea) rows."},
    {"sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::eager_sum)), METH_FASTCALL,
     "redux.sum's eager entry: sum(input, dim, keepdim, dtype) through the dispatcher (eager.cpp)."},
    {"mean", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::eager_mean)), METH_FASTCALL,
     "redux.mean's eager entry: mean(input, dim, keepdim, dtype) through the dispatcher (eager.cpp)."},
    {"packet_sum", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::packet_sum)),
     METH_FASTCALL | METH_KEYWORDS,
     "torch.ops.redux.sum's call: packet_sum(torch_route, *args, **kwargs) (eager.cpp)."},
    {"packet_mean", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::packet_mean)),
     METH_FASTCALL | METH_KEYWORDS,
     "torch.ops.redux.mean's call: packet_mean(torch_route, *args, **kwargs) (eager.cpp)."},
    {"op_handle", redux_shim::op_handle, METH_O, "A capsule of an op's handle, for packet_op: op_handle(name)."},
    {"packet_op", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::packet_op)),
     METH_FASTCALL | METH_KEYWORDS,
     "A torch.ops.redux packet's call: packet_op(torch_route, op_handle(name), *args, **kwargs) (eager.cpp)."},
    {"sum_shards", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(redux_shim::sum_shards)), METH_FASTCALL,
     "redux.distributed's call of redux._sum_shards: sum_shards(route, *args) (eager.cpp)."},
    {"route_aten", redux_shim::route_aten, METH_O,
     "The switch's C++ kernels: route_aten({aten overload: Python fallback}) -> handle (switch_routes.cpp)."},
    {"unroute", redux_shim::unroute, METH_O, "Removes route_aten's kernels: unroute(handle)."},
    {"routed_in_cpp", redux_shim::routed_in_cpp, METH_NOARGS, "The aten overloads route_aten has kernels for."},
    {nullptr, nullptr, 0, nullptr},
};

}  // namespace

extern "C" {
// `import redux._C` loads this library, which runs the registrations below.
PyObject *PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", "redux native ops", -1, kMethods};
  return PyModule_Create(&module_def);
}
}

// Defines an op with backend kernels and gives it a clear error on the
// backends it has none for. (Composite ops, mean and the competition entry,
// are defined with m.def: their inner calls raise those errors.)
static void define(torch::Library &m, const std::string &schema, const std::vector<at::Tag> &tags = {}) {
  m.def(schema.c_str(), tags);  // parsed here, copied
  redux_shim::refuse_other_backends(m, schema.substr(0, schema.find('(')).c_str());
}

// var, std, var_mean and the one-kernel moments they call.
static void define_moments(torch::Library &m) {
  // torch.var's, torch.std's and torch.var_mean's signatures and semantics,
  // two passes on redux::sum (var.cpp).
  for (const char *name : {"var", "std"})
    define(m, std::string(name) +
                  "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
           {at::Tag::pt2_compliant_tag});
  define(m, "var_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> "
            "(Tensor, Tensor)",
         {at::Tag::pt2_compliant_tag});
  // Internal, one kernel along the last dim (moment_rows*.cpp), results in
  // x's dtype or float64: the variance (or, root, the standard deviation)
  // and the mean, for those; the sum of squares / divisor (or its root), for
  // vector_norm and the switch's rms_norm.
  define(m, "_moment_rows(Tensor x, float divisor, bool root, ScalarType? dtype=None) -> (Tensor, Tensor)",
         {at::Tag::pt2_compliant_tag});
  define(m, "_sum_squares_rows(Tensor x, float divisor, bool root, ScalarType? dtype=None) -> Tensor",
         {at::Tag::pt2_compliant_tag});
  // Internal: _sum_squares_rows of each tensor as one row (a 0-dim result
  // of its dtype, the same bits), for the switch's _foreach_norm: one call
  // (xs not empty: the dispatcher needs a tensor to dispatch on).
  define(m, "_sum_squares_each(Tensor[] xs, float divisor, bool root) -> Tensor[]", {at::Tag::pt2_compliant_tag});
  // Internal: x's [outer, n, inner] column sums about fp64 centers [outer,
  // inner] (centered_cols*.cpp), in x's dtype: of (x - c)^2 over a divisor
  // (op 0; root: its square root), or logsumexp about c (op 1), for var and
  // logsumexp over a dim that is not the last.
  define(m, "_centered_cols(Tensor x, Tensor center, int op, float divisor=1., bool root=False) -> Tensor",
         {at::Tag::pt2_compliant_tag});
  // Internal: softmax (op 0) or log_softmax (1) of x's [outer, n, inner]
  // along n about its fp64 maxima [outer, inner] (centered_cols*.cpp), x's
  // shape and dtype, for those ops along a dim that is not the last.
  define(m, "_exp_cols(Tensor x, Tensor center, int op) -> Tensor", {at::Tag::pt2_compliant_tag});
}

// The ops on redux's sums with torch's signatures beside sum and mean, and
// the one-kernel exponential sums of rows they call.
static void define_composites(torch::Library &m) {
  // torch.amax's and torch.amin's signatures and semantics, on the extreme
  // kernels (extremes*.cpp).
  for (const char *name : {"amax", "amin"})
    define(m, std::string(name) + "(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
           {at::Tag::pt2_compliant_tag});
  // Internal: the largest (largest) or smallest |x| of a floating tensor in
  // one read, for vector_norm's infinity norms where no gradient is recorded.
  define(m, "_extreme_abs(Tensor self, int[1] dim, bool keepdim, bool largest) -> Tensor",
         {at::Tag::pt2_compliant_tag});
  define_moments(m);
  // torch.logsumexp's, torch.softmax's and torch.log_softmax's signatures
  // and semantics, on redux::sum and _exp_rows (exp_sums.cpp).
  define(m, "logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", {at::Tag::pt2_compliant_tag});
  for (const char *name : {"softmax", "log_softmax"})
    define(m, std::string(name) + "(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
           {at::Tag::pt2_compliant_tag});
  // Internal: softmax (op 0), log_softmax (1), logsumexp (2) or the fp64
  // (maximum, sum of exponentials) of each row (3, pieces of long rows)
  // along the last dim in one kernel (exp_rows.cpp), for those composites.
  define(m, "_exp_rows(Tensor x, int op) -> Tensor", {at::Tag::pt2_compliant_tag});
  // Internal: softmax (op 0) or log_softmax (1) of rows from their fp64
  // (maximum, sum of exponentials) parts, given: longer rows' combined ones.
  define(m, "_exp_rows_apply(Tensor x, Tensor parts, int op) -> Tensor", {at::Tag::pt2_compliant_tag});
  // Internal: the backward of the first two from their output and its gradient.
  define(m, "_exp_rows_backward(Tensor grad, Tensor out, int op) -> Tensor", {at::Tag::pt2_compliant_tag});
  // Internal: aten::nll_loss_forward's (loss, total weight) for the model
  // switch, after its argument checks, on redux::sum (nll_loss.cpp).
  define(m, "_nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) -> "
            "(Tensor, Tensor)",
         {at::Tag::pt2_compliant_tag});
  // Internal: x^exponent element by element, the same bits at every place
  // (powers.cpp), for vector_norm's powers and roots of a general p.
  define(m, "_pow_each(Tensor self, float exponent) -> Tensor", {at::Tag::pt2_compliant_tag});
  // torch.linalg.vector_norm's signature and semantics, on redux::sum (norms.cpp).
  define(m, "vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
            "-> Tensor",
         {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY(redux, m) {
  // The product: torch.sum's signature and semantics.
  define(m, "sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // torch.mean's signature and semantics, on redux::sum (mean.cpp).
  m.def("mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  define_composites(m);
  // Internal: the same op with the grid (CUDA blocks) or the number of CPU
  // work pieces forced; grid=0 chooses as redux::sum does. Tests use it to
  // prove the result bits do not depend on the grid.
  define(m, "_sum_grid(Tensor self, int[1]? dim, bool keepdim, ScalarType? dtype, int grid) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // Internal: a mapped reduction on redux::sum's trees (redux_reduction):
  // of="abs" sums |x|, of="square" sums x * x, each element mapped in fp64
  // (dtype: float64 for float32 / float64 self, float32 for float16 /
  // bfloat16). The norms' one read (norms.cpp); no autograd. grid: as
  // _sum_grid's (tests).
  define(m, "_sum_of(Tensor self, int[1]? dim=None, bool keepdim=False, *, str of, ScalarType? dtype=None, "
            "int grid=0) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // Internal: _sum_of of each tensor of xs whole (dim None), its bits, as
  // one 1-D result: the switch's _foreach_norm of tensors longer than a row
  // kernel's rows, one op call for the list (xs not empty).
  define(m, "_sum_of_each(Tensor[] xs, *, str of, ScalarType dtype) -> Tensor", {at::Tag::pt2_compliant_tag});
  // Internal: the mean of a float32 or float64 tensor in one kernel
  // (REDUX_MEAN_OF_VALUES: the sum's tree, the division by n in its
  // finish), the bits of redux::mean's composite; no autograd. redux::mean
  // calls it where no gradient is recorded. grid: as _sum_grid's.
  define(m, "_one_pass_mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, int grid=0) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // The reduction ladder (csrc/cuda/ladder.cu): 1-D float32 CUDA only, each
  // returns the sum as a 0-dim float32 tensor.
  for (const auto &op : redux_shim::kLadderOps) {
    const std::string schema = std::string(op.name) + "(Tensor x) -> Tensor";
    define(m, schema, {at::Tag::pt2_compliant_tag});
  }
  // Internal: the competition entry point custom_kernel (task.h) of
  // csrc/torch/competition.cpp, for the evaluator. Writes into `output`.
  m.def("_competition_custom_kernel(Tensor data, Tensor(a!) output) -> Tensor(a)");
  // Internal: sharded sums (sharded.cpp, redux/distributed.py). A shard of
  // dim 0 as the kernels read it plus the layout (the whole tensor's plan);
  // the partials of units of it (uint8 bytes of the backend's accumulators);
  // the outputs from every unit's partials.
  define(m, "_sum_sharding(Tensor x, int[] global_sizes, int[1]? dim, ScalarType? dtype) -> (Tensor, int[])");
  define(m, "_sum_unit_partials(Tensor view, int[] layout, int unit_begin, int unit_end) -> Tensor");
  define(m, "_sum_from_partials(Tensor partials, int[] layout) -> Tensor");
  // The exact sum of the whole tensor from this rank's shard, given every
  // rank's rows of dim 0: partials, one all-gather over the group, finish
  // (sharded_exact.cpp).
  define(m, "_sum_shards(Tensor x, int[] lengths, int rank, int[1]? dim, bool keepdim, ScalarType? dtype, "
            "str group_name, Device comm_device) -> Tensor");
  // Internal, a harness facility (include/redux/probe.h): streams x once
  // (the read-bandwidth ceiling); not a sum. evict_first: the loads' hint;
  // pattern: "grid-stride" (resident blocks) or "pieces" (a block per 16 KB).
  define(m, "_read_probe(Tensor x, bool evict_first=False, str pattern=\"grid-stride\") -> Tensor");
}
