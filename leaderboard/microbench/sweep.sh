#!/usr/bin/env bash
# Sweep of a kernel family's build constants with the variant timer
# (variants.cu), on the GPU. Usage: bash sweep.sh [full|cols]
#   full: CONFIGS of "MIN_BLOCKS:TARGET:UNROLL"      (sum_full.cu's REDUX_CHUNKS_*)
#   cols: CONFIGS of "MIN_BLOCKS:FINISH_BATCH:UNROLL" (sum_cols.cu's REDUX_COLS_*)
set -uo pipefail
FAMILY=${1:-full}
case $FAMILY in
  full) NAMES=(REDUX_CHUNKS_MIN_BLOCKS REDUX_CHUNKS_TARGET REDUX_CHUNKS_UNROLL); SECTION=sum
        DEFAULT="5:2048:4 5:1024:4 5:640:4 6:1024:4 6:768:4 4:1024:8 4:512:8" ;;
  cols) NAMES=(REDUX_COLS_MIN_BLOCKS REDUX_COLS_FINISH_BATCH REDUX_COLS_UNROLL); SECTION=cols
        DEFAULT="1:1:4 8:1:4 8:4:4 8:2:4 8:4:8 6:4:8 8:4:2" ;;
  *) echo "usage: $0 [full|cols]" >&2; exit 2 ;;
esac
CONFIGS=${CONFIGS:-$DEFAULT}
for c in $CONFIGS; do
  IFS=: read -ra vals <<< "$c"
  flags=()
  for i in "${!NAMES[@]}"; do flags+=("-D${NAMES[$i]}=${vals[$i]}"); done
  nvcc -O3 -std=c++17 -arch=sm_90a "${flags[@]}" -Iinclude -Icsrc/cuda leaderboard/microbench/variants.cu \
    csrc/cuda/*.cu csrc/cpu/status.c -o "/tmp/sweep_${FAMILY}_${c//:/_}" &
done
wait
for c in $CONFIGS; do
  VARIANTS_SECTIONS=$SECTION VARIANTS_ONLY_REDUX=1 "/tmp/sweep_${FAMILY}_${c//:/_}" | grep -v memset
done
