"""A local evaluator that speaks the competition's runner protocol.

    POPCORN_FD=3 python -m leaderboard evaluate MODE TESTFILE [--submission FILE | --cpp] 3>out.txt

MODE is test, benchmark, leaderboard (ranked) or profile. TESTFILE holds one
case per line, `size: N; seed: S`. Results go to the file descriptor named by
POPCORN_FD as `key: value` lines; POPCORN_SEED, when set, is mixed into every
case's seed. Exit codes: 0 ok, 2 usage, 110 CUDA error, 111 no POPCORN_FD,
112 a test failed, 113 bad test spec.

The submission is a Python file defining custom_kernel((data, output))
(default: ./submission.py), or --cpp for redux's C++ custom_kernel of task.h.
Generator, reference, checker and timing are leaderboard/core.py, shared with
the leaderboard harness. Benchmarks run in one spawned child process, after a
warm-up, as the competition's runner does. The test file's extra
`size: 1024; seed: 7777` case repeats a size with a new seed, so a submission
that caches answers by size fails test mode.
"""
import argparse
import dataclasses
import multiprocessing
import os
import re
import sys



def read_exit_codes(path=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "utils.h")):
    """The protocol's exit codes from utils.h, their one definition
    (enum popcorn_exit_code), as {name without POPCORN_EXIT_: code}."""
    with open(path) as f:
        return {name: int(code) for name, code in re.findall(r"POPCORN_EXIT_(\w+)\s*=\s*(\d+)", f.read())}


_CODES = read_exit_codes()
EXIT_OK, EXIT_USAGE, EXIT_CUDA, EXIT_NO_FD, EXIT_TEST_FAIL, EXIT_TEST_SPEC = (
    _CODES[k] for k in ("OK", "USAGE", "CUDA_API", "NO_FD", "TEST_FAIL", "TEST_SPEC"))
MODES = ("test", "benchmark", "leaderboard", "profile")
# Seeds reach torch.Generator.manual_seed as seed, seed + 1 and seed + 2
# (leaderboard/core.generate_input), each at most 2^63 - 1.
SEED_LIMIT = 2**63 - 2
_LINE = re.compile(r"^\s*(\w+)\s*:\s*([\w.+-]+)\s*$")


class SpecError(ValueError):
    pass


def parse_test_file(text):
    """[{key: int|str}] from `key: value; key: value` lines; blank lines skipped."""
    cases = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        case = {}
        for part in line.split(";"):
            if not part.strip():
                continue
            m = _LINE.match(part)
            if not m:
                raise SpecError(f"line {lineno}: cannot parse {part.strip()!r} (expected 'key: value')")
            key, value = m.groups()
            try:
                case[key] = int(value)
            except ValueError:
                case[key] = value
        for required in ("size", "seed"):
            if not isinstance(case.get(required), int):
                raise SpecError(f"line {lineno}: needs an integer {required!r}")
        if case["size"] < 1:
            raise SpecError(f"line {lineno}: 'size' must be at least 1, got {case['size']}")
        if not 0 <= case["seed"] < SEED_LIMIT:
            raise SpecError(f"line {lineno}: 'seed' must be in [0, {SEED_LIMIT}), got {case['seed']}")
        cases.append(case)
    if not cases:
        raise SpecError("no test cases")
    return cases


