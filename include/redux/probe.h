/* The read-bandwidth probe: a harness facility, not part of the sum API.
 * The leaderboard times it to report every sum against the fastest pure
 * read of the same bytes (the "read floor"). */
#ifndef REDUX_PROBE_H
#define REDUX_PROBE_H

#include <stdint.h>

#include "redux/redux.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The probe's load patterns (the fastest differs by GPU and size). */
enum redux_probe_pattern {
  REDUX_PROBE_GRID_STRIDE = 0, /* resident blocks, grid-stride, 4 loads in flight a thread */
  REDUX_PROBE_PIECES = 1       /* a block per 16 KB piece, one load a thread */
};

/* Floats of `sink` a probe of n floats with `pattern` writes (one per block
 * it launches on the current device). */
int64_t redux_cuda_read_probe_sink_len(int64_t n, int pattern);
/* Reads the first n / 4 * 4 of n floats (x 16-byte aligned, 16-byte loads)
 * and writes one float per block to `sink`. Not a sum. evict_first != 0:
 * evict-first loads (what the sums use up to 256 MiB), else ordinary loads.
 * REDUX_ERR_SHAPE for a misaligned x, n < 4 or an unknown pattern. */
redux_status redux_cuda_read_probe(const float *x, int64_t n, float *sink, int evict_first, int pattern,
                                   void *stream);

#ifdef __cplusplus
}
#endif

#endif /* REDUX_PROBE_H */
