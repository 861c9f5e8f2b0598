/* redux C API: the contract between the torch shim (csrc/torch) and the
 * kernels (csrc/cuda, csrc/cpu). Plain C: raw pointers, sizes, a stream.
 *
 * Every reduction is one of three shapes (the "plan", made by the shim):
 *   REDUX_FULL    [n]               -> []        (outer = inner = 1)
 *   REDUX_ROWS    [outer, n]        -> [outer]   (reduced dim innermost)
 *   REDUX_COLS    [outer, n, inner] -> [outer, inner]
 * Inputs are dense row-major over that 3-D view; outputs are dense.
 *
 * Determinism: the result bits are a function of the input values, the
 * shape (outer, n, inner), the dtypes and nothing else: not the grid, the
 * GPU, the pointer alignment or the number of CPU threads.
 *
 * Accumulators, chosen by the OUTPUT dtype:
 *   float32 out            -> fp64
 *   float16 / bfloat16 out -> fp32 on CUDA, fp64 on the CPU
 *   float64 out            -> compensated fp64 (hi + lo); on the CPU from
 *                             float32 input: fp64 lanes, unrounded
 *   int64 out              -> int64 (wrapping, like torch)
 */
#ifndef REDUX_REDUX_H
#define REDUX_REDUX_H

#include <stddef.h>
#include <stdint.h>

#include "redux/variants.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum redux_dtype {
  REDUX_F32 = 0,
  REDUX_F64 = 1,
  REDUX_F16 = 2,
  REDUX_BF16 = 3,
  REDUX_I64 = 4
} redux_dtype;

typedef enum redux_status {
  REDUX_OK = 0,
  REDUX_ERR_DTYPE = 1,   /* (input, output) dtype pair has no kernel */
  REDUX_ERR_SHAPE = 2,   /* negative size, or workspace too small or not 16-byte aligned */
  REDUX_ERR_CUDA = 3     /* a CUDA runtime call or launch failed */
} redux_status;

typedef enum redux_family {
  REDUX_FULL = 0,
  REDUX_ROWS = 1,
  REDUX_COLS = 2
} redux_family;

typedef struct redux_shape {
  int64_t outer;  /* independent leading slices */
  int64_t n;      /* reduced length */
  int64_t inner;  /* independent trailing elements (1 unless REDUX_COLS) */
} redux_shape;

/* Human-readable text for a status (static storage). */
const char *redux_status_string(redux_status s);

/* The supported (input, output) dtype pairs, the one list: X(IN, OUT) with
 * the redux_dtype names less their REDUX_ prefix. (t, t) for every dtype,
 * and f16->f32, bf16->f32, f32->f64 widening. Every backend dispatches
 * from this list. */
#define REDUX_DTYPE_PAIRS(X) \
  X(F32, F32)                \
  X(F64, F64)                \
  X(F16, F16)                \
  X(BF16, BF16)              \
  X(I64, I64)                \
  X(F16, F32)                \
  X(BF16, F32)               \
  X(F32, F64)

/* True when a kernel exists for this (input, output) pair. */
int redux_dtype_pair_supported(redux_dtype in, redux_dtype out);

/* What the trees compute: the reduction is a parameter of every family
 * (full, rows, columns) on both backends. REDUX_SUM_OF_VALUES is the sum;
 * the mapped ones map each element first, in the accumulator's precision
 * (fp64 for the pairs below, where the map of a float32, float16 or
 * bfloat16 element is exact), then add by the sum's own tree: the same
 * lanes, order and finish; the mean is the sum's tree with a finish that
 * divides by n. Adding one: its value here, its map or finish in
 * include/redux/reduce.cuh (CUDA) and csrc/cpu/sum_cpu.c (CPU), and the op
 * that calls it. */
typedef enum redux_reduction {
  REDUX_SUM_OF_VALUES = 0,
  REDUX_SUM_OF_ABS = 1,    /* sum of |x|: the 1-norm */
  REDUX_SUM_OF_SQUARES = 2, /* sum of x * x: the squared 2-norm */
  REDUX_MEAN_OF_VALUES = 3  /* the fp64 sum over n, rounded once (design.md: as redux.mean's composite) */
} redux_reduction;

/* The mapped reductions with the names redux::_sum_of takes (its `of`):
 * X(VALUE, NAME). */
#define REDUX_MAPPED_REDUCTIONS(X)  \
  X(REDUX_SUM_OF_ABS, "abs")        \
  X(REDUX_SUM_OF_SQUARES, "square")

/* The (input, output) pairs of the mapped reductions: the floating inputs
 * into their fp64-accumulated outputs (a norm's wide dtype). */
