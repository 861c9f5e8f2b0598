#!/usr/bin/env bash
# Which values of a kernel family's constants are fastest on this GPU?
# Usage: bash bench/sweep.sh full|cols|rows   (on a GPU machine, from anywhere)
#   full: CONFIGS of "kChunksMinBlocks:kChunksTarget:kUnroll" (chunk_plan.cuh; times bench/full_sum.cu)
#   cols: CONFIGS of "kColsMinBlocks:kColsFinishBatch:kColsUnroll:kColsTargetItems:kColsClusterMax:
#         kColsMinRowsPerThread" (sum_cols.cu; kColsClusterMax 0 turns the cluster finish off;
#         times bench/families.cu)
#   rows: CONFIGS of "kRowsUnroll" (sum_rows.cu; times bench/families.cu)
# The product has no build knobs: each configuration is a copy of csrc/cuda
# in a temporary folder with those constexpr values rewritten, so a sweep
# never touches product code. Builds in parallel, then times one binary at
# a time. Constants that are part of the reduction tree change the bits
# (the programs' reference checks still hold; the digests would not).
# SED="expr": a sed expression applied to the family's file in every copy
# (a launch choice that is not a constant), checked to change the file.
set -uo pipefail
cd "$(dirname "$0")/.."
FAMILY=${1:-full}
case $FAMILY in
  full) FILE=chunk_plan.cuh; NAMES=(kChunksMinBlocks kChunksTarget kUnroll); PROGRAM=full_sum
        RUN_ENV="FULL_SUM_ONLY_REDUX=1"; DEFAULT="4:512:8 4:1024:8 5:512:8" ;;
  cols) FILE=sum_cols.cu
        NAMES=(kColsMinBlocks kColsFinishBatch kColsUnroll kColsTargetItems kColsClusterMax kColsMinRowsPerThread)
        PROGRAM=families RUN_ENV="FAMILIES=cols"; DEFAULT="4:4:8:512:8:32 4:4:8:512:0:32" ;;
  rows) FILE=sum_rows.cu; NAMES=(kRowsUnroll); PROGRAM=families RUN_ENV="FAMILIES=rows"; DEFAULT="4 8" ;;
  *) echo "usage: $0 full|cols|rows" >&2; exit 2 ;;
esac
CONFIGS=${CONFIGS:-$DEFAULT}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for c in $CONFIGS; do
  dir="$WORK/${c//:/_}"
  cp -r csrc/cuda "$dir"
  IFS=: read -ra vals <<< "$c"
  for i in "${!NAMES[@]}"; do
    sed -i "s/\(constexpr [a-z0-9_]* ${NAMES[$i]} = \)[^;]*;/\1${vals[$i]};/" "$dir/$FILE"
    grep -q "constexpr [a-z0-9_]* ${NAMES[$i]} = ${vals[$i]};" "$dir/$FILE" ||
      { echo "sweep: ${NAMES[$i]} not found in $FILE" >&2; exit 1; }
  done
  if [ -n "${SED:-}" ]; then
    cp "$dir/$FILE" "$dir/$FILE.before"
    sed -i "$SED" "$dir/$FILE"
    cmp -s "$dir/$FILE" "$dir/$FILE.before" && { echo "sweep: SED changed nothing in $FILE" >&2; exit 1; }
  fi
  nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -I"$dir" "bench/$PROGRAM.cu" "$dir"/*.cu csrc/cpu/status.c \
    -o "$dir/$PROGRAM" &
done
wait
for c in $CONFIGS; do
  echo "== $FAMILY ${NAMES[*]} = ${c//:/ }${SED:+ (sed: $SED)}"
  env $RUN_ENV "$WORK/${c//:/_}/$PROGRAM"
done
