#!/usr/bin/env bash
# Sweep of the columns kernel's build constants (sum_cols.cu): each CONFIG is
# "MIN_BLOCKS:FINISH_BATCH:UNROLL". Run on the GPU.
set -uo pipefail
CONFIGS=${CONFIGS:-"1:1:4 8:1:4 8:4:4 8:2:4 8:4:8 6:4:8 8:4:2"}
for c in $CONFIGS; do
  IFS=: read -r mb b u <<< "$c"
  nvcc -O3 -std=c++17 -arch=sm_90a -DREDUX_COLS_MIN_BLOCKS=$mb -DREDUX_COLS_FINISH_BATCH=$b -DREDUX_COLS_UNROLL=$u \
    -Iinclude -Icsrc/cuda leaderboard/microbench/variants.cu csrc/cuda/*.cu csrc/cpu/status.c -o /tmp/c_${mb}_${b}_${u} &
done
wait
for c in $CONFIGS; do
  IFS=: read -r mb b u <<< "$c"
  VARIANTS_SECTIONS=cols /tmp/c_${mb}_${b}_${u}
done
