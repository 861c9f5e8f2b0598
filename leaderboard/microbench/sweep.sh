#!/usr/bin/env bash
# Sweep of a kernel family's build constants with the variant timer
# (variants.cu), on the GPU. Usage: bash sweep.sh full|cols|rows
#   full: CONFIGS of "MIN_BLOCKS:TARGET:UNROLL"             (sum_full.cu's REDUX_CHUNKS_*)
#   cols: CONFIGS of "MIN_BLOCKS:FINISH_BATCH:UNROLL:TARGET:CLUSTER_MAX" (sum_cols.cu's
#         REDUX_COLS_*; CLUSTER_MAX 0 turns the cluster finish off)
#   rows: CONFIGS of "UNROLL" (sum_rows.cu's REDUX_ROWS_UNROLL)
# Builds in parallel, then times one binary at a time.
set -uo pipefail
FAMILY=${1:-full}
case $FAMILY in
  full) NAMES=(REDUX_CHUNKS_MIN_BLOCKS REDUX_CHUNKS_TARGET REDUX_CHUNKS_UNROLL); SECTION=sum
        DEFAULT="5:1024:4 4:1024:8 4:512:8" ;;
  cols) NAMES=(REDUX_COLS_MIN_BLOCKS REDUX_COLS_FINISH_BATCH REDUX_COLS_UNROLL REDUX_COLS_TARGET REDUX_COLS_CLUSTER_MAX)
        SECTION=cols DEFAULT="4:4:8:512:0 4:4:8:512:8" ;;
  rows) NAMES=(REDUX_ROWS_UNROLL); SECTION=rows
        DEFAULT="4 8" ;;
  *) echo "usage: $0 full|cols|rows" >&2; exit 2 ;;
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
  echo "== $FAMILY ${NAMES[*]} = ${c//:/ }"
  VARIANTS_SECTIONS=$SECTION VARIANTS_ONLY_REDUX=1 "/tmp/sweep_${FAMILY}_${c//:/_}" | grep -v memset
done