#define REDUX_MAPPED_PAIRS(X) \
  X(F32, F64)                 \
  X(F64, F64)                 \
  X(F16, F32)                 \
  X(BF16, F32)

/* The mean's pairs: the float32 and float64 sums' own accumulators (fp64,
 * compensated fp64), unrounded until the division. */
#define REDUX_MEAN_PAIRS(X) \
  X(F32, F32)               \
  X(F64, F64)

/* True when reduction r has a kernel for this (input, output) pair: every
 * pair of REDUX_DTYPE_PAIRS for the sum, REDUX_MEAN_PAIRS for the mean,
 * REDUX_MAPPED_PAIRS for the others. */
int redux_reduction_supported(redux_reduction r, redux_dtype in, redux_dtype out);

/* Bytes of one element of a dtype (0 for a value outside the enum). */
static inline int64_t redux_dtype_size(redux_dtype t) {
  switch (t) {
    case REDUX_F64: case REDUX_I64: return 8;
    case REDUX_F32: return 4;
    case REDUX_F16: case REDUX_BF16: return 2;
  }
  return 0;
}

/* ---- CPU (csrc/cpu/sum_cpu.c) ------------------------------------------ */

/* Opaque-to-the-shim partial accumulator of the CPU kernels. */
typedef struct redux_cpu_acc {
  double hi;
  double lo;
  int64_t i;
} redux_cpu_acc;

/* Fixed chunk length (elements) of one CPU work item along n. */
#define REDUX_CPU_CHUNK ((int64_t)1 << 15)
/* Columns handled by one CPU work item of the columns family. */
#define REDUX_CPU_COL_BLOCK ((int64_t)256)

/* Which float32 loop this build runs on this CPU: "avx2+fma" (the adds as
 * fused multiply-adds) or "baseline"; both give the same bits. */
const char *redux_cpu_float32_loop(void);
/* The input size (bytes) from which that loop may prefetch far ahead into
 * the L2 (8 KB ahead; from 8x this size, 16 KB ahead) instead of not at
 * all: a quarter of the L3, or the environment's REDUX_CPU_FAR_PREFETCH_BYTES.
 * Whether it does is measured per size class (redux_cpu_prefetch_report).
 * Speed only: no bits depend on it. */
int64_t redux_cpu_far_prefetch_bytes(void);

/* Partial of a contiguous range of `count` input elements. */
redux_status redux_cpu_sum_partial(const void *x, int64_t count,
                                   redux_dtype in, redux_dtype out,
                                   redux_cpu_acc *acc);
/* Combines `count` partials in index order and writes one output element. */
redux_status redux_cpu_sum_combine(const redux_cpu_acc *accs, int64_t count,
                                   redux_dtype out, void *y, int64_t y_index);
/* Rows [row_begin, row_end) of a [outer, n] input, each row whole. */
redux_status redux_cpu_sum_rows(const void *x, void *y, int64_t row_begin, int64_t row_end, int64_t n,
                                redux_dtype in, redux_dtype out);
/* Work items [item_begin, item_end) of a [outer, n, inner] input, each
 * column summed over all n (the tree of a columns problem of one unit);
 * item k is slice k / blocks, columns block (k % blocks) *
 * REDUX_CPU_COL_BLOCK, where blocks = ceil(inner / REDUX_CPU_COL_BLOCK). */
redux_status redux_cpu_sum_cols(const void *x, void *y, redux_shape shape,
                                int64_t item_begin, int64_t item_end,
                                redux_dtype in, redux_dtype out);
/* Rows of n in one unit of a columns problem (see redux_cpu_sum_unit). */
#define REDUX_CPU_COL_CHUNK_ROWS ((int64_t)4096)

/* The CPU reduction tree of a problem, decided here (below the API) like the
 * CUDA one: `items` work items, each writing outputs or `partials`
 * accumulators, then `finishes` finish items (one per output) that combine
 * the partials in index order. Items of a kind are independent: a caller
 * may run them on any threads in any grouping; the bits depend on the shape
 * and dtypes only. The grains are how many items make a piece worth a
 * thread (speed only). */
