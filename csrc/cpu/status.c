/* Backend-neutral parts of the C API (redux.h). */
#include "redux/redux.h"

const char *redux_status_string(redux_status s) {
  switch (s) {
    case REDUX_OK: return "ok";
    case REDUX_ERR_DTYPE: return "no kernel for this (input, output) dtype pair";
    case REDUX_ERR_SHAPE: return "invalid shape, grid or workspace";
    case REDUX_ERR_CUDA: return "CUDA launch or runtime error";
  }
  return "unknown status";
}

int redux_dtype_pair_supported(redux_dtype in, redux_dtype out) {
#define REDUX_PAIR_MATCHES(IN, OUT) \
  if (in == REDUX_##IN && out == REDUX_##OUT) return 1;
  REDUX_DTYPE_PAIRS(REDUX_PAIR_MATCHES)
#undef REDUX_PAIR_MATCHES
  return 0;
}

int redux_reduction_supported(redux_reduction r, redux_dtype in, redux_dtype out) {
  if (r == REDUX_SUM_OF_VALUES) return redux_dtype_pair_supported(in, out);
#define REDUX_PAIR_MATCHES(IN, OUT) \
  if (in == REDUX_##IN && out == REDUX_##OUT) return 1;
  if (r == REDUX_MEAN_OF_VALUES) {
    REDUX_MEAN_PAIRS(REDUX_PAIR_MATCHES)
  }
#define REDUX_IF_MAPPED(VALUE, NAME)   \
  if (r == VALUE) {                    \
    REDUX_MAPPED_PAIRS(REDUX_PAIR_MATCHES) \
  }
  REDUX_MAPPED_REDUCTIONS(REDUX_IF_MAPPED)
#undef REDUX_IF_MAPPED
#undef REDUX_PAIR_MATCHES
  return 0;
}
