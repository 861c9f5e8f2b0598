"""The leaderboard's measurements: which ops, their checks and timings on
the competition's sizes (leaderboard/core.py has the method), and the read
bandwidth they are reported against."""
import platform
import sys
import time

import torch

from leaderboard import core, report, ops as ops_mod
from redux.variants import BASELINE


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total):
        self.total, self.done, self.t0 = max(total, 1), 0, time.time()

    def step(self, label):
        self.done += 1
        frac = self.done / self.total
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} {time.time() - self.t0:5.0f}s {label:<40}")
        sys.stderr.flush()
        if self.done == self.total:
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


def select_ops(args, device):
    """{name: fn} of the ops to score: --ops (torch.sum always) or all that
    run on the device, then any --submission files."""
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
        name, fn = ops_mod.load_submission(path)
        chosen[name] = fn
    return chosen


def score_op(name, fn, args, device, sizes, timer, progress):
    """One op's entry: the competition's test phase, then every benchmark
    size (an op that fails a check is not timed further)."""
    budget = 1.0 if args.quick else args.time_budget
    max_runs = 10 if args.quick else core.MAX_RUNS
    idea, deterministic = ops_mod.describe(name)
    entry = {"idea": idea, "deterministic": deterministic, "tests": {}, "benchmarks": {}, "correct": True}
    for i, size in enumerate(core.TEST_SIZES):
        data = core.generate_input(size, args.seed + i, device)
        try:
            msg = core.check(fn(data), core.reference(data[0]))
        except Exception as e:  # a crashing op is a failing op, not a crashed harness
            msg = f"raised {type(e).__name__}: {e}"
        entry["tests"][str(size)] = msg or "pass"
        entry["correct"] &= not msg
    progress.step(f"{name} tests")
    for size in sizes:
        if not entry["correct"]:
            progress.step(f"{name} skipped")
            continue
        try:
            fn(core.generate_input(size, args.seed, device))  # warm-up
            st, msg = core.benchmark(fn, size, args.seed, device, ranked=args.ranked, max_time_s=budget,
                                     timer=timer, max_runs=max_runs)
        except Exception as e:
            st, msg = None, f"raised {type(e).__name__}: {e}"
        if st is None:
            entry["correct"] = False
            entry["benchmarks"][str(size)] = {"error": msg}
        else:
            entry["benchmarks"][str(size)] = st.as_dict()
        progress.step(f"{name} {size}")
    return entry


def run(args):
    """Scores the chosen ops on the device; returns the results dict."""
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = torch.device(device).type == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda asked for, but no CUDA GPU is visible")
    chosen = select_ops(args, device)
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else list(core.BENCHMARK_SIZES if cuda else core.CPU_BENCHMARK_SIZES))
    results = {"device": torch.cuda.get_device_name(device) if cuda else platform.processor() or "cpu",
               "torch": torch.__version__, "mode": "ranked" if args.ranked else "benchmark",
               "quick": args.quick, "read_bandwidth_Bps": measure_read_bandwidth(device), "sizes": sizes, "ops": {}}
    progress = Progress(len(chosen) * (1 + len(sizes)))
    timer = core.Timer(device)
    for name, fn in chosen.items():
        results["ops"][name] = score_op(name, fn, args, device, sizes, timer, progress)
    report.summarize(results)
    return results