typedef struct redux_cpu_plan {
  int64_t items;
  int64_t partials; /* redux_cpu_acc the caller provides (0: none) */
  int64_t finishes; /* 0: the items write the outputs */
  int64_t item_grain;
  int64_t finish_grain;
  int64_t units;    /* units along n (redux_cpu_sum_unit) */
  int far_prefetch; /* the float32 loop's software prefetch (speed only):
                       0 none (always under T / 8, T a quarter of the L3 by
                       default: redux_cpu_far_prefetch_bytes), 1 8 KB ahead
                       into the L2, 2 16 KB ahead into the L2 (from twice the
                       L3), 3 8 KB ahead into the L1 */
  int prefetch_trial; /* nonzero: this call is one of the timed trials that
                         choose far_prefetch for its size class; the caller
                         reports its time (redux_cpu_prefetch_report) */
  int reduction;      /* the redux_reduction its items compute */
} redux_cpu_plan;
/* The plan of reduction r (redux_cpu_sum_plan: of the sum). Its items
 * return REDUX_ERR_DTYPE where redux_reduction_supported says no. */
redux_cpu_plan redux_cpu_reduce_plan(redux_reduction r, redux_family family, redux_shape shape, redux_dtype in);
redux_cpu_plan redux_cpu_sum_plan(redux_family family, redux_shape shape, redux_dtype in);
/* The time of a plan's items (all threads, wall clock) over an input of
 * input_bytes into `out`; a no-op unless plan->prefetch_trial and `out` is
 * float-class (the outputs of the only loop that prefetches). After 7
 * trials of each of its three forms (none, far into the L2, 8 KB into the
 * L1), a size class keeps the form of the lowest median time per byte.
 * REDUX_CPU_PREFETCH=size (far from the threshold, unmeasured), =l1 (the L1
 * form from the threshold, unmeasured) or =none turns the measuring off.
 * Thread-safe. */
void redux_cpu_prefetch_report(const redux_cpu_plan *plan, redux_dtype out, int64_t input_bytes, int64_t ns);
/* The form a size class (0: a quarter of the L3 up to twice it, 1: beyond,
 * 2: T / 8 up to T, a 32nd of the L3 up to a quarter by default, measured
 * only) keeps, or -1 while undecided or out of range. */
int redux_cpu_prefetch_choice(int size_class);
/* Work items [begin, end) of `plan` (made for the same family and shape). */
redux_status redux_cpu_sum_items(const redux_cpu_plan *plan, redux_family family, redux_shape shape,
                                 const void *x, void *y, redux_cpu_acc *partials, int64_t begin, int64_t end,
                                 redux_dtype in, redux_dtype out);
/* Finish items [begin, end) of `plan`: output k from its partials, in order. */
redux_status redux_cpu_sum_finish(const redux_cpu_plan *plan, redux_family family, redux_shape shape,
                                  const redux_cpu_acc *partials, void *y, int64_t begin, int64_t end,
                                  redux_dtype out);

/* ---- Sharded sums (both backends; redux.distributed uses them) ----------
 * Both trees cut the reduced dim n into units: unit k holds n-indices
 * [k * U, min((k + 1) * U, n)). The one-device sum adds each unit of each
 * (slice, column) into one partial, then combines a (slice, column)'s
 * partials in unit order. The calls below split that in two, with the same
 * arithmetic: a shard of n that starts and ends on unit boundaries gives
 * exactly the partials the one-device sum makes of those units, and the
 * finish from all of them gives its exact bits.
 * `shape` is the whole problem (it fixes the tree); a caller may hold
 * only `outer_count` <= shape.outer of its slices (a shard of a kept dim):
 * partials are then laid out [outer_count, units, inner] and the finish
 * writes those slices' outputs. A problem of one unit (U == n) has no
 * partials: these calls return REDUX_ERR_SHAPE for it.
 * x of a unit range [u0, u1): a dense [outer_count, min(u1 * U, n) - u0 *
 * U, inner] array holding those rows of n. */

/* U for the CPU tree: n itself when the problem is one unit. */
int64_t redux_cpu_sum_unit(redux_family family, redux_shape shape);
/* Items [item_begin, item_end) of the partials of units [u0, u1): an item
 * is (slice, unit[, columns block]), outer_count * (u1 - u0) * blocks of them
 * (blocks = 1 unless REDUX_COLS); partials: [outer, u1 - u0, inner]. */
redux_status redux_cpu_sum_unit_partials(redux_family family, redux_shape shape, int64_t outer_count,
                                         const void *x, int64_t unit_begin, int64_t unit_end, int64_t item_begin,
                                         int64_t item_end, redux_dtype in, redux_dtype out,
                                         redux_cpu_acc *partials);
/* Outputs [out_begin, out_end) (of outer_count * inner) from all partials. */
redux_status redux_cpu_sum_from_partials(redux_family family, redux_shape shape, int64_t outer_count,
                                         const redux_cpu_acc *partials, void *y, int64_t out_begin,
                                         int64_t out_end, redux_dtype out);

