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

/* Blocks the probe launches on the current device (sink_len needed). */
int redux_cuda_read_probe_blocks(void);
/* Reads n floats (x 16-byte aligned, 16-byte loads) and writes one float per
 * block to `sink`. Not a sum. evict_first != 0: evict-first loads (what the
 * sums use up to 256 MiB), else ordinary loads. */
redux_status redux_cuda_read_probe(const float *x, int64_t n, float *sink, int evict_first, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* REDUX_PROBE_H */
