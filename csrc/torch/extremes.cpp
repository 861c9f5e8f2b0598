// redux::amax and redux::amin, torch.amax's and torch.amin's signatures and
// semantics (dims, keepdim, empty and 0-dim inputs, NaN propagation, torch's
// errors), and redux::_extreme_abs (the largest or smallest |x|: the
// infinity norms where no gradient is recorded), on the extreme kernels. The
// CPU and Meta kernels and the shared argument checks here, the CUDA kernel
// in extremes_cuda.cpp, autograd in C++ below (torch's formula: the gradient
// shared evenly by the elements equal to the result).
#include "extremes.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "autograd_node.h"
#include "row_kernels.h"

namespace redux_shim {

namespace {

// The dtypes torch's amax and amin take: redux's floating sums, every
// integer type torch has a loop for, bool.
constexpr at::ScalarType kExtremeDtypes[] = {at::kFloat, at::kDouble, at::kHalf,  at::kBFloat16, at::kBool,
                                             at::kByte,  at::kChar,   at::kShort, at::kInt,      at::kLong};

bool extreme_reads(at::ScalarType t) {
  return std::find(std::begin(kExtremeDtypes), std::end(kExtremeDtypes), t) != std::end(kExtremeDtypes);
}

// torch's checks, in its order; then the reduced dims (sorted, per dim of self).
std::vector<bool> extreme_spec(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim) {
  const char *name = extreme_name(op);
  TORCH_CHECK(self.defined(), name, ": argument 'self' is an undefined tensor");
  TORCH_CHECK(self.layout() == at::kStrided, name, ": argument 'self' must be a dense (strided) tensor, got layout ",
              self.layout());
  if (op == REDUX_MAX_ABS || op == REDUX_MIN_ABS)
    TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()) && extreme_reads(self.scalar_type()), name,
                                ": argument 'self' has dtype ", self.scalar_type(),
                                ", which is not supported (expected float32, float64, float16 or bfloat16)");
  TORCH_CHECK_NOT_IMPLEMENTED(extreme_reads(self.scalar_type()), name, ": argument 'self' has dtype ",
                              self.scalar_type(),
                              ", which is not supported (expected float32, float64, float16, bfloat16, bool, "
                              "uint8, int8, int16, int32 or int64)");
  const std::vector<int64_t> dims = reduced_dims(name, self, dim);
  if (self.sym_numel() == 0) {  // guards a symbolic size, as torch's own check does
    TORCH_CHECK(!dim.empty(), name, ": expected the reduction dim to be given for an input of no elements "
                "(argument 'dim' is empty)");
    for (int64_t d : dims)
      TORCH_CHECK_INDEX(self.sym_size(d) != 0, name, ": argument 'dim' reduces dimension ", d,
                        ", which has size 0 (a maximum or minimum of nothing)");
  }
  std::vector<bool> reduced(self.dim(), false);
  for (int64_t d : dims) reduced[d] = true;
  return reduced;
}

}  // namespace

const char *extreme_name(redux_extreme op) {
  return op == REDUX_MAX ? "redux.amax" : op == REDUX_MIN ? "redux.amin" : "redux._extreme_abs";
}

const c10::TypedOperatorHandle<ExtremeFn> &extreme_op(redux_extreme op) {
  static const auto amax = c10::Dispatcher::singleton().findSchemaOrThrow("redux::amax", "").typed<ExtremeFn>();
  static const auto amin = c10::Dispatcher::singleton().findSchemaOrThrow("redux::amin", "").typed<ExtremeFn>();
  return op == REDUX_MAX ? amax : amin;
}

const c10::TypedOperatorHandle<ExtremeAbsFn> &extreme_abs_op() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("redux::_extreme_abs", "").typed<ExtremeAbsFn>();
  return handle;
}

ExtremeCall extreme_call(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  const char *name = extreme_name(op);
  extreme_spec(op, self, dim);
  TORCH_CHECK(self.device().is_cpu() || self.device().is_cuda(), name,
              ": argument 'self' must be on a CPU or CUDA device, got ", self.device());
  // Integers and bool go through int64 (their values, exactly); a layout
  // the kernels do not read densely, through a dense copy.
  const std::optional<at::ScalarType> wide =
      at::isFloatingType(self.scalar_type()) ? std::nullopt : std::optional<at::ScalarType>(at::kLong);
  ExtremeCall call;
  call.plan = plan_sum(name, self, dim, keepdim, wide);
  if (call.plan.pieces) call.plan = plan_sum(name, self.contiguous(), dim, keepdim, wide);
  call.t = call.plan.out_t;
  if (call.plan.trivial) {  // no output element (an empty reduced dim was refused above)
    call.result = at::empty(call.plan.result_shape, self.options());
    return call;
  }
  TORCH_CHECK(call.plan.in_t == call.plan.out_t, name, ": internal: the kernel reads and writes one dtype");
  std::tie(call.result, call.kernel_out) = allocate_outputs(call.plan);
  call.run = true;
  return call;
}

