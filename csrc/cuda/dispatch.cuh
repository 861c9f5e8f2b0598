/* The (input, output) dtype dispatch of the CUDA families (internal to
 * csrc/cuda): dispatch_pair instantiates a launcher for every pair of
 * REDUX_DTYPE_PAIRS (redux.h); acc_bytes gives a pair's accumulator size. */
#ifndef REDUX_CUDA_DISPATCH_CUH
#define REDUX_CUDA_DISPATCH_CUH

#include "common.cuh"

namespace redux {

/* The C++ element type of a redux_dtype. */
template <redux_dtype T> struct dtype_type;
template <> struct dtype_type<REDUX_F32> { using type = float; };
template <> struct dtype_type<REDUX_F64> { using type = double; };
template <> struct dtype_type<REDUX_F16> { using type = __half; };
template <> struct dtype_type<REDUX_BF16> { using type = __nv_bfloat16; };
template <> struct dtype_type<REDUX_I64> { using type = int64_t; };

/* Calls f.template operator()<In, Out>() for a supported (input, output)
 * pair: one instantiation per entry of REDUX_DTYPE_PAIRS (redux.h), the one
 * list of pairs. */
template <typename F>
redux_status dispatch_pair(redux_dtype in, redux_dtype out, F &&f) {
#define REDUX_DISPATCH_PAIR(IN, OUT)                                   \
  if (in == REDUX_##IN && out == REDUX_##OUT)                          \
    return f.template operator()<typename dtype_type<REDUX_##IN>::type, \
                                 typename dtype_type<REDUX_##OUT>::type>();
  REDUX_DTYPE_PAIRS(REDUX_DISPATCH_PAIR)
#undef REDUX_DISPATCH_PAIR
  return REDUX_ERR_DTYPE;
}

template <typename F> struct sum_policy_of_pair {
  F &f;
  template <typename In, typename Out>
  redux_status operator()() const {
    return f.template operator()<reduce_policy<In, Out, REDUX_SUM_OF_VALUES>>();
  }
};
/* dispatch_policy of the sum alone: what only sums use (the sharded
 * partials and their finish) instantiates no other reduction. */
template <typename F>
redux_status dispatch_sum(redux_dtype in, redux_dtype out, F &&f) {
  return dispatch_pair(in, out, sum_policy_of_pair<F>{f});
}

/* Calls f.template operator()<P>() with P = reduce_policy<In, Out, R> for
 * reduction r of a supported (input, output) pair (redux_reduction_supported):
 * the policy is the trees' one parameter. REDUX_SUM_ONLY (the single-file
 * export) builds the sum alone. */
template <typename F>
redux_status dispatch_policy(redux_reduction r, redux_dtype in, redux_dtype out, F &&f) {
  if (r == REDUX_SUM_OF_VALUES) return dispatch_sum(in, out, f);
#ifndef REDUX_SUM_ONLY
#define REDUX_DISPATCH_MAPPED(IN, OUT)                                                                   \
  if (in == REDUX_##IN && out == REDUX_##OUT) {                                                          \
    using In = typename dtype_type<REDUX_##IN>::type;                                                    \
    using Out = typename dtype_type<REDUX_##OUT>::type;                                                  \
    if (r == REDUX_SUM_OF_ABS) return f.template operator()<reduce_policy<In, Out, REDUX_SUM_OF_ABS>>(); \
    if (r == REDUX_SUM_OF_SQUARES)                                                                       \
      return f.template operator()<reduce_policy<In, Out, REDUX_SUM_OF_SQUARES>>();                      \
  }
  REDUX_MAPPED_PAIRS(REDUX_DISPATCH_MAPPED)
#undef REDUX_DISPATCH_MAPPED
#define REDUX_DISPATCH_MEAN(IN, OUT)                                                          \
  if (r == REDUX_MEAN_OF_VALUES && in == REDUX_##IN && out == REDUX_##OUT)                   \
    return f.template operator()<reduce_policy<typename dtype_type<REDUX_##IN>::type,        \
                                               typename dtype_type<REDUX_##OUT>::type, REDUX_MEAN_OF_VALUES>>();
  REDUX_MEAN_PAIRS(REDUX_DISPATCH_MEAN)
#undef REDUX_DISPATCH_MEAN
#endif
  return REDUX_ERR_DTYPE;
}

struct acc_bytes_fn {
  size_t *bytes;
  template <typename In, typename Out>
  redux_status operator()() const {
    *bytes = sizeof(typename sum_policy<In, Out>::acc_t);
    return REDUX_OK;
  }
};

/* Bytes of the accumulator of an (input, output) pair; 0 if unsupported. */
inline size_t acc_bytes(redux_dtype in, redux_dtype out) {
  size_t bytes = 0;
  dispatch_pair(in, out, acc_bytes_fn{&bytes});
  return bytes;
}

}  // namespace redux

#endif /* REDUX_CUDA_DISPATCH_CUH */
