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
  if (in == out) return in >= REDUX_F32 && in <= REDUX_I64;
  return (in == REDUX_F16 && out == REDUX_F32) || (in == REDUX_BF16 && out == REDUX_F32) ||
         (in == REDUX_F32 && out == REDUX_F64);
}