at::Tensor extreme_result(ExtremeCall &call, const at::Tensor &self) {
  finish_outputs(call.plan, call.result, call.kernel_out);
  // the kernels' int64 for integers and bool, cast back: exact
  return call.result.scalar_type() == self.scalar_type() ? call.result : call.result.to(self.scalar_type());
}

namespace {

at::Tensor extreme_cpu(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  ExtremeCall call = extreme_call(op, self, dim, keepdim);
  if (!call.run) return call.result;
  const redux_shape s = call.plan.shape;
  const int64_t blocks = (s.inner + REDUX_CPU_COL_BLOCK - 1) / REDUX_CPU_COL_BLOCK;
  const int64_t width = std::min<int64_t>(s.inner, REDUX_CPU_COL_BLOCK);
  // Slices too few for the threads: cut n into segments of at least
  // kCpuPieceElements, then one more call over the segments' extremes.
  const int64_t threads = at::get_num_threads();
  int64_t seg_len = s.n;
  if (s.outer * blocks < 4 * threads && s.n * width >= 2 * kCpuPieceElements) {
    const int64_t least = std::max<int64_t>(1, kCpuPieceElements / width);
    const int64_t cuts = (4 * threads + s.outer * blocks - 1) / (s.outer * blocks);
    seg_len = std::max(least, (s.n + cuts - 1) / cuts);
  }
  const int64_t segs = (s.n + seg_len - 1) / seg_len;
  const void *x = call.plan.input.const_data_ptr();
  at::Tensor parts = segs > 1 ? at::empty({s.outer * segs * s.inner}, call.kernel_out.options()) : call.kernel_out;
  const char *name = extreme_name(op);
  auto pass = [&](const void *in, void *out, redux_shape shape, int64_t seg) {
    const int64_t items = shape.outer * ((shape.n + seg - 1) / seg) * blocks;
    const int64_t cost = std::min(seg, shape.n) * width;  // elements an item reads
    std::atomic<int> failed{REDUX_OK};
    at::parallel_for(0, items, std::max<int64_t>(1, kCpuPieceElements / cost), [&](int64_t b, int64_t e) {
      const redux_status st = redux_cpu_extreme(op, in, out, shape, seg, b, e, call.t);
      if (st != REDUX_OK) failed.store(st);
    });
    check_status(name, (redux_status)failed.load());
  };
  pass(x, parts.mutable_data_ptr(), s, seg_len);
  if (segs > 1) pass(parts.const_data_ptr(), call.kernel_out.mutable_data_ptr(), redux_shape{s.outer, segs, s.inner},
                     segs);
  return extreme_result(call, self);
}

at::Tensor extreme_meta(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  const std::vector<bool> reduced = extreme_spec(op, self, dim);
  return at::empty_symint(result_shape<c10::SymInt>(self.sym_sizes(), reduced, keepdim), self.options());
}

at::Tensor amax_cpu(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_cpu(REDUX_MAX, self, dim, keepdim);
}
at::Tensor amin_cpu(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_cpu(REDUX_MIN, self, dim, keepdim);
}
at::Tensor amax_meta(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_meta(REDUX_MAX, self, dim, keepdim);
}
at::Tensor amin_meta(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_meta(REDUX_MIN, self, dim, keepdim);
}
at::Tensor extreme_abs_cpu(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, bool largest) {
  return extreme_cpu(largest ? REDUX_MAX_ABS : REDUX_MIN_ABS, self, dim, keepdim);
}
at::Tensor extreme_abs_meta(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, bool largest) {
  return extreme_meta(largest ? REDUX_MAX_ABS : REDUX_MIN_ABS, self, dim, keepdim);
}

// ---- autograd ----------------------------------------------------------

using torch::autograd::variable_list;

// r with the reduced dims put back as size 1.
at::Tensor with_reduced_dims(at::Tensor r, const std::vector<int64_t> &dims, bool keepdim) {
  if (!keepdim)
    for (int64_t d : dims) r = r.unsqueeze(d);
  return r;
}

// Which elements the result came from (equal to it), and how many per output.
std::pair<at::Tensor, at::Tensor> ties(const at::Tensor &self, const at::Tensor &result,
                                       const std::vector<int64_t> &dims, bool keepdim) {
  const at::Tensor mask = self.eq(with_reduced_dims(result, dims, keepdim));
  return {mask, sum_op().call(mask, dims, true, std::nullopt)};
}

// torch's gradient of amax / amin: the output's gradient shared evenly by
// the elements equal to the result (a NaN result: equal to none, NaN). The
// ties are piecewise constant in self, so self and the result are kept
// detached (no gradient flows through them, double backward included), with
// their versions, to refuse an in-place change as torch does.
struct ExtremeBackward final : torch::autograd::Node {
  at::Tensor self, result;
  uint32_t self_version = 0, result_version = 0;
  std::vector<int64_t> dims;  // reduced, ascending
  bool keepdim = false;

