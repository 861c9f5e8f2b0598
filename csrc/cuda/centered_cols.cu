/* Column sums about a center (redux.h, redux_cuda_centered_cols): var, std
 * and logsumexp of [outer, n, inner] along n, the reduced dim strided; and
 * the column softmaxes (redux_cuda_exp_cols) from the same sums.
 *
 * chunks kernel  a thread owns VEC adjacent columns of one chunk (VEC: 16
 *                bytes where x is 16-byte aligned and inner a multiple of
 *                it, else 1) and adds the chunk's rows in row order,
 *                kCenteredUnroll rows' loads in flight; threads t, t + 1,
 *                ... own adjacent column vectors, so a warp's loads are
 *                contiguous. Its chunk sums go to the partials.
 * finish kernel  a block is 32 columns x REDUX_CENTERED_RUNS threads:
 *                thread (column, run) adds its run of the column's chunk
 *                sums, the run-0 thread then the runs in order and writes
 *                the result (for a softmax, the column's factor in fp64).
 * apply kernel   a softmax's outputs: a thread owns the chunks kernel's
 *                columns and rows and writes each element's output.
 * Each column's additions are redux.h's tree: VEC, the grid and the block
 * change no bits.
 */
#include <math.h>

#include "dispatch.cuh"
#include "exp64.cuh"
#include "grid.cuh"
#include "rows.cuh"

