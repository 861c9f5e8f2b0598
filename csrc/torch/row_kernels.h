// What the composites' row kernels share (redux::_exp_rows,
// redux::_moment_rows, redux::_sum_squares_rows): the dtypes they read, the
// longest row they are given, and when a composite takes one.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "redux/redux.h"

namespace redux_shim {

// The longest row the composites give a row kernel: a row is one block's
// (CUDA) or one thread's (CPU) work, so longer ones go through redux::sum's
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

// As takes_row_kernel, but for n longer than kRowKernelMaxN: a composite
// then cuts each row into pieces of long_row_piece(n) elements (the last
// shorter), gives the pieces to the row kernel in fp64 and combines their
// results by redux::sum, so the bits still depend on values and n alone.
bool takes_long_rows(const at::Tensor &x, const std::vector<int64_t> &reduced);
// The piece length for rows of n > kRowKernelMaxN: about n / 256 (enough
// pieces to fill a GPU), a power of two in [4096, kLongRowPieceMax].
int64_t long_row_piece(int64_t n);
// The longest piece: 8192 float32 elements is the longest row a CUDA block
// reads into its registers once (rows.cuh, row_cache); a longer piece is
// read twice from memory by var's two passes.
constexpr int64_t kLongRowPieceMax = 8192;

// The pieces of x's long rows (takes_long_rows): rows, x as [..., n];
// whole, the full pieces as [rows * per_row, piece]; tail, the shorter last
// piece of each row as [rows, n - per_row * piece], undefined where piece
// divides n.
struct LongRowPieces {
  at::Tensor rows, whole, tail;
  int64_t n, piece, per_row;
};
LongRowPieces long_row_pieces(const at::Tensor &x, const std::vector<int64_t> &reduced);

// x as the [..., n] rows a row kernel reads: its reduced (trailing) dims
// flattened into one.
at::Tensor as_rows(const at::Tensor &x, const std::vector<int64_t> &reduced);

// A row kernel's per-row result r (x's leading dims) in the reduction's
// shape: the reduced dims dropped, or kept as size 1 when keepdim.
at::Tensor reduced_shape(const at::Tensor &r, const std::vector<int64_t> &reduced, bool keepdim);

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
