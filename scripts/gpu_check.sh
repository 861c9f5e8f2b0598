#!/usr/bin/env bash
# Build redux on a GPU machine and run the checks and measurements chosen by
# STEPS (default "build test"), with logs and records under $OUT:
#   build        python setup.py build_ext --inplace for TORCH_CUDA_ARCH_LIST
#                (default 9.0), MAX_JOBS (default 16); the build log, and
#                the product's SASS (cuobjdump -sass) as $OUT/sass.txt with
#                its digest (scripts/sass_digest.py)
#   test         the pytest suite but the compile-only tests/test_archs.py
#                (CI runs that); CUDA tests run, not skip. SLICE="NAME ..." runs
#                those parts of it, in that order, one pytest each:
#                  core    test_bit_identity test_cuda_tree test_contracts
#                  export  test_evaluator (builds exported files with load_inline)
#                  sums    test_sum test_fuzz test_reliability test_ladder
#                  switch  test_switch test_versus
#                  multi   test_distributed (two GPUs for its NCCL tests)
#                  ops     the other reductions' files: test_batching test_centered_cols
#                          test_exp_rows test_exp_sums test_extremes test_mean
#                          test_moment_rows test_norms test_opinfo test_sum_of test_var
#                  rest    every other file
#                NAME+NAME... runs those slices in one pytest, logged as
#                pytest_NAME_NAME.log.
#                PYTEST_ARGS are passed on, split as the shell splits words, quotes
#                kept (e.g. "-n 15" with pytest-xdist, or "-m 'compile or not compile'");
#                the script passes -q itself (one more hides pytest's summary line).
#                Each pytest's exit status is printed as "gpu_check: NAME exit=RC".
#                With -n, the tests marked quiet (they time the host) leave the
#                parallel runs and run alone after them.
#                TEST_BUDGET_S=N: the test step ends within N seconds; a pytest the
#                budget stops is reported incomplete (its summary counts only what
#                ran), one it leaves no time for is reported not run.
#                The script's exit status is 4 when a pytest of this step did not
#                pass, or did not run to its end (the later steps still run).
#   leaderboard  python -m leaderboard -> $OUT/leaderboard/
#   shapes       python -m leaderboard shapes (the performance targets)
#   versus       python -m leaderboard versus with the two comparison entries
#                (bench/entries), leaderboard mode, 100 runs
#   sanitize     tests/sanitize.sh (the four compute-sanitizer tools)
#   eval         the exported submission and torch.sum through the evaluator
#                in test, benchmark and leaderboard modes
#   bench        bench/reads.cu, bench/full_sum.cu, bench/families.cu -> $OUT/bench.txt
#   sweep        bench/sweep.sh for each family in SWEEP (default "cols rows")
#   dist         the NCCL tests (every rank count the machine has GPUs for, up
#                to 4), then bench/distributed.py at 2 ranks and at the
#                machine's GPU count (at most 4) -> $OUT/distributed.txt
#   model        bench/llama_step.py on the GPU at two sizes (the record's) -> $OUT/llama_step.txt
#   ops          bench/ops.py (each reduction against torch's) -> $OUT/ops.txt
# REQUIRE_GPU=TEXT runs nothing (exit 3) unless the GPU's name holds TEXT.
set -uo pipefail
cd "$(dirname "$0")/.."
test_failed=0
OUT=${OUT:-/tmp/redux_out}
STEPS=${STEPS:-build test}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-16}
has() { [[ " $STEPS " == *" $1 "* ]]; }
if [[ -n ${REQUIRE_GPU:-} ]]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  if [[ $gpu != *"$REQUIRE_GPU"* ]]; then
    echo "gpu_check: the GPU is '$gpu', not a '$REQUIRE_GPU': nothing run" >&2
    exit 3
  fi
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
if has build; then
  rm -rf build redux/_C*.so
  ( time python3 setup.py build_ext --inplace ) > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
  grep -E "^redux:" "$OUT/build.log"
  cuobjdump -sass redux/_C*.so > "$OUT/sass.txt" 2>/dev/null && python3 scripts/sass_digest.py "$OUT/sass.txt"