namespace redux {
namespace {

constexpr int kCenteredUnroll = 8; /* rows' loads in flight per thread: changes no bits */

/* One element's term: (v - c)^2 with the product rounded (as the C code's,
 * which never fuses), or exp(v - c). */
template <redux_centered OP> __device__ __forceinline__ double centered_term(float v, double c) {
  const double d = (double)v - c;
  if constexpr (OP == REDUX_CENTERED_SQUARES) return __dmul_rn(d, d);
  else return exp64(d);
}

/* The center a column's terms take: the exponentials' shifts by a finite one only. */
template <redux_centered OP> __device__ __forceinline__ double centered_shift(double c) {
  return OP == REDUX_CENTERED_EXPS && !isfinite(c) ? 0.0 : c;
}

template <typename T, int VEC, redux_centered OP>
__global__ void __launch_bounds__(kBlock)
centered_chunks_kernel(const T *__restrict__ x, const double *__restrict__ center, double *__restrict__ partials,
                       redux_shape s, int64_t chunk, int64_t chunks) {
  constexpr bool ALIGNED = VEC > 1;
  const int64_t vecs = s.inner / VEC; /* VEC > 1 only where it divides inner */
  const int64_t items = s.outer * chunks * vecs;
  for (int64_t t = (int64_t)blockIdx.x * kBlock + threadIdx.x; t < items; t += (int64_t)gridDim.x * kBlock) {
    const int64_t col = (t % vecs) * VEC, item = t / vecs, c = item % chunks, o = item / chunks;
    double shift[VEC], acc[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      shift[e] = centered_shift<OP>(center[o * s.inner + col + e]);
      acc[e] = 0.0;
    }
    const int64_t r0 = c * chunk, r1 = r0 + chunk < s.n ? r0 + chunk : s.n;
    const T *p = x + (o * s.n + r0) * s.inner + col;
    int64_t r = r0;
    for (; r + kCenteredUnroll <= r1; r += kCenteredUnroll, p += kCenteredUnroll * s.inner) {
      T v[kCenteredUnroll][VEC];
#pragma unroll
      for (int u = 0; u < kCenteredUnroll; ++u) load_vec<T, VEC, ALIGNED, true>(p + u * s.inner, v[u]);
#pragma unroll
      for (int u = 0; u < kCenteredUnroll; ++u)
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc[e] += centered_term<OP>(to_float<T>(v[u][e]), shift[e]);
    }
    for (; r < r1; ++r, p += s.inner) {
      T v[VEC];
      load_vec<T, VEC, ALIGNED, true>(p, v);
#pragma unroll
      for (int e = 0; e < VEC; ++e) acc[e] += centered_term<OP>(to_float<T>(v[e]), shift[e]);
    }
    double *out = partials + item * s.inner + col;
#pragma unroll
    for (int e = 0; e < VEC; ++e) out[e] = acc[e];
  }
}

constexpr int kFinishColumns = kBlock / REDUX_CENTERED_RUNS;

/* What the finish writes for a column from its total: OP's result, or a
 * column softmax's factor 1 / S or log(S) (NaN where the maximum is not finite). */
enum finish_form { FINISH_SQUARES, FINISH_LOGSUMEXP, FINISH_SOFTMAX, FINISH_LOG_SOFTMAX };

template <int FORM> __device__ __forceinline__ double finished(double total, double c, double divisor, int root) {
  if constexpr (FORM == FINISH_SQUARES) {
    const double v = total / divisor;
    return root ? sqrt(v) : v;
  } else if constexpr (FORM == FINISH_LOGSUMEXP) {
    return log(total) + centered_shift<REDUX_CENTERED_EXPS>(c);
  } else {
    if (!isfinite(c)) return __longlong_as_double(0x7ff8000000000000LL); /* the C code's NAN */
    return FORM == FINISH_SOFTMAX ? 1.0 / total : log(total);
  }
}

template <typename Out, int FORM>
__global__ void __launch_bounds__(kBlock)
centered_finish_kernel(const double *__restrict__ partials, const double *__restrict__ center, Out *__restrict__ y,
                       redux_shape s, int64_t chunks, double divisor, int root) {
  __shared__ double runs[REDUX_CENTERED_RUNS][kFinishColumns];
  const int tx = threadIdx.x % kFinishColumns, run = threadIdx.x / kFinishColumns;
  const int64_t per = ceil_div(chunks, REDUX_CENTERED_RUNS), columns = s.outer * s.inner;
  const int64_t c0 = run * per, c1 = c0 + per < chunks ? c0 + per : chunks;
  /* the loop bound is the block's, so every thread reaches both barriers */
  for (int64_t base = (int64_t)blockIdx.x * kFinishColumns; base < columns;
       base += (int64_t)gridDim.x * kFinishColumns) {
    const int64_t k = base + tx, o = k / s.inner, j = k % s.inner;
    double acc = 0.0;
    if (k < columns) {
      const double *p = partials + o * chunks * s.inner + j;
      for (int64_t c = c0; c < c1; ++c) acc += p[c * s.inner];
    }
    runs[run][tx] = acc;
    __syncthreads();
    if (run == 0 && k < columns) {
      double total = 0.0;
#pragma unroll
      for (int g = 0; g < REDUX_CENTERED_RUNS; ++g) total += runs[g][tx];
      y[k] = from_double<Out>(finished<FORM>(total, center[k], divisor, root));
    }
    __syncthreads();
  }
}

/* One output: exp(v - c') * f (softmax) or (v - c') - f (log_softmax), f the column's factor. */
template <redux_exp_op OP> __device__ __forceinline__ double softmax_output(float v, double shift, double f) {
  const double d = (double)v - shift;
  if constexpr (OP == REDUX_EXP_SOFTMAX) return exp64(d) * f;
  else return d - f;
}

template <typename T, int VEC, redux_exp_op OP>
__global__ void __launch_bounds__(kBlock)
exp_cols_apply_kernel(const T *__restrict__ x, const double *__restrict__ center, const double *__restrict__ by,
                      T *__restrict__ y, redux_shape s, int64_t chunk, int64_t chunks) {
  constexpr bool ALIGNED = VEC > 1;
  const int64_t vecs = s.inner / VEC;
  const int64_t items = s.outer * chunks * vecs;
  for (int64_t t = (int64_t)blockIdx.x * kBlock + threadIdx.x; t < items; t += (int64_t)gridDim.x * kBlock) {
    const int64_t col = (t % vecs) * VEC, item = t / vecs, c = item % chunks, o = item / chunks;
    double shift[VEC], f[VEC];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      shift[e] = centered_shift<REDUX_CENTERED_EXPS>(center[o * s.inner + col + e]);
      f[e] = by[o * s.inner + col + e];
    }
    const int64_t r0 = c * chunk, r1 = r0 + chunk < s.n ? r0 + chunk : s.n;
    const int64_t at = (o * s.n + r0) * s.inner + col;
    const T *p = x + at;
    T *q = y + at;
#pragma unroll 4
    for (int64_t r = r0; r < r1; ++r, p += s.inner, q += s.inner) {
      T v[VEC], out[VEC];
      load_vec<T, VEC, ALIGNED, true>(p, v);
#pragma unroll
      for (int e = 0; e < VEC; ++e) out[e] = from_double<T>(softmax_output<OP>(to_float<T>(v[e]), shift[e], f[e]));
      if constexpr (ALIGNED) store_vec16<T>(q, out);
      else q[0] = out[0];
    }
  }
}

/* The chunks kernel's launch: x read as 16-byte vectors where it may be (vec); its items. */
template <typename T, redux_centered OP>
redux_status launch_chunks(const T *x, const double *center, double *partials, redux_shape s, redux_dtype t,
                           bool vec, cudaStream_t stream) {
  constexpr int V = vec_of<T>::value;
  const int64_t chunk = redux_centered_cols_chunk(s, t), chunks = redux_centered_cols_chunks(s, t);
  const int64_t items = s.outer * chunks * (vec ? s.inner / V : s.inner);
  auto sums = vec ? centered_chunks_kernel<T, V, OP> : centered_chunks_kernel<T, 1, OP>;
  sums<<<grid_for(sums, ceil_div(items, kBlock), 0), kBlock, 0, stream>>>(x, center, partials, s, chunk, chunks);
  return launch_status();
}

template <typename Out, int FORM>
redux_status launch_finish(const double *partials, const double *center, Out *y, redux_shape s, redux_dtype t,
                           double divisor, int root, cudaStream_t stream) {
  auto finish = centered_finish_kernel<Out, FORM>;
  finish<<<grid_for(finish, ceil_div(s.outer * s.inner, kFinishColumns), 0), kBlock, 0, stream>>>(
      partials, center, y, s, redux_centered_cols_chunks(s, t), divisor, root);
  return launch_status();
}

/* Whether [outer, n, inner] of T at x is read as 16-byte vectors. */
template <typename T> bool reads_vectors(const void *x, redux_shape s) {
  return (uintptr_t)x % 16 == 0 && s.inner % vec_of<T>::value == 0;
}

template <typename T, redux_centered OP>
redux_status launch(const void *x, const double *center, double *partials, void *y, redux_shape s, redux_dtype t,
                    double divisor, int root, cudaStream_t stream) {
  const redux_status first =
      launch_chunks<T, OP>(static_cast<const T *>(x), center, partials, s, t, reads_vectors<T>(x, s), stream);
  if (first != REDUX_OK) return first;
  constexpr int FORM = OP == REDUX_CENTERED_SQUARES ? FINISH_SQUARES : FINISH_LOGSUMEXP;
  return launch_finish<T, FORM>(partials, center, static_cast<T *>(y), s, t, divisor, root, stream);
}

template <typename T, redux_exp_op OP>
redux_status launch_exp_cols(const void *x, const double *center, double *partials, double *by, void *y,
                             redux_shape s, redux_dtype t, cudaStream_t stream) {
  constexpr int V = vec_of<T>::value;
  const T *xt = static_cast<const T *>(x);
  const bool vec = reads_vectors<T>(x, s) && (uintptr_t)y % 16 == 0;
  redux_status status = launch_chunks<T, REDUX_CENTERED_EXPS>(xt, center, partials, s, t, vec, stream);
  if (status != REDUX_OK) return status;
  constexpr int FORM = OP == REDUX_EXP_SOFTMAX ? FINISH_SOFTMAX : FINISH_LOG_SOFTMAX;
  status = launch_finish<double, FORM>(partials, center, by, s, t, 1.0, 0, stream);
  if (status != REDUX_OK) return status;
  const int64_t chunk = redux_centered_cols_chunk(s, t), chunks = redux_centered_cols_chunks(s, t);
  const int64_t items = s.outer * chunks * (vec ? s.inner / V : s.inner);
  auto apply = vec ? exp_cols_apply_kernel<T, V, OP> : exp_cols_apply_kernel<T, 1, OP>;
  apply<<<grid_for(apply, ceil_div(items, kBlock), 0), kBlock, 0, stream>>>(xt, center, by, static_cast<T *>(y), s,
                                                                             chunk, chunks);
  return launch_status();
}

}  // namespace
}  // namespace redux

