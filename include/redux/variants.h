/* The one table of redux's sum variants: every op the harness scores, the
 * tests check and the README lists. One numbering, from 1: the rungs of the
 * classic reduction ladder, then the product.
 *
 * X(RUNG, ID, NAME, DETERMINISTIC, IDEA):
 *   RUNG           its number on the ladder
 *   ID             the C enum suffix (REDUX_RUNG_<ID>)
 *   NAME           the op in the torch.ops.redux namespace
 *   DETERMINISTIC  1: the bits depend only on the input, never on the grid,
 *                  the GPU, the stream or the run
 *   IDEA           one line: what the variant does
 * C (redux/redux.h's enum), the shim (op schemas and registrations) and
 * Python (redux.VARIANTS, read from the compiled table) all expand it. */
#ifndef REDUX_VARIANTS_H
#define REDUX_VARIANTS_H

/* Rungs: 1-D float32 CUDA tensors only (csrc/cuda/ladder.cu). */
#define REDUX_LADDER_RUNGS(X)                                                                              \
  X(1, ATOMIC_NAIVE, sum_atomic_naive, 0, "one fp64 atomicAdd per element into a single cell")              \
  X(2, SMEM_TREE, sum_smem_tree, 0, "shared-memory tree per block, one atomic per block")                   \
  X(3, WARP_SHUFFLE, sum_warp_shuffle, 0,                                                                   \
    "warp-shuffle reduce, per-warp results in shared memory, one atomic per block")                         \
  X(4, GRID_STRIDE, sum_grid_stride, 0,                                                                     \
    "device-sized grid, each thread sums many elements in registers first (grid-stride), one atomic per block") \
  X(5, TWO_PASS, sum_two_pass, 1, "a fixed grid of per-block partials, then a second one-block kernel")     \
  X(6, VEC4, sum_vec4, 0, "rung 4 with 16-byte float4 loads")                                               \
  X(7, LAST_BLOCK, sum_last_block, 0,                                                                       \
    "rung 6 in a single pass: per-block partials, the last block (integer ticket) combines them")           \
  X(8, CUB, sum_cub, 0, "cub::DeviceReduce::Sum, float accumulation (the library choice)")

/* The product: torch.sum's semantics (any dims, dtypes, CPU and CUDA). */
#define REDUX_PRODUCT_VARIANTS(X)                                                                          \
  X(9, SUM, sum, 1,                                                                                         \
    "redux.sum: torch.sum semantics; a shape-fixed chunk count, fp64 accumulation, 16-byte loads, "       \
    "single pass: polled-slot finish up to 64 MiB, last-block ticket above, no memset")

#endif /* REDUX_VARIANTS_H */
