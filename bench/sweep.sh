#!/usr/bin/env bash
# Sweep of a kernel family's build constants with the variant timer
# (bench/variants.cu), on the GPU. Usage: bash bench/sweep.sh full|cols|rows
#   full: CONFIGS of "kChunksMinBlocks:kChunksTarget:kUnroll"           (full_plan.cuh)
#   cols: CONFIGS of "kColsMinBlocks:kColsFinishBatch:kColsUnroll:kColsTargetItems:kColsClusterMax:
#         kColsMinRowsPerThread" (sum_cols.cu; kColsClusterMax 0 turns the cluster finish off)
#   rows: CONFIGS of "kRowsUnroll"                                       (sum_rows.cu)
# The product has no build knobs: each configuration is a copy of csrc/cuda
# in a temporary folder with those constexpr values rewritten, so a sweep
# never touches product code. Builds in parallel, then times one binary at
# a time. Constants that are part of the reduction tree change the bits.
# SED="expr": a sed expression applied to the family's file in every copy
# (a launch choice that is not a constant), checked to change the file.
set -uo pipefail
cd "$(dirname "$0")/.."
FAMILY=${1:-full}
case $FAMILY in
  full) FILE=full_plan.cuh; NAMES=(kChunksMinBlocks kChunksTarget kUnroll); SECTION=sum
        DEFAULT="5:1024:4 4:1024:8 4:512:8" ;;
  cols) FILE=sum_cols.cu
        NAMES=(kColsMinBlocks kColsFinishBatch kColsUnroll kColsTargetItems kColsClusterMax kColsMinRowsPerThread)
        SECTION=cols DEFAULT="4:4:8:512:0:32 4:4:8:512:8:32" ;;
  rows) FILE=sum_rows.cu; NAMES=(kRowsUnroll); SECTION=rows DEFAULT="4 8" ;;
  *) echo "usage: $0 full|cols|rows" >&2; exit 2 ;;
esac
CONFIGS=${CONFIGS:-$DEFAULT}
WORK=$(mktemp -d)
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
  nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -I"$dir" bench/variants.cu "$dir"/*.cu csrc/cpu/status.c \
    -o "$dir/variants" &
done
wait
for c in $CONFIGS; do
  echo "== $FAMILY ${NAMES[*]} = ${c//:/ }${SED:+ (sed: $SED)}"
  VARIANTS_SECTIONS=$SECTION VARIANTS_ONLY_REDUX=1 "$WORK/${c//:/_}/variants" | grep -v memset
done
rm -rf "$WORK"