extern "C" redux_status redux_cuda_centered_cols(redux_centered op, const void *x, const double *center,
                                                 double *partials, void *y, redux_shape shape, redux_dtype t,
                                                 double divisor, int root, void *stream) {
  using namespace redux;
  if (shape.outer < 1 || shape.n < 1 || shape.inner < 1) return REDUX_ERR_SHAPE;
  if (op != REDUX_CENTERED_SQUARES && op != REDUX_CENTERED_EXPS) return REDUX_ERR_SHAPE;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return with_row_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return op == REDUX_CENTERED_SQUARES
               ? launch<T, REDUX_CENTERED_SQUARES>(x, center, partials, y, shape, t, divisor, root, s)
               : launch<T, REDUX_CENTERED_EXPS>(x, center, partials, y, shape, t, divisor, root, s);
  });
}

extern "C" redux_status redux_cuda_exp_cols(redux_exp_op op, const void *x, const double *center, double *partials,
                                            double *by, void *y, redux_shape shape, redux_dtype t, void *stream) {
  using namespace redux;
  if (shape.outer < 1 || shape.n < 1 || shape.inner < 1) return REDUX_ERR_SHAPE;
  if (op != REDUX_EXP_SOFTMAX && op != REDUX_EXP_LOG_SOFTMAX) return REDUX_ERR_SHAPE;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return with_row_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return op == REDUX_EXP_SOFTMAX ? launch_exp_cols<T, REDUX_EXP_SOFTMAX>(x, center, partials, by, y, shape, t, s)
                                   : launch_exp_cols<T, REDUX_EXP_LOG_SOFTMAX>(x, center, partials, by, y, shape, t, s);
  });
}
