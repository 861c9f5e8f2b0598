#!/usr/bin/env bash
# Sweep of the full-sum kernel's build constants (sum_full.cu) with the
# variant timer: each CONFIG is "MIN_BLOCKS:TARGET:UNROLL". Run on the GPU.
set -uo pipefail
CONFIGS=${CONFIGS:-"5:2048:4 5:1024:4 5:640:4 6:1024:4 6:768:4 4:1024:8 4:512:8"}
for c in $CONFIGS; do
  IFS=: read -r mb t u <<< "$c"
  nvcc -O3 -std=c++17 -arch=sm_90a -DREDUX_CHUNKS_MIN_BLOCKS=$mb -DREDUX_CHUNKS_TARGET=$t -DREDUX_CHUNKS_UNROLL=$u \
    -Iinclude -Icsrc/cuda leaderboard/microbench/variants.cu csrc/cuda/*.cu csrc/cpu/status.c -o /tmp/v_${mb}_${t}_${u} &
done
wait
for c in $CONFIGS; do
  IFS=: read -r mb t u <<< "$c"
  VARIANTS_SECTIONS=sum VARIANTS_ONLY_REDUX=1 /tmp/v_${mb}_${t}_${u} | grep -v memset
done