/* ---- CUDA (csrc/cuda) ------------------------------------------------ */

/* Bytes of device workspace redux_cuda_sum needs for this problem (0 when
 * none), 16-byte aligned. The workspace holds the partials (and room for
 * counter words): no two calls that can run at once may share one. Calls in
 * one stream's order may (a caller can keep one per stream, like the
 * counters below); a CUDA graph capture needs its own. */
size_t redux_cuda_sum_workspace_bytes(redux_family family, redux_shape shape,
                                      redux_dtype in, redux_dtype out);
/* The same for a caller that passes `counters_len` zeroed, 16-byte aligned
 * stream counters (below): no room for counter words when they are enough.
 * (With counters that are not aligned, the call needs the full workspace.) */
size_t redux_cuda_sum_workspace_bytes_beside(redux_family family, redux_shape shape, redux_dtype in,
                                             redux_dtype out, size_t counters_len);

/* Counter words (uint32) a call's finish uses: ticket counters that count
 * its last blocks, or the slots of a polled finish; 0 when it needs none.
 * They must be zero when the kernel starts, and every kernel leaves them
 * zero again when it completes. So a caller may keep one zeroed
 * set per stream and pass it to every call on that stream: no zeroing
 * operation per call. Such a set must never be used by work that can run
 * concurrently with the call (another stream, a CUDA graph replayed
 * elsewhere): REDUX_CUDA_STREAM_COUNTERS says how many a caller should keep
 * per stream. */
size_t redux_cuda_sum_counters(redux_family family, redux_shape shape,
                               redux_dtype in, redux_dtype out);
/* Enough for the largest polled sums: a full sum of 256 MiB in 32 KB chunks
 * (a 4-word slot each: 32768 words; csrc/cuda/chunk_plan.cuh checks it), and
 * the column sums that the strips tree finishes from slots (a slot for each
 * 256 rows of each column: 1 Mi words, 4 MiB, cover a (8192, 8192) fp32
 * input; csrc/cuda/sum_cols.cu takes the strips tree only where they fit). */
#define REDUX_CUDA_STREAM_COUNTERS ((size_t)1 << 20)

/* Sums x into y on `stream` (a cudaStream_t). `counters`: NULL, or zeroed
 * counters private to this stream (see redux_cuda_sum_counters) at least
 * `counters_len` long and 16-byte aligned; when NULL, too short or not
 * aligned, counters are carved from the
 * workspace and zeroed with cudaMemsetAsync on the stream first. `grid` > 0
 * forces the number of blocks (tests use it to prove the bits do not depend
 * on it); 0 picks the grid from the device. Requires shape.outer *
 * shape.inner > 0 and shape.n > 0: the shim handles empty problems. */
redux_status redux_cuda_sum(redux_family family, const void *x, void *y,
                            void *workspace, size_t workspace_bytes,
                            unsigned int *counters, size_t counters_len,
                            redux_shape shape, redux_dtype in, redux_dtype out,
                            int grid, void *stream);
/* redux_cuda_sum of reduction r (redux_cuda_sum is r = REDUX_SUM_OF_VALUES):
 * the same trees, workspace and counters; REDUX_ERR_DTYPE where
 * redux_reduction_supported says no. */
redux_status redux_cuda_reduce(redux_reduction r, redux_family family, const void *x, void *y,
                               void *workspace, size_t workspace_bytes, unsigned int *counters,
                               size_t counters_len, redux_shape shape, redux_dtype in, redux_dtype out,
                               int grid, void *stream);

/* Sharded sums on CUDA (see the CPU's above; the same contract, the CUDA
 * tree's units). Partials are accumulators of redux_cuda_sum_partial_bytes
 * each, opaque to the caller; both calls are stream-ordered on `stream`. */
int64_t redux_cuda_sum_unit(redux_family family, redux_shape shape, redux_dtype in);
size_t redux_cuda_sum_partial_bytes(redux_dtype in, redux_dtype out);
redux_status redux_cuda_sum_unit_partials(redux_family family, const void *x, void *partials, redux_shape shape,
                                          int64_t outer_count, int64_t unit_begin, int64_t unit_end,
                                          redux_dtype in, redux_dtype out, void *stream);
redux_status redux_cuda_sum_from_partials(redux_family family, const void *partials, void *y, redux_shape shape,
                                          int64_t outer_count, redux_dtype in, redux_dtype out, void *stream);

