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
the leaderboard harness. The submission runs in a spawned child process of
its own (leaderboard/isolate.py), in every mode: one that raises, exits,
crashes or outlives --call-timeout / --total-timeout fails its cases with
the protocol's lines and exit 112; this process never runs its code. Test
results are checked here, against a reference this process computes.
Benchmarks run after a warm-up, as the competition's runner does, and each
case's reported mean is checked against this process's own clock. The
secret seed never reaches the submission's environment. The test file's
extra `size: 1024; seed: 7777` case repeats a size with a new seed, so a
submission that caches answers by size fails test mode.
"""
import argparse
import dataclasses
import os
import re
import sys
import time

from leaderboard import isolate



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


def _device():
    """REDUX_EVAL_DEVICE, else the GPU when there is one (as the competition
    runs), else the CPU."""
    if os.environ.get("REDUX_EVAL_DEVICE"):
        return os.environ["REDUX_EVAL_DEVICE"]
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


# ---- what the submission's child process runs (leaderboard/isolate.py) ----

def child_test(kernel, state, case, device):
    """One test case: the result's shape and values (the harness checks them)."""
    import torch

    from leaderboard import core

    got = kernel(core.generate_input(case["size"], case["seed"], device))
    problem = core.plain_tensor_problem(got)
    if problem:
        return {"error": problem}
    return {"shape": list(got.shape), "values": got.detach().to(torch.float64).cpu().reshape(-1).tolist()}


def child_benchmark(kernel, state, case, ranked, max_time_s, device):
    from leaderboard import core

    st, msg = core.benchmark(kernel, case["size"], case["seed"], device, ranked=ranked, max_time_s=max_time_s)
    return {"stats": dataclasses.asdict(st) if st else None, "error": msg}


def child_wall_prepare(kernel, state, case, device):
    """The input for child_wall_run, made and used once (outside the timing)."""
    from leaderboard import core

    state["wall_data"] = core.generate_input(case["size"], case["seed"], device)
    kernel(state["wall_data"])
    core.synchronize(device)


def child_wall_run(kernel, state, calls, device):
    """`calls` calls back to back, then a synchronize: the harness times
    this request with its own clock."""
    from leaderboard import core

    for _ in range(calls):
        kernel(state["wall_data"])
    core.synchronize(device)


def child_profile(kernel, state, case, device):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from leaderboard import core

    data = core.generate_input(case["size"], case["seed"], device)
    kernel(data)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
    with profile(activities=acts) as prof:
        kernel(data)
        core.synchronize(device)
    sort = "cuda_time_total" if device.startswith("cuda") else "cpu_time_total"
    return prof.key_averages().table(sort_by=sort, row_limit=12)


# ---- the harness's side ----

# The harness's own clock against the submission's figures: a benchmark
# case's reported mean must be at least 1/CLOCK_SLACK of the time a call
# takes by the harness's clock (calls back to back, timed from this
# process). Honest timings sit within a few x of it (launch overheads); a
# patched timer that reports a tiny fraction does not. A request's round
# trip (ms on a loaded host) can outweigh 20 calls of a microsecond, so a
# flagged measurement is repeated with 10x the calls until the calls take
# WALL_ENOUGH_S or WALL_TRIES have been made.
CLOCK_SLACK = 50
WALL_CALLS, WALL_TRIES, WALL_ENOUGH_S = 20, 5, 0.25


@dataclasses.dataclass
class Deadlines:
    """Seconds a request may take (--call-timeout; a benchmark case its
    --max-time more) and the whole run (--total-timeout)."""
    call_s: float
    total_s: float

    def __post_init__(self):
        self.end = time.monotonic() + self.total_s

    def next(self, extra_s=0.0):
        left = self.end - time.monotonic()
        if left <= 0:
            raise isolate.SubmissionFailed(f"the run's total deadline of {self.total_s:g} s passed")
        return min(self.call_s + extra_s, left)


def _check_test(answer, case, device):
    from leaderboard import core
    import torch

    if answer.get("error"):
        return answer["error"]
    expected = core.reference(core.generate_input(case["size"], case["seed"], device)[0])
    got = torch.tensor(answer["values"], dtype=torch.float64).reshape(answer["shape"])
    return core.check(got, expected)


def clock_problem(child, case, mean_ns, device, deadline_s):
    """'' when a case's reported mean agrees with this process's clock, else
    why not. deadline_s() gives each request's deadline."""
    child.call("leaderboard.evaluator.child_wall_prepare", case, device, deadline_s=deadline_s())
    calls = WALL_CALLS
    for _ in range(WALL_TRIES):
        t0 = time.perf_counter_ns()
        child.call("leaderboard.evaluator.child_wall_run", calls, device, deadline_s=deadline_s())
        took_ns = time.perf_counter_ns() - t0
        if mean_ns * CLOCK_SLACK >= took_ns / calls:
            return ""
        if took_ns >= WALL_ENOUGH_S * 1e9:
            break
        calls *= 10
    return (f"the reported mean of {mean_ns:.0f} ns is under 1/{CLOCK_SLACK} of the {took_ns / calls:.0f} ns a "
            f"call takes by the harness's own clock ({calls:,} calls): the timing was tampered with")