fi
declare -A SLICES=(
  [core]="test_bit_identity test_cuda_tree test_contracts"
  [export]="test_evaluator"
  [sums]="test_sum test_fuzz test_reliability test_ladder"
  [switch]="test_switch test_versus"
  [multi]="test_distributed"
  [ops]="test_batching test_centered_cols test_exp_rows test_exp_sums test_extremes test_mean test_moment_rows test_norms test_opinfo test_sum_of test_var"
)
slice_files() {  # the test files of slice $1 (NAME or NAME+NAME...), one per line
  if [[ $1 == *+* ]]; then
    local part; for part in ${1//+/ }; do slice_files "$part" || return 1; done
  elif [[ $1 == rest ]]; then
    local named=" test_archs ${SLICES[*]} " f
    for f in tests/test_*.py; do f=$(basename "$f" .py); [[ $named == *" $f "* ]] || echo "tests/$f.py"; done
  elif [[ -n ${SLICES[$1]:-} ]]; then
    local f; for f in ${SLICES[$1]}; do echo "tests/$f.py"; done
  else
    echo "gpu_check: SLICE must be one of: ${!SLICES[*]} rest (got '$1')" >&2; return 1
  fi
}
if has test; then
  eval "pytest_args=(${PYTEST_ARGS:-})"
  test_start=$SECONDS
  # run_pytest NAME ARGS...: pytest ARGS within what is left of TEST_BUDGET_S, logged to $OUT/NAME.log
  run_pytest() {
    local name=$1 limit=() left rc; shift
    if [[ -n ${TEST_BUDGET_S:-} ]]; then
      left=$(( TEST_BUDGET_S - (SECONDS - test_start) ))
      if (( left < 20 )); then
        echo "gpu_check: $name not run: TEST_BUDGET_S=$TEST_BUDGET_S is spent"; test_failed=1; return
      fi
      limit=(timeout -s INT "$left")
    fi
    "${limit[@]}" python3 -m pytest "$@" 2>&1 | tee "$OUT/$name.log" | tail -"${TEST_TAIL:-8}"
    rc=${PIPESTATUS[0]}
    if (( rc == 124 )); then
      echo "gpu_check: $name stopped by TEST_BUDGET_S=$TEST_BUDGET_S: incomplete, its summary counts only what ran"
    fi
    echo "gpu_check: $name exit=$rc"  # a summary that -q hides still leaves this line
    (( rc == 0 )) || test_failed=1
  }
  if [[ -n ${SLICE:-} ]]; then
    slices=$SLICE
    for s in $slices; do slice_files "$s" > /dev/null || exit 2; done
  else
    slices=all
  fi
  files_of() { if [[ $1 == all ]]; then echo tests --ignore=tests/test_archs.py; else slice_files "$1"; fi; }
  parallel=0 serial_args=() skip_next=0  # serial_args: PYTEST_ARGS without pytest-xdist's -n
  for a in "${pytest_args[@]}"; do
    if (( skip_next )); then skip_next=0; continue; fi
    case $a in
      -n|--numprocesses) parallel=1 skip_next=1 ;;
      -n*|--numprocesses=*) parallel=1 ;;
      *) serial_args+=("$a") ;;
    esac
  done
  quiet=()
  if (( parallel )); then  # the quiet tests PYTEST_ARGS select, to run alone after the parallel runs
    # shellcheck disable=SC2046
    mapfile -t quiet < <(python3 -m pytest $(for s in $slices; do files_of "$s"; done) --collect-only -q \
                           "${serial_args[@]}" -m quiet 2>/dev/null | grep '::')
  fi
  deselect=(); for t in "${quiet[@]}"; do deselect+=(--deselect "$t"); done
  for s in $slices; do
    name=pytest_${s//+/_}; [[ $s == all ]] && name=pytest  # no "+" in a log's name: plain names copy anywhere
    # shellcheck disable=SC2046
    run_pytest "$name" $(files_of "$s") -q -ra "${pytest_args[@]}" "${deselect[@]}"
  done
  (( ${#quiet[@]} )) && run_pytest pytest_quiet "${quiet[@]}" -q -ra
fi
if has leaderboard; then
  python3 -m leaderboard --out "$OUT/leaderboard" ${LEADERBOARD_ARGS:-} 2>"$OUT/leaderboard.err" \
    | tee "$OUT/leaderboard.txt" | tail -25
fi
if has shapes; then
  python3 -m leaderboard shapes --json "$OUT/shapes.json" --plot "$OUT/shapes.png" ${SHAPES_ARGS:-} 2>&1 \
    | tee "$OUT/shapes.txt" | tail -40
fi
if has versus; then
  python3 -m leaderboard versus bench/entries/atomic_fp32.py bench/entries/chunked_fp32.py --mode leaderboard \
    --runs 100 --out "$OUT" > "$OUT/versus.txt" 2>&1
  echo "versus exit=$?"; tail -22 "$OUT/versus.txt"
fi
if has sanitize; then
  OUT=/tmp/sanitize bash -c 'mkdir -p /tmp/sanitize; bash tests/sanitize.sh' 2>&1 | tee "$OUT/sanitize.txt"
fi
if has eval; then
  python3 -m leaderboard export --out "$OUT/submission.py"
  for sub in ${SUBS:-"$OUT/submission.py" tests/solutions/torch_sum.py}; do
    for mode in test benchmark leaderboard; do
      file=leaderboard/benchmarks.txt; [ $mode = test ] && file=leaderboard/tests.txt
      POPCORN_FD=3 python3 -m leaderboard evaluate $mode $file --submission "$sub" \
        3> "$OUT/eval_$(basename "$sub" .py)_$mode.txt"
      echo "$(basename "$sub") $mode exit=$?"
    done
  done
fi
if has bench; then
  for prog in reads full_sum families; do
    srcs="csrc/cuda/*.cu"; [[ $prog == reads ]] && srcs=csrc/cuda/read_probe.cu
    # shellcheck disable=SC2086
    nvcc -O3 -std=c++17 -arch=sm_90a -Iinclude -Icsrc/cuda "bench/$prog.cu" $srcs csrc/cpu/status.c \
      -o "/tmp/$prog" && "/tmp/$prog" >> "$OUT/bench.txt" 2>&1
    echo "bench/$prog.cu exit=$?"
  done
fi
if has sweep; then
  for fam in ${SWEEP:-cols rows}; do
    bash bench/sweep.sh "$fam" 2>&1 | tee "$OUT/sweep_$fam.txt" | grep -E "^(==|cols|rows|sum|FAIL)"
  done
fi
if has dist; then
  python3 -m pytest tests/test_distributed.py -q -ra -p no:cacheprovider -k nccl 2>&1 | tee "$OUT/pytest_nccl.log" |
    tail -4
  gpus=$(nvidia-smi --list-gpus | wc -l)
  for r in $(printf "%s\n" 2 $((gpus < 4 ? gpus : 4)) | sort -u); do
    (( r >= 2 && r <= gpus )) || continue
    python3 bench/distributed.py --ranks "$r" --out "$OUT/distributed_$r.txt" > "$OUT/distributed_$r.log" 2>&1
    echo "bench/distributed.py --ranks $r exit=$?"
    [[ -f $OUT/distributed_$r.txt ]] && cat "$OUT/distributed_$r.txt" >> "$OUT/distributed.txt"
  done
fi
if has model; then
  { python3 bench/llama_step.py --device cuda --steps 30 --timed 20 && echo &&
    python3 bench/llama_step.py --device cuda --dim 768 --heads 12 --layers 4 --seq 256 --batch 8 --vocab 8192 \
      --steps 20 --timed 20; } 2>&1 | tee "$OUT/llama_step.txt" | tail -30
fi
if has ops; then
  python3 bench/ops.py --device cuda --out "$OUT/ops.txt" > "$OUT/ops.log" 2>&1
  echo "bench/ops.py exit=$?"; tail -12 "$OUT/ops.log"
fi
exit $(( test_failed ? 4 : 0 ))