/* ---- Exponential sums of rows (csrc/cpu/exp_rows.c, csrc/cuda/exp_rows.cu)
 * x is [rows, n] dense of float32, float16 or bfloat16 (n > 0); each row is
 * read by one thread (CPU) or one block (CUDA), so a row's bits depend only
 * on its values and n: batch-invariant, and independent of the grid and the
 * thread count. Per row: m = max (NaN if any element is), s = the sum of
 * exp(x - m) in fp64 by a fixed tree, then
 *   REDUX_EXP_SOFTMAX      y[i] = exp(x[i] - m) * (1 / s)  y: [rows, n]
 *   REDUX_EXP_LOG_SOFTMAX  y[i] = (x[i] - m) - log(s)      y: [rows, n]
 *   REDUX_EXP_LOGSUMEXP    y = m' + log(s'), m' = m where finite, else 0
 *                          and s' the sum of exp(x - m')   y: [rows]
 * in fp64, one rounding to x's dtype, or, for a row cut into pieces that
 * the caller combines,
 *   REDUX_EXP_PARTS        y[2 row] = m, y[2 row + 1] = s' y: double[2 rows]
 * unrounded. The CPU's exp is redux's own (a table and a fixed polynomial,
 * within 1.3 ulp of fp64), not the C library's. */
typedef enum redux_exp_op {
  REDUX_EXP_SOFTMAX = 0,
  REDUX_EXP_LOG_SOFTMAX = 1,
  REDUX_EXP_LOGSUMEXP = 2,
  REDUX_EXP_PARTS = 3
} redux_exp_op;
/* Their backward from the output y and its gradient g (both [rows, n], of
 * one dtype): s = the fp64 sum over the row, by the same kind of tree, of
 *   REDUX_EXP_SOFTMAX      g[i] * y[i];  dx[i] = y[i] * (g[i] - s)
 *   REDUX_EXP_LOG_SOFTMAX  g[i];         dx[i] = g[i] - exp(y[i]) * s
 * in fp64, one rounding to the dtype. */

/* Rows [row_begin, row_end) of x (the shim fans ranges out over threads). */
redux_status redux_cpu_exp_rows(redux_exp_op op, const void *x, void *y, int64_t row_begin, int64_t row_end,
                                int64_t n, redux_dtype t);
/* Every row, on `stream` (a cudaStream_t). */
redux_status redux_cuda_exp_rows(redux_exp_op op, const void *x, void *y, int64_t rows, int64_t n, redux_dtype t,
                                 void *stream);
/* Softmax or log_softmax (op) of rows whose m and s are given, row r's at
 * parts[2 r] and parts[2 r + 1] (REDUX_EXP_PARTS's layout; for rows cut
 * into pieces, redux_*_exp_rows_combine's): the formulas above, one
 * rounding to x's dtype; a row whose m is not finite is all NaN, as the
 * one-kernel forms give it. */
redux_status redux_cpu_exp_rows_apply(redux_exp_op op, const void *x, const double *parts, void *y, int64_t row_begin,
                                      int64_t row_end, int64_t n, redux_dtype t);
redux_status redux_cuda_exp_rows_apply(redux_exp_op op, const void *x, const double *parts, void *y, int64_t rows,
                                       int64_t n, redux_dtype t, void *stream);
redux_status redux_cpu_exp_rows_backward(redux_exp_op op, const void *g, const void *y, void *dx, int64_t row_begin,
                                         int64_t row_end, int64_t n, redux_dtype t);
redux_status redux_cuda_exp_rows_backward(redux_exp_op op, const void *g, const void *y, void *dx, int64_t rows,
                                          int64_t n, redux_dtype t, void *stream);

/* ---- Moments of rows (csrc/cpu/moment_rows.c, csrc/cuda/moment_rows.cu) --
 * x is [rows, n] dense of float32, float16 or bfloat16 (n > 0); a row is
 * one thread's (CPU) or one warp's or block's (CUDA), so its bits depend
 * only on its values, n and the arguments. Per row, in fp64, each sum by a
 * fixed tree:
 *   centered   mean = (the sum of x) / n, m2 = (the sum of (x - mean)^2) / divisor
 *   otherwise  m2 = (the sum of x^2) / divisor (mean is not written; may be NULL)
 * and sqrt(m2) in place of m2 when root: the variance or standard deviation
 * and the mean, or the mean of squares, its root (rms), or with divisor 1
 * the 2-norm. Each output rounded once to `out` (x's dtype or float64) into
 * m2[row] and mean[row]. */
/* Rows [row_begin, row_end). */
redux_status redux_cpu_moment_rows(const void *x, void *m2, void *mean, int64_t row_begin, int64_t row_end,
                                   int64_t n, redux_dtype t, redux_dtype out, double divisor, int centered,
                                   int root);
