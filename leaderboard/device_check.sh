#!/usr/bin/env bash
# One device run: build for sm_90, run the whole test suite (CUDA tests must
# run, not skip), then the comparison against torch.sum. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/redux_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch; print(torch.__version__, torch.version.cuda)" | tee -a "$OUT/gpu.txt"
rm -rf build redux/_C*.so
( time python3 setup.py build_ext --inplace ) > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
grep -E "^redux:" "$OUT/build.log"
ldd redux/_C*.so | grep -E "libstdc|not found"
python3 -m pytest tests -q -ra ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest.log" | tail -25
[ "${COMPARE:-1}" = 1 ] && python3 -m leaderboard.compare 2>&1 | tee "$OUT/compare.txt"
if [ "${LEADERBOARD:-1}" = 1 ]; then
  ( time python3 -m leaderboard --out "$OUT/leaderboard" ${LEADERBOARD_ARGS:-} ) 2>&1 | tee "$OUT/leaderboard.txt" | grep -v "^\[" | tail -30
fi
if [ "${EVAL:-1}" = 1 ]; then
  # The exported one-file submission through the protocol evaluator, next to
  # torch.sum (tests/solutions/torch_sum.py) measured the same way.
  python3 -m leaderboard export --out "$OUT/submission.py"
  for sub in "$OUT/submission.py" tests/solutions/torch_sum.py; do
    for mode in test benchmark leaderboard; do
      file=leaderboard/benchmarks.txt; [ $mode = test ] && file=leaderboard/tests.txt
      POPCORN_FD=3 python3 -m leaderboard evaluate $mode $file --submission "$sub" \
        3> "$OUT/popcorn_$(basename $sub .py)_$mode.txt"
      echo "$(basename $sub) $mode exit=$?"
    done
  done
  grep -hE "check|mean" "$OUT"/popcorn_*.txt | head -40
fi
