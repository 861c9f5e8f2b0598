"""The leaderboard's measurements: which ops, their checks and timings on
the competition's sizes (leaderboard/core.py has the method), and the read
bandwidth they are reported against."""
import dataclasses
import os
import platform
import sys
import time

import torch

from leaderboard import core, isolate, report, stats, ops as ops_mod
from redux.variants import BASELINE


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total):
        self.total, self.done, self.t0, self.finished = max(total, 1), 0, time.time(), False

    def step(self, label):
        self.done += 1
        frac = self.done / self.total
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} {time.time() - self.t0:5.0f}s {label:<40}")
        sys.stderr.flush()
        if self.done == self.total:
            self.finish()

    def finish(self):
        if not self.finished:
            self.finished = True
            sys.stderr.write("\n")


def measure_read_bandwidth(device):
    """Bytes/s of one large streaming read (1 GiB), best of 10; None on CPU."""
    if torch.device(device).type != "cuda":
        return None
    n = (1 << 30) // 4
    x = torch.rand(n, device=device)
    torch.ops.redux._read_probe(x)
    best = float("inf")
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.ops.redux._read_probe(x)
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) * 1e-3)
    del x
    return n * 4 / best


class Submission:
    """A --submission file, run in a child process of its own
    (leaderboard/isolate.py): its test phase and timed samples are requests
    to the child, each with --call-timeout. A submission that fails to load,
    raises, exits, crashes or hangs is reported as failed; the others are
    still scored. The child is stopped after the test phase and started
    again for its own measurements, so no idle process of it (nor its CUDA
    context) sits beside this process's timings."""

    def __init__(self, path, device, call_timeout_s):
        self.path, self.device, self.call_timeout_s = path, device, call_timeout_s
        self.child, self.broken = None, ""

    def _call(self, handler, *args):
        if self.broken:
            raise isolate.SubmissionFailed(self.broken)
        try:
            if self.child is None:
                self.child = isolate.Child(self.path, self.call_timeout_s)
            return self.child.call(handler, *args, deadline_s=self.call_timeout_s)
        except isolate.SubmissionFailed as e:
            if self.child is None or not self.child.alive():
                self.broken = str(e)
            raise

    def test_phase(self, args):
        try:
            return self._call("leaderboard.score.child_test_phase", args.seed, self.device)
        except isolate.SubmissionFailed as e:
            return {str(size): str(e) for size in core.TEST_SIZES}
        finally:
            self.close()

    def sampler(self, size, args):
        def sample():
            try:
                return self._call("leaderboard.score.child_sample", size, args.ranked, args.seed, self.device)
            except isolate.SubmissionFailed as e:
                raise stats.MeasureError(str(e)) from None
        return sample

    def clock_problem(self, size, seed, mean_ns):
        """'' when the child's figures at `size` agree with this process's clock."""
        from leaderboard import evaluator
        if self.broken or self.child is None:
            return self.broken or "the submission's process is gone"
        try:
            return evaluator.clock_problem(self.child, {"size": size, "seed": seed}, mean_ns, self.device,
                                           lambda: self.call_timeout_s)
        except isolate.SubmissionFailed as e:
            return str(e)

    def close(self):
        if self.child:
            self.child.close()
            self.child = None


def child_test_phase(kernel, state, seed, device):
    """In the submission's child: the test phase."""
    return test_phase(None, kernel, _Args(seed=seed, ranked=False), device)


def child_sample(kernel, state, size, ranked, seed, device):
    """In the submission's child: one timed call at `size` (a sampler per
    size, made on its first call, as the harness makes its own)."""
    samplers = state.setdefault("samplers", {})
    if size not in samplers:
        timer = state.setdefault("timer", core.Timer(device))
        samplers[size] = make_sampler(kernel, size, _Args(seed=seed, ranked=ranked), device, timer,
                                      state.setdefault("shared", {}))
    return samplers[size]()


@dataclasses.dataclass
class _Args:
    seed: int
    ranked: bool