/* Every row, on `stream` (a cudaStream_t). */
redux_status redux_cuda_moment_rows(const void *x, void *m2, void *mean, int64_t rows, int64_t n, redux_dtype t,
                                    redux_dtype out, double divisor, int centered, int root, void *stream);
/* `count` rows of their own lengths, each its own dense array: row i is
 * x[i] (n[i] > 0 elements of t) and its result m2[i][0] (of t) is what
 * redux_cuda_moment_rows gives x[i] as a [1, n[i]] problem with out = t,
 * centered = 0, bit for bit. The tables are host arrays, read before this
 * returns; at most one launch per 128 rows of each width (warp, block). */
redux_status redux_cuda_sum_squares_each(const void *const *x, const int64_t *n, void *const *m2, int64_t count,
                                         redux_dtype t, double divisor, int root, void *stream);

/* ---- Long rows in pieces (exp_rows.*, moment_rows.* of both backends) -----
 * A row too long for one thread's or block's fixed tree is cut into
 * redux_row_pieces(n) pieces: piece j of a row holds its elements
 * [j L, min(n, (j + 1) L)), L = redux_row_piece(n), the last piece shorter
 * where L does not divide n. Piece j of row r is result r * P + j (P
 * pieces a row): each piece is one row of the row kernels above, its fp64
 * results unrounded, and a second call combines a row's pieces in a fixed
 * order. The pieces depend on n alone, so a row's bits depend on its
 * values and n alone. */

/* The longest piece: 8192 float32 elements is the longest row a CUDA block
 * reads into its registers once (csrc/cuda/rows.cuh, row_cache). */
#define REDUX_ROW_PIECE_MAX 8192
/* The piece length: about n / 256 (enough pieces to fill a GPU), a power of
 * two in [4096, REDUX_ROW_PIECE_MAX]. */
static inline int64_t redux_row_piece(int64_t n) {
  int64_t piece = 4096;
  while (piece < REDUX_ROW_PIECE_MAX && piece * 2 <= n / 256) piece *= 2;
  return piece;
}
static inline int64_t redux_row_pieces(int64_t n) {
  const int64_t piece = redux_row_piece(n);
  return (n + piece - 1) / piece;
}

/* Each piece's maximum and sum of exponentials: parts[2 i] and parts[2 i + 1]
 * are REDUX_EXP_PARTS of piece i = r P + j, for the pieces [piece_begin,
 * piece_end) (CPU) or all rows * P (CUDA) of [rows, n]. */
redux_status redux_cpu_exp_row_pieces(const void *x, double *parts, int64_t piece_begin, int64_t piece_end,
                                      int64_t n, redux_dtype t);
redux_status redux_cuda_exp_row_pieces(const void *x, double *parts, int64_t rows, int64_t n, redux_dtype t,
                                       void *stream);
/* A row's pieces' parts combined in piece order, in fp64: M = the largest
 * m_j (NaN if any is), M' = M where finite, else 0, S = the sum of
 * s_j exp(w_j - M') with w_j = m_j where finite, else M'. op
 * REDUX_EXP_LOGSUMEXP: y[r] = log(S) + M' rounded once to t; REDUX_EXP_PARTS:
 * y[2 r] = M, y[2 r + 1] = S (double), the whole row's REDUX_EXP_PARTS. */
redux_status redux_cpu_exp_rows_combine(redux_exp_op op, const double *parts, void *y, int64_t row_begin,
                                        int64_t row_end, int64_t n, redux_dtype t);
redux_status redux_cuda_exp_rows_combine(redux_exp_op op, const double *parts, void *y, int64_t rows, int64_t n,
                                         redux_dtype t, void *stream);

/* Each piece's mean and sum of squared deviations from it, in fp64:
 * mean[i] and m2[i] for piece i = r P + j, as redux_*_moment_rows gives a
 * piece (centered, divisor 1, out float64). */
redux_status redux_cpu_moment_row_pieces(const void *x, double *m2, double *mean, int64_t piece_begin,
                                         int64_t piece_end, int64_t n, redux_dtype t);
redux_status redux_cuda_moment_row_pieces(const void *x, double *m2, double *mean, int64_t rows, int64_t n,
                                          redux_dtype t, void *stream);
/* A row's pieces' moments combined by the parallel-moments rule in piece
 * order, in fp64: mean = (the sum of L_j mean_j) / n, M2 = the sum of
 * M2_j + L_j (mean_j - mean)^2 (L_j: piece j's length); m2[r] = M2 / divisor
 * (its root when root) and mean[r] = mean, each rounded once to out (t or
 * float64). */
