#!/usr/bin/env bash
# Runs every redux CUDA kernel (tests/sanitize_cases.py) under the four
# compute-sanitizer tools. Zero errors expected; exits non-zero otherwise.
# PyTorch's caching allocator is switched off so memcheck sees the bounds of
# each allocation. Logs: $OUT/sanitize_<tool>.log (OUT defaults to /tmp).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
export PYTHONPATH=$PWD PYTORCH_NO_CUDA_MEMORY_CACHING=1
status=0
for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do
  # No --leak-check: Python exits without freeing live tensors, so every
  # tensor alive at exit would count; device-memory growth is tested by the
  # stress test's allocator statistics instead.
  compute-sanitizer --tool $tool --error-exitcode 99 --target-processes all \
    python3 tests/sanitize_cases.py > "$OUT/sanitize_$tool.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$OUT/sanitize_$tool.log" | tail -2 | tr '\n' ' ')
  echo "$tool: exit $rc; $summary; $(grep -o 'sanitize_cases: [0-9]* kernel calls checked' "$OUT/sanitize_$tool.log")"
  [ $rc -ne 0 ] && status=1
done
exit $status