def _run_case(child, mode, case, device, max_time_s, deadlines):
    """One case: ('', {key: value} lines to log) when it passes, else
    (why, {}); SubmissionFailed when the child gave no answer."""
    if mode == "test":
        answer = child.call("leaderboard.evaluator.child_test", case, device, deadline_s=deadlines.next())
        problem = _check_test(answer, case, device)
        return problem, ({} if problem else {"status": "pass"})
    if mode == "profile":
        return "", {"report": child.call("leaderboard.evaluator.child_profile", case, device,
                                         deadline_s=deadlines.next())}
    answer = child.call("leaderboard.evaluator.child_benchmark", case, mode == "leaderboard", max_time_s, device,
                        deadline_s=deadlines.next(max_time_s))
    problem = answer["error"] or clock_problem(child, case, answer["stats"]["mean"], device, deadlines.next)
    if problem:
        return problem, {}
    return "", {key: answer["stats"][key] for key in ("runs", "mean", "std", "err", "best", "worst")}


def evaluate(mode, cases, source, log, max_time_s=10.0, deadlines=None):
    """Runs `mode` over `cases` with the submission (a .py path, or "cpp")
    in a child process; returns the exit code. Whatever the submission does
    (raise, exit, crash, hang), every case gets its protocol lines."""
    deadlines = deadlines or Deadlines(call_s=120.0, total_s=1800.0)
    child = isolate.Child(source, None)  # loads while this process imports torch
    device = _device()
    from leaderboard import core  # noqa: F401  (torch)
    prefix = "test" if mode == "test" else "benchmark"
    log(f"{prefix}-count", len(cases))
    failed = False

    def fail(i, why):
        nonlocal failed
        failed = True
        log(f"{prefix}.{i}.status", "fail")
        log(f"{prefix}.{i}.error", why)

    try:
        child.wait_ready(deadlines.next())
        if mode != "test":  # one correctness pass and warm-up on the first case, as the competition's runner does
            warm = child.call("leaderboard.evaluator.child_benchmark", cases[0], False, 0.0, device,
                              deadline_s=deadlines.next())
            if warm["error"]:
                raise isolate.SubmissionFailed(warm["error"])
    except isolate.SubmissionFailed as e:
        for i, case in enumerate(cases):
            log(f"{prefix}.{i}.spec", spec_string(case))
            fail(i, str(e))
        child.kill()
        log("check", "fail")
        return EXIT_TEST_FAIL
    broken = ""  # why the child cannot take more requests
    try:
        for i, case in enumerate(cases):
            log(f"{prefix}.{i}.spec", spec_string(case))
            if broken:
                fail(i, f"not run: {broken}")
                continue
            try:
                problem, lines = _run_case(child, mode, case, device, max_time_s, deadlines)
            except isolate.SubmissionFailed as e:
                problem, lines = str(e), {}
                broken = "" if child.alive() else str(e)
            if problem:
                fail(i, problem)
                if mode != "test":  # a benchmark run stops at its first failure
                    broken = broken or "an earlier case failed"
            for key, value in lines.items():
                log(f"{prefix}.{i}.{key}", value)
    finally:
        child.close()
    log("check", "fail" if failed else "pass")
    return EXIT_TEST_FAIL if failed else EXIT_OK


SECRET_FD_VAR = "REDUX_EVAL_SECRET_FD"


def _reexec_without_secret(argv):
    """Runs this evaluator again with POPCORN_SEED out of its environment
    (handed over through a pipe instead): a process's initial environment
    stays readable in /proc/PID/environ, and the submission's child is this
    process's child."""
    read_end, write_end = os.pipe()
    os.write(write_end, os.environ["POPCORN_SEED"].encode())
    os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {k: v for k, v in os.environ.items() if k != "POPCORN_SEED"}
    env[SECRET_FD_VAR] = str(read_end)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "leaderboard", "evaluate", *argv], env)


def _secret():
    """POPCORN_SEED's value (from the pipe after the re-exec), or None."""
    fd = os.environ.pop(SECRET_FD_VAR, None)
    if fd is None:
        return os.environ.pop("POPCORN_SEED", None)
    with os.fdopen(int(fd), "rb") as f:
        return f.read().decode()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog="python -m leaderboard evaluate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("testfile")
    ap.add_argument("--submission", default="submission.py", help="Python submission file")
    ap.add_argument("--cpp", action="store_true", help="evaluate redux's C++ custom_kernel (task.h)")
    ap.add_argument("--max-time", type=float, default=10.0, help="seconds per benchmark case at most")
    ap.add_argument("--call-timeout", type=float, default=120.0,
                    help="seconds the submission may take to load or to answer one case (plus --max-time "
                         "for a benchmark case); past it, it is stopped and fails")
    ap.add_argument("--total-timeout", type=float, default=1800.0, help="seconds the whole run may take")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    for name in ("max_time", "call_timeout", "total_timeout"):
        if not getattr(args, name) > 0:
            print(f"argument --{name.replace('_', '-')}: must be a positive number of seconds, got "
                  f"{getattr(args, name)}", file=sys.stderr)
            return EXIT_USAGE
    if "POPCORN_SEED" in os.environ and SECRET_FD_VAR not in os.environ:
        _reexec_without_secret(argv)
    secret = _secret()
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
    source = "cpp" if args.cpp else args.submission
    deadlines = Deadlines(call_s=args.call_timeout, total_s=args.total_timeout)
    try:
        return evaluate(args.mode, cases, source, log, args.max_time, deadlines)
    except RuntimeError as e:
        if "CUDA" in str(e) or "cuda" in str(e):
            print(f"CUDA error: {e}", file=sys.stderr)
            return EXIT_CUDA
        raise