redux_status redux_cpu_moment_rows_combine(const double *pieces_m2, const double *pieces_mean, void *m2, void *mean,
                                           int64_t row_begin, int64_t row_end, int64_t n, redux_dtype out,
                                           double divisor, int root);
redux_status redux_cuda_moment_rows_combine(const double *pieces_m2, const double *pieces_mean, void *m2, void *mean,
                                            int64_t rows, int64_t n, redux_dtype out, double divisor, int root,
                                            void *stream);

/* ---- Column sums about a center (centered_cols.*: both backends) ---------
 * [outer, n, inner] of t (float32, float16 or bfloat16) along n (n > 0,
 * inner > 0), about a center c per column (center: fp64 [outer, inner]),
 * in fp64, into y: [outer, inner] of t, each result rounded once:
 *   REDUX_CENTERED_SQUARES  S = the sum of (x - c)^2 (the product rounded,
 *                           then the sum: no fused multiply-add);
 *                           y = S / divisor, or its root when root (var, std)
 *   REDUX_CENTERED_EXPS     c' = c where finite, else 0 (torch's rule);
 *                           S = the sum of exp(x - c') (redux's exp);
 *                           y = log(S) + c' (logsumexp)
 * The tree: n is cut into chunks of L = redux_centered_cols_chunk(shape, t)
 * rows; a chunk's rows are added in row order, from zero; a column's chunk
 * sums then in REDUX_CENTERED_RUNS runs of R = ceil(chunks / RUNS)
 * consecutive chunks, each in chunk order, then the runs in order. L depends
 * on the shape and t alone and both backends add in this order, so the bits
 * are the same on the CPU and on every GPU. partials: fp64 room for the
 * chunk sums, [outer, chunks, inner]. */
typedef enum redux_centered {
  REDUX_CENTERED_SQUARES = 0,
  REDUX_CENTERED_EXPS = 1
} redux_centered;

#define REDUX_CENTERED_RUNS 8
/* Chunks enough that outer * chunks * (inner / 16 bytes' elements) work
 * items fill a GPU (about 65536 of them), of at least 32 rows, a power of
 * two (a chunk's sums are 1/16 of its float32 reads or less). */
static inline int64_t redux_centered_cols_chunk(redux_shape s, redux_dtype t) {
  const int64_t vec = 16 / redux_dtype_size(t);
  const int64_t slots = s.outer * ((s.inner + vec - 1) / vec);
  const int64_t wanted = slots >= 65536 ? 1 : (65536 + slots - 1) / slots;
  int64_t rows = 32;
  while (rows < s.n && rows * wanted < s.n) rows *= 2;
  return rows;
}
static inline int64_t redux_centered_cols_chunks(redux_shape s, redux_dtype t) {
  const int64_t rows = redux_centered_cols_chunk(s, t);
  return (s.n + rows - 1) / rows;
}

/* CPU: the chunk sums of items [item_begin, item_end) (item i = o * chunks +
 * c: chunk c of slice o) into partials; then y of columns [col_begin,
 * col_end) (column k = o * inner + j) from all of them. */
redux_status redux_cpu_centered_cols_chunks(redux_centered op, const void *x, const double *center,
                                            double *partials, redux_shape shape, redux_dtype t, int64_t item_begin,
                                            int64_t item_end);
redux_status redux_cpu_centered_cols_finish(redux_centered op, const double *partials, const double *center, void *y,
                                            redux_shape shape, redux_dtype t, double divisor, int root,
                                            int64_t col_begin, int64_t col_end);
/* CUDA: both, two launches on `stream`. */
redux_status redux_cuda_centered_cols(redux_centered op, const void *x, const double *center, double *partials,
                                      void *y, redux_shape shape, redux_dtype t, double divisor, int root,
                                      void *stream);

/* ---- Column softmaxes (centered_cols.*: both backends) -------------------
 * REDUX_EXP_SOFTMAX or REDUX_EXP_LOG_SOFTMAX of [outer, n, inner] of t along
 * n, given each column's maximum c (center: fp64 [outer, inner]): S = the
 * sum of exp(x - c') that REDUX_CENTERED_EXPS takes (c' = c where finite,
 * else 0; the same tree, so the same sums), then
 *   REDUX_EXP_SOFTMAX      y = exp(x - c') * (1 / S)
 *   REDUX_EXP_LOG_SOFTMAX  y = (x - c') - log(S)
 * in fp64, rounded once to t into y ([outer, n, inner]); a column whose c
 * is not finite is all NaN (torch's answer). The CPU and the GPU give the
 * same bits (log_softmax's log: the C library's or CUDA's). */