def select_ops(args, device):
    """{name: fn} of the ops to score: --ops (torch.sum always) or all that
    run on the device, then any --submission files (Submission objects)."""
    available = ops_mod.available(device)
    if args.ops:
        wanted = [o.strip() for o in args.ops.split(",") if o.strip()]
        unknown = [o for o in wanted if o not in available]
        if unknown:
            raise SystemExit(f"unknown or unavailable ops on {device}: {unknown}; available: {list(available)}")
        chosen = {BASELINE: available[BASELINE], **{o: available[o] for o in wanted}}
    else:
        chosen = available
    for path in args.submission:
        chosen[ops_mod.submission_name(path)] = Submission(path, device, args.call_timeout)
    return chosen


def test_phase(name, fn, args, device):
    """The competition's test phase: {size: 'pass' or the reason}."""
    tests = {}
    for i, size in enumerate(core.TEST_SIZES):
        data = core.generate_input(size, args.seed + i, device)
        try:
            msg = core.check(fn(data), core.reference(data[0]))
        except Exception as e:  # a crashing op is a failing op, not a crashed harness
            msg = f"raised {type(e).__name__}: {e}"
        tests[str(size)] = msg or "pass"
    return tests


def make_sampler(fn, size, args, device, timer, shared):
    """One timed call of fn at `size`, the competition's way. Benchmark mode:
    the size's one input (shared by every op), checked once here. Ranked
    mode: a fresh seed (seed + 13 each time) and a check on every call.
    Raises MeasureError on a failed check."""
    if args.ranked:
        seed = [args.seed]

        def sample():
            seed[0] += core.RANKED_SEED_STEP
            data = core.generate_input(size, seed[0], device)
            expected = core.reference(data[0])
            got, ns = timer(fn, data)
            msg = check_call(lambda: core.check(got, expected))
            if msg:
                raise stats.MeasureError(f"seed {seed[0]}: {msg}")
            return ns
        return sample
    if size not in shared:
        data = core.generate_input(size, args.seed, device)
        shared[size] = (data, core.reference(data[0]))
    data, expected = shared[size]
    msg = check_call(lambda: core.check(fn(data), expected))  # also the warm-up
    if msg:
        def failed():
            raise stats.MeasureError(msg)
        return failed
    return lambda: timer(fn, data)[1]


def check_call(f):
    try:
        return f()
    except Exception as e:
        return f"raised {type(e).__name__}: {e}"


# The host counts as busy when other work keeps this share of its CPUs
# busy, sampled for SAMPLE_S just before the run and just after it (while
# the harness itself is idle). A sample, not the load average: that lags by
# a minute and so would count a build that just finished.
BUSY_SHARE, SAMPLE_S = 0.5, 0.25