def combine_seed(a, b):
    """Cantor pairing of a case's seed a with the secret POPCORN_SEED b, as the
    competition mixes them; a pairing past SEED_LIMIT (a secret of 10^12, say)
    is taken modulo it, so any 64-bit secret works."""
    combined = int(a + (a + b) * (a + b + 1) // 2)
    return combined if combined < SEED_LIMIT else combined % SEED_LIMIT


def spec_string(case):
    return "; ".join(f"{k}: {v}" for k, v in case.items())


class ProtocolLog:
    def __init__(self, fd):
        self.f = os.fdopen(fd, "w", buffering=1)

    def __call__(self, key, value):
        value = str(value).replace("\n", "\\n")
        self.f.write(f"{key}: {value}\n")


def load_custom_kernel(submission, cpp):
    if cpp:
        import torch

        import redux  # noqa: F401

        def custom_kernel(data):
            return torch.ops.redux._competition_custom_kernel(data[0], data[1])

        return custom_kernel
    from leaderboard.ops import load_submission

    return load_submission(submission)[1]


def _device():
    """REDUX_EVAL_DEVICE, else the GPU when there is one (as the competition
    runs), else the CPU."""
    if os.environ.get("REDUX_EVAL_DEVICE"):
        return os.environ["REDUX_EVAL_DEVICE"]
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def run_test(custom_kernel, case, device):
    from leaderboard import core

    data = core.generate_input(case["size"], case["seed"], device)
    expected = core.reference(data[0])
    try:
        got = custom_kernel(data)
    except Exception as e:  # a raising submission fails its test
        return f"{type(e).__name__}: {e}"
    return core.check(got, expected)


# ---- benchmark worker (spawned child process) ----

_worker_kernel = None


def _worker_init(submission, cpp):
    global _worker_kernel
    _worker_kernel = load_custom_kernel(submission, cpp)


def _worker_benchmark(case, ranked, max_time_s):
    from leaderboard import core

    device = _device()
    st, msg = core.benchmark(_worker_kernel, case["size"], case["seed"], device, ranked=ranked,
                             max_time_s=max_time_s)
    return (dataclasses.asdict(st) if st else None), msg


def _worker_profile(case):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from leaderboard import core

    device = _device()
    data = core.generate_input(case["size"], case["seed"], device)
    _worker_kernel(data)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with profile(activities=acts) as prof:
        _worker_kernel(data)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
    sort = "cuda_time_total" if device.startswith("cuda") else "cpu_time_total"
    return prof.key_averages().table(sort_by=sort, row_limit=12)


def evaluate(mode, cases, custom_kernel_src, log, max_time_s=10.0):
    """Runs `mode` over `cases`; returns the exit code."""
    submission, cpp = custom_kernel_src
    device = _device()
    if mode == "test":
        kernel = load_custom_kernel(submission, cpp)
        log("test-count", len(cases))
        ok = True
        for i, case in enumerate(cases):
            log(f"test.{i}.spec", spec_string(case))
            msg = run_test(kernel, case, device)
            if msg:
                ok = False
                log(f"test.{i}.status", "fail")
                log(f"test.{i}.error", msg)
            else:
                log(f"test.{i}.status", "pass")
        log("check", "pass" if ok else "fail")
        return EXIT_OK if ok else EXIT_TEST_FAIL

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1, initializer=_worker_init, initargs=(submission, cpp)) as pool:
        # one correctness pass and warm-up on the first case, in the child
        pool.apply(_worker_benchmark, (cases[0], False, 0.0))
        if mode == "profile":
            for i, case in enumerate(cases):
                log(f"benchmark.{i}.spec", spec_string(case))
                log(f"benchmark.{i}.report", pool.apply(_worker_profile, (case,)))
            log("check", "pass")
            return EXIT_OK
        ranked = mode == "leaderboard"
        log("benchmark-count", len(cases))
        ok = True
        for i, case in enumerate(cases):
            log(f"benchmark.{i}.spec", spec_string(case))
            stats, msg = pool.apply(_worker_benchmark, (case, ranked, max_time_s))
            if stats is None:
                ok = False
                log(f"benchmark.{i}.status", "fail")
                log(f"benchmark.{i}.error", msg)
                break
            for key in ("runs", "mean", "std", "err", "best", "worst"):
                log(f"benchmark.{i}.{key}", stats[key])
        log("check", "pass" if ok else "fail")
        return EXIT_OK if ok else EXIT_TEST_FAIL


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m leaderboard evaluate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("testfile")
    ap.add_argument("--submission", default="submission.py", help="Python submission file")
    ap.add_argument("--cpp", action="store_true", help="evaluate redux's C++ custom_kernel (task.h)")
    ap.add_argument("--max-time", type=float, default=10.0, help="seconds per benchmark case at most")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    fd = os.environ.get("POPCORN_FD")
    if not fd:
        print("POPCORN_FD is not set", file=sys.stderr)
        return EXIT_NO_FD
    log = ProtocolLog(int(fd))
    try:
        with open(args.testfile) as f:
            cases = parse_test_file(f.read())
    except (OSError, SpecError) as e:
        print(f"bad test file {args.testfile}: {e}", file=sys.stderr)
        return EXIT_TEST_SPEC
    secret = os.environ.get("POPCORN_SEED")
    if secret:
        try:
            secret_seed = int(secret)
        except ValueError:
            print(f"POPCORN_SEED must be an integer, got {secret!r}", file=sys.stderr)
            return EXIT_TEST_SPEC
        if not 0 <= secret_seed < 2**64:
            print(f"POPCORN_SEED must be a 64-bit unsigned integer, got {secret}", file=sys.stderr)
            return EXIT_TEST_SPEC
        for case in cases:
            case["seed"] = combine_seed(case["seed"], secret_seed)
    try:
        return evaluate(args.mode, cases, (args.submission, args.cpp), log, args.max_time)
    except RuntimeError as e:
        if "CUDA" in str(e) or "cuda" in str(e):
            print(f"CUDA error: {e}", file=sys.stderr)
            return EXIT_CUDA
        raise
