#!/usr/bin/env bash
# The GPU run, in steps chosen by STEPS (default "build test leaderboard"):
#   build        build for TORCH_CUDA_ARCH_LIST (default 9.0) with MAX_JOBS=16
#   test         the whole pytest suite but the compile-only tests/test_archs.py (CUDA tests must run, not skip);
#                SLICE=NAME runs one slice instead, each sized to finish inside one
#                10-minute device call (the whole suite took 390 s + 160 s on an H200
#                and did not fit one call on the H100 hosts seen):
#                  core    test_bit_identity test_cuda_tree test_contracts
#                  export  test_popcorn (compiles the exported file with load_inline)
#                  sums    test_sum test_fuzz test_reliability test_ladder
#                  switch  test_switch test_versus
#                  rest    every other file but test_archs and test_distributed
#                  multi   test_distributed (needs two GPUs)
#   compare      redux.sum vs torch.sum on the six competition sizes
#   shapes       python -m leaderboard shapes (the performance targets)
#   versus       python -m leaderboard versus with the two comparison entries
#                (bench/entries), leaderboard mode, 100 runs: the record's
#                command (issue 15); versus.json and the table go to $OUT
#   variants     bench/variants.cu: design variants and load patterns,
#                timed the competition's way (nvcc, no torch)
#   sweep        bench/sweep.sh for each family in SWEEP
#                (default "cols rows"): the build constants varied
#   sanitize     tests/sanitize.sh (four compute-sanitizer tools; summary only)
#   leaderboard  python -m leaderboard -> $OUT/leaderboard/
#   eval         the exported one-file submission through the popcorn
#                evaluator (test, benchmark, leaderboard), beside torch.sum
#                (SUBS overrides the list of submission files)
# REQUIRE_GPU=TEXT runs nothing (exit 3) unless the GPU's name holds TEXT:
# a call that may land on another kind than the one asked for (an H200 run
# asked for and an H100 given) costs seconds instead of a wrong-GPU run.
# Logs go under $OUT (the device tool returns at most 8 files).
set -uo pipefail
OUT=${OUT:-/tmp/redux_out}
STEPS=${STEPS:-build test leaderboard}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16}
has() { [[ " $STEPS " == *" $1 "* ]]; }
if [[ -n ${REQUIRE_GPU:-} ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  if [[ $gpu != *"$REQUIRE_GPU"* ]]; then
    echo "device_check: the GPU is '$gpu', not a '$REQUIRE_GPU': nothing run" >&2
    exit 3
  fi
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
if has build; then
  rm -rf build redux/_C*.so
  ( time python3 setup.py build_ext --inplace ) > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  grep -E "^redux:" "$OUT/build.log"
  ldd redux/_C*.so | grep -E "libstdc"
fi
# The slices of the suite (SLICE, see above): test files, tests/ implied.
declare -A SLICES=(
  [core]="test_bit_identity test_cuda_tree test_contracts"
  [export]="test_popcorn"
  [sums]="test_sum test_fuzz test_reliability test_ladder"
  [switch]="test_switch test_versus"
  [multi]="test_distributed"
)
slice_files() {  # the files of slice $1, one per line
  if [[ $1 == rest ]]; then
    local named=" test_archs test_distributed ${SLICES[*]} " f
    for f in tests/test_*.py; do f=$(basename "$f" .py); [[ $named == *" $f "* ]] || echo "tests/$f.py"; done
  elif [[ -n ${SLICES[$1]:-} ]]; then
    local f; for f in ${SLICES[$1]}; do echo "tests/$f.py"; done
  else
    echo "device_check: SLICE must be one of: ${!SLICES[*]} rest (got '$1')" >&2; return 1
  fi
}
if has test; then
  # tests/test_archs.py is nvcc work for five architectures (CPU time, run by
  # CI); left out here to keep a GPU run inside the device tool's 10 minutes.
  if [[ -n ${SLICE:-} ]]; then
    files=$(slice_files "$SLICE") || exit 2
    # shellcheck disable=SC2086
    python3 -m pytest $files -q -ra ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest_$SLICE.log" | tail -${TEST_TAIL:-8}
  else
    python3 -m pytest tests -q -ra --ignore=tests/test_archs.py ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest.log" |
      tail -${TEST_TAIL:-8}
  fi
fi
if has compare; then  # the harness with redux.sum only (torch.sum is always scored)
  python3 -m leaderboard --ops sum --no-plot --out "$OUT/compare" 2>/tmp/compare.err | tee "$OUT/compare.txt"
fi
if has shapes; then
  python3 -m leaderboard shapes --json "$OUT/shapes.json" --plot "$OUT/shapes.png" ${SHAPES_ARGS:-} 2>&1 | tee "$OUT/shapes.txt"
fi
if has versus; then
  python3 -m leaderboard versus bench/entries/atomic_fp32.py bench/entries/chunked_fp32.py --mode leaderboard \
    --runs 100 --out "$OUT" > "$OUT/versus.txt" 2>&1
  echo "versus exit=$?"; tail -22 "$OUT/versus.txt"
fi
if has variants; then
  nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda bench/variants.cu csrc/cuda/*.cu \
    csrc/cpu/status.c -o /tmp/variants && /tmp/variants > "$OUT/variants.txt" 2>&1
  grep -E "^(read|empty|memset)|redux|sum_last_block|cub" "$OUT/variants.txt"
fi
if has sweep; then
  for fam in ${SWEEP:-cols rows}; do
    bash bench/sweep.sh "$fam" 2>&1 | tee "$OUT/sweep_$fam.txt" | grep -E "^(==|cols|rows|sum)"
  done
fi
if has sanitize; then
  OUT=/tmp/sanitize bash -c 'mkdir -p /tmp/sanitize; bash tests/sanitize.sh'
fi
if has leaderboard; then
  ( time python3 -m leaderboard --out "$OUT/leaderboard" ${LEADERBOARD_ARGS:-} ) 2>/tmp/leaderboard.err \
    | tee "$OUT/leaderboard.txt"
fi
if has eval; then
  python3 -m leaderboard export --out "$OUT/submission.py"
  for sub in ${SUBS:-"$OUT/submission.py" tests/solutions/torch_sum.py}; do
    for mode in test benchmark leaderboard; do
      file=leaderboard/benchmarks.txt; [ $mode = test ] && file=leaderboard/tests.txt
      POPCORN_FD=3 python3 -m leaderboard evaluate $mode $file --submission "$sub" \
        3> "$OUT/popcorn_$(basename $sub .py)_$mode.txt"
      echo "$(basename $sub) $mode exit=$?"
    done
  done
  for f in "$OUT"/popcorn_*_benchmark.txt "$OUT"/popcorn_*_leaderboard.txt; do
    echo "== $(basename $f)"; grep -E "^(benchmark\.[0-9]+\.(spec|mean)|check)" "$f" | paste - - | head -8
  done
fi