  variable_list apply(variable_list &&grads) override {
    const at::Tensor &grad = grads[0];
    if (!grad.defined()) return {at::Tensor()};
    TORCH_CHECK(self._version() == self_version && result._version() == result_version,
                "redux::ExtremeBackward: one of the variables needed for gradient computation (the input or the "
                "result of redux.amax / redux.amin) has been modified by an inplace operation");
    const auto [mask, count] = ties(self, result, dims, keepdim);
    return {with_reduced_dims(grad, dims, keepdim).div(count).mul(mask)};
  }
  void release_variables() override {
    self.reset();
    result.reset();
  }
  std::string name() const override { return "redux::ExtremeBackward"; }
};

at::Tensor extreme_autograd(redux_extreme op, const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  auto call = [&](const at::Tensor &x) {
    at::AutoDispatchBelowADInplaceOrView below;
    return extreme_op(op).call(x, dim, keepdim);
  };
  if (self.unsafeGetTensorImpl()->autograd_meta() == nullptr) return call(self);
  const bool record = at::GradMode::is_enabled() && self.requires_grad();
  const bool tangent = torch::autograd::isFwGradDefined(self);
  const std::vector<int64_t> dims =
      record || tangent ? reduced_dims(extreme_name(op), self, dim) : std::vector<int64_t>{};
  at::Tensor out = call(self);
  if (record) {
    auto node = make_node<ExtremeBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(self));
    node->dims = dims;
    node->keepdim = keepdim;
    node->self = self.detach();
    node->result = out.detach();
    node->self_version = self._version();
    node->result_version = out._version();
    torch::autograd::set_history(out, node);
  }
  if (tangent) {
    // torch's forward formula: the mean of the tied elements' tangents
    const auto [mask, count] = ties(self._fw_primal(/*level=*/0), out.detach(), dims, keepdim);
    const at::Tensor t = self._fw_grad(/*level=*/0);
    at::Tensor picked = sum_op().call(at::where(mask, t, at::zeros({}, t.options())), dims, true, std::nullopt);
    picked = picked.div(count);
    if (!keepdim)
      for (auto d = dims.rbegin(); d != dims.rend(); ++d) picked = picked.squeeze(*d);
    out._set_fw_grad(picked, /*level=*/0, /*is_inplace_op=*/false);
  }
  return out;
}

at::Tensor amax_autograd(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_autograd(REDUX_MAX, self, dim, keepdim);
}
at::Tensor amin_autograd(const at::Tensor &self, at::IntArrayRef dim, bool keepdim) {
  return extreme_autograd(REDUX_MIN, self, dim, keepdim);
}

}  // namespace
}  // namespace redux_shim

TORCH_LIBRARY_IMPL(redux, CPU, m) {
  m.impl("amax", &redux_shim::amax_cpu);
  m.impl("amin", &redux_shim::amin_cpu);
  m.impl("_extreme_abs", &redux_shim::extreme_abs_cpu);
}
TORCH_LIBRARY_IMPL(redux, Meta, m) {
  m.impl("amax", &redux_shim::amax_meta);
  m.impl("amin", &redux_shim::amin_meta);
  m.impl("_extreme_abs", &redux_shim::extreme_abs_meta);
}
TORCH_LIBRARY_IMPL(redux, Autograd, m) {
  m.impl("amax", &redux_shim::amax_autograd);
  m.impl("amin", &redux_shim::amin_autograd);
}
