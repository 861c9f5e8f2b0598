// What the composites' row kernels share (redux::_exp_rows,
// redux::_moment_rows, redux::_sum_squares_rows): the dtypes they read, the
// longest row they are given, and when a composite takes one.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "redux/redux.h"

namespace redux_shim {

// The longest row a row kernel takes whole: a row is one block's (CUDA) or
// one thread's (CPU) work, so _exp_rows and _moment_rows cut longer ones
// into pieces (cut_into_pieces) and the others leave them to redux::sum's
// trees. The choice depends on the shape alone, so the bits do too. Python
// reads it through redux._C.row_kernel_max_n().
constexpr int64_t kRowKernelMaxN = 1 << 16;

// The dtypes a row kernel reads and writes (Python: redux._C.row_kernel_dtypes()).
constexpr at::ScalarType kRowKernelDtypes[] = {at::kFloat, at::kHalf, at::kBFloat16};
constexpr const char *kRowKernelDtypeNames = "float32, float16 or bfloat16";
bool row_kernel_reads(at::ScalarType t);

// True where a row kernel computes the op over x's `reduced` dims (sorted,
// as reduced_dims gives them): x's trailing dims (the last alone, several,
// or all: a full reduction is one row), n, their product, of 1 to
// kRowKernelMaxN, a dtype it reads, a device it runs on (CPU, CUDA, meta),
// and no gradient recorded through the call (a call below autograd, as the
// switch's, records none).
bool takes_row_kernel(const at::Tensor &x, const std::vector<int64_t> &reduced);

// As takes_row_kernel, for rows of any length: the ops that cut longer
// rows into pieces inside (_exp_rows, _moment_rows: cut_into_pieces).
bool takes_row_op(const at::Tensor &x, const std::vector<int64_t> &reduced);

// Whether the row ops (_exp_rows, _moment_rows) cut rows of n into pieces
// (redux.h, long rows), their fp64 results combined by a second kernel.
inline bool cut_into_pieces(int64_t n) { return n > kRowKernelMaxN; }
// fp64 room for `per_piece` results of every piece of [rows, n], on like's device.
at::Tensor row_pieces_buffer(const at::Tensor &like, int64_t rows, int64_t n, int64_t per_piece);

// x as the [..., n] rows a row kernel reads: its reduced (trailing) dims
// flattened into one.
at::Tensor as_rows(const at::Tensor &x, const std::vector<int64_t> &reduced);

// A row kernel's per-row result r (x's leading dims) in the reduction's
// shape: the reduced dims dropped, or kept as size 1 when keepdim.
at::Tensor reduced_shape(const at::Tensor &r, const std::vector<int64_t> &reduced, bool keepdim);

// True where redux::_centered_cols computes a composite over x's `reduced`
// dims: consecutive dims that do not end at x's last (those are rows), x
// not empty, a dtype the kernels read, a device they run on (CPU, CUDA,
// meta), no gradient recorded through the call.
bool takes_col_op(const at::Tensor &x, const std::vector<int64_t> &reduced);
// x as the [outer, n, inner] _centered_cols reads (a view where x is dense).
at::Tensor as_cols(const at::Tensor &x, const std::vector<int64_t> &reduced);
// t (any shape of x's kept dims' count of elements, as the keepdim
// reductions give) as the [outer, inner] _centered_cols takes.
at::Tensor as_col_centers(const at::Tensor &t, const at::Tensor &x, const std::vector<int64_t> &reduced);
// _centered_cols's [outer, inner] result r in the reduction's shape: x's
// kept dims, and size-1 reduced ones when keepdim.
at::Tensor cols_reduced_shape(const at::Tensor &r, const at::Tensor &x, const std::vector<int64_t> &reduced,
                              bool keepdim);

// x - shift in the wide dtype (shift's), a new tensor: the composites'
// deviations and shifted values. On the CPU a whole-tensor cast, then the
// subtraction in place: torch's mixed-dtype broadcasting arithmetic is
// several times slower there. On CUDA (or for x already wide) the
// subtraction is one pass. The same values either way.
at::Tensor shifted_wide(const at::Tensor &x, const at::Tensor &shift);

// The least work a CPU thread is given at a time, in elements: less costs
// more in handing out than it saves.
constexpr int64_t kCpuPieceElements = 32768;

// A CPU row kernel over rows [0, rows) of length n: kernel(begin, end) on
// torch's intra-op threads, in pieces of at least kCpuPieceElements (a row
// is one call's, so the bits do not depend on the thread count); a failed
// status raises, naming op.
void run_cpu_rows(const char *op, int64_t rows, int64_t n,
                  const std::function<redux_status(int64_t begin, int64_t end)> &kernel);

}  // namespace redux_shim