def _cpu_jiffies():
    """(busy, total) jiffies of all CPUs from /proc/stat, or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_share(seconds=SAMPLE_S):
    """The share of all CPUs' time spent busy over `seconds` now, or None
    where /proc/stat is not there."""
    first = _cpu_jiffies()
    time.sleep(seconds)
    second = _cpu_jiffies()
    if first is None or second is None or second[1] <= first[1]:
        return None
    return (second[0] - first[0]) / (second[1] - first[1])


def busy_host_warning(before, after):
    """A warning line when the host was busy around the run, else ''."""
    for when, share in (("before", before), ("after", after)):
        if share is not None and share > BUSY_SHARE:
            return (f"warning: the host was busy {when} the run ({share:.0%} of its CPUs used by other work): "
                    "the times mean little; rerun on an idle machine")
    return ""


def device_of(args):
    """The device a run scores: --device, else the GPU when there is one."""
    return args.device or ("cuda" if torch.cuda.is_available() else "cpu")


def run(args):
    """Scores the chosen ops on the device; returns the results dict."""
    busy_before = busy_share()
    device = device_of(args)
    cuda = torch.device(device).type == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda asked for, but no CUDA GPU is visible")
    chosen = select_ops(args, device)
    sizes = list(args.sizes) if args.sizes else list(core.BENCHMARK_SIZES if cuda else core.CPU_BENCHMARK_SIZES)
    read_bw = measure_read_bandwidth(device)
    first_screen(device, cuda, read_bw, chosen, sizes, args)
    results = {"device": torch.cuda.get_device_name(device) if cuda else platform.processor() or "cpu",
               "torch": torch.__version__, "commit": git_commit(), "mode": "ranked" if args.ranked else "benchmark",
               "quick": args.quick, "read_bandwidth_Bps": read_bw, "sizes": sizes, "statistic": stats.ROBUST,
               "noise_rule": stats.NOISE_RULE, "ops": {}}
    for name, fn in chosen.items():
        idea, deterministic = ops_mod.describe(name)
        tests = fn.test_phase(args) if isinstance(fn, Submission) else test_phase(name, fn, args, device)
        results["ops"][name] = {"idea": idea, "deterministic": deterministic, "tests": tests, "benchmarks": {},
                                "correct": all(v == "pass" for v in tests.values())}
    timer, shared = core.Timer(device), {}
    cells = [stats.Cell((name, size), fn.sampler(size, args) if isinstance(fn, Submission)
                        else make_sampler(fn, size, args, device, timer, shared))
             for size in sizes for name, fn in chosen.items() if results["ops"][name]["correct"]]
    progress = Progress(len(cells))
    measure_cells(cells, chosen, args, progress)
    progress.finish()
    for c in cells:
        entry = results["ops"][c.key[0]]
        entry["benchmarks"][str(c.key[1])] = c.stats.as_dict() if c.stats else {"error": c.error}
        entry["correct"] &= c.stats is not None
    results["host_busy_share"] = [busy_before, busy_share()]
    report.summarize(results)
    return results


def measure_cells(cells, chosen, args, progress):
    """This process's cells interleaved, then each submission's alone (an
    idle process's OpenMP threads spin for a while, which on a small CPU host
    slowed whichever process was measured beside them ~500x), each
    submission's figures checked against this process's clock before its
    process ends."""
    groups = [[c for c in cells if not isinstance(chosen[c.key[0]], Submission)]]
    groups += [[c for c in cells if c.key[0] == name] for name, fn in chosen.items() if isinstance(fn, Submission)]
    for group in groups:
        stats.measure(group, max_runs=10 if args.quick else core.MAX_RUNS,
                      budget_s=1.0 if args.quick else args.time_budget,
                      on_done=lambda c: progress.step(f"{c.key[0]} {c.key[1]:,}"))
        submission = chosen[group[0].key[0]] if group else None
        if isinstance(submission, Submission):
            for c in group:
                if c.stats:
                    c.error = submission.clock_problem(c.key[1], args.seed, c.stats.mean)
                    c.stats = None if c.error else c.stats
            submission.close()


def git_commit():
    """The commit the run measured (with '+dirty' for local changes), or None.
    REDUX_COMMIT overrides it, for a copy of the tree whose .git is not the
    checkout's (a remote GPU machine)."""
    import subprocess
    if os.environ.get("REDUX_COMMIT"):
        return os.environ["REDUX_COMMIT"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def first_screen(device, cuda, read_bw, chosen, sizes, args):
    """What the run is about to do, before it does it."""
    budget = 1.0 if args.quick else args.time_budget
    if cuda:
        print(f"Scoring {len(chosen)} ops on {torch.cuda.get_device_name(device)}: measured read ceiling "
              f"{read_bw / 1e12:.2f} TB/s (1 GiB streamed).", flush=True)
    else:
        print(f"No CUDA GPU visible (torch.cuda.is_available() is False), so this run scores the CPU kernels: "
              f"{len(chosen)} ops that run on the CPU (the ladder rungs are CUDA-only), on CPU-sized inputs.",
              flush=True)
    # Upper bound: each cell stops at its budget (twice when re-measured); most stop far earlier.
    est = len(chosen) * len(sizes) * budget * 0.5 + len(chosen) * 0.5
    print(f"Sizes {', '.join(f'{s:,}' for s in sizes)}; seed {args.seed}; about {est / 60:.1f} min "
          f"(at most {len(chosen) * len(sizes) * budget / 60:.1f} min + re-measured cells).", flush=True)