/* CPU: columns [col_begin, col_end) (column k = o * inner + j). */
redux_status redux_cpu_exp_cols(redux_exp_op op, const void *x, const double *center, void *y, redux_shape shape,
                                redux_dtype t, int64_t col_begin, int64_t col_end);
/* CUDA: the chunk sums into partials (as redux_cuda_centered_cols's), each
 * column's 1 / S or log(S) (NaN where c is not finite) into by (fp64
 * [outer, inner]), then y: three launches on `stream`. */
redux_status redux_cuda_exp_cols(redux_exp_op op, const void *x, const double *center, double *partials, double *by,
                                 void *y, redux_shape shape, redux_dtype t, void *stream);

/* ---- Elementwise powers (csrc/cpu/powers.c) --------------------------------
 * y[i] = x[i]^exponent for i in [begin, end), float32 or float64 in and out
 * (float32: the fp64 power rounded once). One scalar path for every element,
 * so the bits do not depend on an element's place, the batch or the threads:
 * exponents 2, 3, -2, 0.5, -0.5 and -1 by torch's operations for them
 * (products, sqrt, a division), any other by the C library's pow (another
 * C library, or glibc's FMA and non-FMA forms, may round a rare hard case
 * otherwise). x and y may be the same buffer. */
redux_status redux_cpu_pow_each(const void *x, void *y, double exponent, int64_t begin, int64_t end,
                                redux_dtype t);

/* ---- Extremes (csrc/cpu/extremes.c, csrc/cuda/extremes.cu) ---------------
 * The maximum or the minimum of [outer, n, inner] along n (n > 0), in and
 * out of one dtype t: float32, float64, float16, bfloat16 or int64. Exact,
 * so every tree gives the same value; the bits are order-free too (-0 is
 * below +0, any NaN gives the canonical quiet NaN: redux/extremes.h), so they
 * depend on the values alone. */
typedef enum redux_extreme {
  REDUX_MAX = 0,
  REDUX_MIN = 1,
  REDUX_MAX_ABS = 2, /* the largest |x| (an infinity norm), floating t only */
  REDUX_MIN_ABS = 3  /* the smallest |x| */
} redux_extreme;
/* The extremes of segments of n: segs = ceil(n / seg_len) per slice, and
 * y is [outer, segs, inner] (the result when segs is 1; else the same call
 * over y as a [outer, segs, inner] problem finishes). Item k of
 * outer * segs * blocks is slice k / (segs * blocks), segment (k / blocks)
 * % segs, columns block k % blocks of REDUX_CPU_COL_BLOCK columns (blocks =
 * ceil(inner / REDUX_CPU_COL_BLOCK)); the shim fans ranges of items out over
 * threads. */
redux_status redux_cpu_extreme(redux_extreme op, const void *x, void *y, redux_shape shape, int64_t seg_len,
                               int64_t item_begin, int64_t item_end, redux_dtype t);
/* Device workspace (bytes, a multiple of 16) a CUDA call needs: 0 when one
 * pass does it, else the segments' extremes. */
size_t redux_cuda_extreme_workspace_bytes(redux_shape shape, redux_dtype t);
/* The whole reduction on `stream` (a cudaStream_t); grid > 0 forces the
 * blocks of each launch (the bits never depend on it). */
redux_status redux_cuda_extreme(redux_extreme op, const void *x, void *y, void *workspace, size_t workspace_bytes,
                                redux_shape shape, redux_dtype t, int grid, void *stream);

/* ---- The reduction ladder (csrc/cuda/ladder.cu) --------------------------
 * Teaching/scoring rungs of the classic reduction ladder, 1-D float32 in,
 * one float32 out. Every rung accumulates in fp64 (float accumulators fail
 * the competition's check on offset data). Names, numbers and ideas: the
 * variants table, redux/variants.h. */
typedef enum redux_rung {
#define REDUX_RUNG_ENUM(RUNG, ID, NAME, DETERMINISTIC, IDEA) REDUX_RUNG_##ID = RUNG,
  REDUX_LADDER_RUNGS(REDUX_RUNG_ENUM)
#undef REDUX_RUNG_ENUM
  REDUX_RUNG_END /* one past the last rung */
} redux_rung;

size_t redux_cuda_ladder_workspace_bytes(redux_rung rung, int64_t n);
/* y: one float. n > 0. grid > 0 forces the grid of rungs that take one. */
redux_status redux_cuda_ladder_sum(redux_rung rung, const float *x, float *y, int64_t n, void *workspace,
                                   size_t workspace_bytes, int grid, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* REDUX_REDUX_H */
