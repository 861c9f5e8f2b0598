/* The one internal header for code outside csrc/cuda that rebuilds a
 * family's kernels from the product's own pieces: the exported competition
 * submission (leaderboard/export.py) and the measuring tools (bench/). Not a
 * stable API: it is whatever the families use today.
 *   redux/redux.h, redux/reduce.cuh  the C API and the device primitives
 *   common.cuh     block size, cache-hint rule, launch errors
 *   dispatch.cuh   dtype dispatch;  workspace.cuh  counters and partials
 *   grid.cuh       grid sizing;     finish.cuh     ticket and polled finishes
 *   chunk_plan.cuh  the full/rows family's plan and tree constants
 *   families.h     the family launchers
 */
#ifndef REDUX_CUDA_INTERNAL_CUH
#define REDUX_CUDA_INTERNAL_CUH

#include "common.cuh"
#include "dispatch.cuh"
#include "families.h"
#include "finish.cuh"
#include "chunk_plan.cuh"
#include "grid.cuh"
#include "workspace.cuh"

#endif /* REDUX_CUDA_INTERNAL_CUH */
