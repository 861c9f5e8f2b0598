"""Where the time of a ranked-mode run goes (evidence tool, not a test).

In the evaluator's leaderboard (ranked) mode every run draws new data, computes
the fp64 reference and checks the result, so Python allocates and frees far
more between timed calls than in benchmark mode. This program repeats that
loop (leaderboard/core.py: generate_input, reference, Timer, check) for one
submission file and torch.sum, and prints per size: the event time (what the
competition reports), the host time of the call itself, and the same with the
Python garbage collector paused around the timed call. With --profile SIZE
it instead runs that loop at one size under torch.profiler and prints where
the host time of the call goes (CUDA runtime calls included).

    python bench/ranked_host.py SUBMISSION.py [--runs 60] [--profile SIZE]
"""
import argparse
import gc
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from leaderboard import core  # noqa: E402
from leaderboard.ops import load_submission  # noqa: E402


def ranked_runs(fn, size, runs, pause_gc):
    timer = core.Timer("cuda")
    seed = 12345
    data, output = core.generate_input(size, seed, "cuda")
    fn((data, output))
    ev, host = [], []
    for _ in range(runs):
        seed += core.RANKED_SEED_STEP
        data, output = core.generate_input(size, seed, "cuda")
        expected = core.reference(data)
        torch.cuda.synchronize()
        timer.scratch.fill_(1.0)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if pause_gc:
            gc.disable()
        start.record()
        t0 = time.perf_counter_ns()
        got = fn((data, output))
        t1 = time.perf_counter_ns()
        end.record()
        if pause_gc:
            gc.enable()
        torch.cuda.synchronize()
        msg = core.check(got, expected)
        if msg:
            raise SystemExit(msg)
        ev.append(start.elapsed_time(end) * 1e3)
        host.append((t1 - t0) / 1e3)
    return ev, host


def profile_ranked(fn, size, runs):
    """The ranked loop at one size under torch.profiler: the table of host
    time by operator and CUDA runtime call, longest total first."""
    ranked_runs(fn, size, 10, False)  # warm: build, first launches
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        ranked_runs(fn, size, runs, False)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=25, max_name_column_width=50))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("submission")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--profile", type=int, metavar="SIZE", help="profile the ranked loop at SIZE instead")
    args = ap.parse_args()
    _, sub = load_submission(args.submission)
    if args.profile:
        profile_ranked(sub, args.profile, args.runs)
        return
    fns = {"submission": sub, "torch.sum": lambda d: torch.sum(d[0])}
    print(f"{'fn':<11} {'size':>9} {'gc':>6} {'event mean':>10} {'median':>7} {'max':>7} "
          f"{'host mean':>9} {'median':>7} {'max':>7}   (us)")
    for size in core.BENCHMARK_SIZES:
        for name, fn in fns.items():
            for pause_gc in (False, True):
                ev, host = ranked_runs(fn, size, args.runs, pause_gc)
                print(f"{name:<11} {size:>9} {'paused' if pause_gc else 'on':>6} {statistics.mean(ev):>10.2f} "
                      f"{statistics.median(ev):>7.2f} {max(ev):>7.2f} {statistics.mean(host):>9.2f} "
                      f"{statistics.median(host):>7.2f} {max(host):>7.2f}")


if __name__ == "__main__":
    main()
