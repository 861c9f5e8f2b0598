"""The host gauge of `python -m leaderboard versus`, checked (evidence
tool, not a test): in fresh processes forked as versus forks its turns, the
read probe at one size timed the competition's way many times, each call
beside the host time of its L2 flush's launch (before it, and of one right
after it). Per process it prints the first timed calls (what versus throws
away), the median, the calls slower than 1.5x the median ("slow") and their
excess over it, and for each threshold how many calls the gauge flags,
how many of the slow ones it flags, the mean of the calls it keeps, and the
slow calls' excess it misses.

Where a slow call's time comes from: each call also records the flush's
GPU time (an event before the fill; the fill is the same work every call)
and the host time from the flush's launch to the call's return. A slow
call is "exposed" when that host time outlasted the flush on the GPU (the
GPU sat idle waiting for the launch: the host's doing), "GPU-slow" when
its flush ran over 1.2x its usual GPU time (the GPU itself was slow).

    python bench/host_gauge.py [--children 6] [--calls 4000] [--size 1638400]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from leaderboard import versus  # noqa: E402

THRESHOLDS = (1.5, 2.0, 3.0, 4.0)


def _child(conn, size, calls):
    import torch
    import redux  # noqa: F401
    from leaderboard import core
    timer = versus.ExposureTimer("cuda")  # versus's own timer: the flush's GPU time and the launch's host time
    kernel = lambda data: torch.ops.redux._read_probe(data[0], True, versus.FLOORS[versus.FLOOR])  # noqa: E731
    kernel(core.generate_input(size, 1, "cuda"))
    rows = []  # (event ns, flush launch before, flush launch after, flush GPU ns, launch-to-return host ns)
    for i in range(calls):
        data = core.generate_input(size, 100 + i, "cuda")
        _, ns = timer(kernel, data)
        before, launch, fill = timer.flush_host_ns, timer.launch_host_ns, timer.flush_gpu_ns
        rows.append((ns, before, timer.flush(), fill, launch))
    conn.send(rows)
    conn.close()


def describe(rows, first=3):
    event = [r[0] / 1e3 for r in rows]
    usual = statistics.median(r[1] for r in rows)
    med = statistics.median(event)
    slow = {i for i, t in enumerate(event) if t > 1.5 * med}
    excess = sum(event[i] - med for i in slow)
    fill = [r[3] / 1e3 for r in rows]
    fill_med = statistics.median(fill)
    exposed = {i for i in slow if rows[i][4] / 1e3 > fill[i]}
    gpu_slow = {i for i in slow if fill[i] > 1.2 * fill_med}
    lines = [f"first calls {' '.join(f'{t:.1f}' for t in event[:first])} us; median {med:.2f}, mean "
             f"{statistics.mean(event):.2f}; usual flush launch {usual / 1e3:.1f} us; {len(slow)} slow calls, "
             f"excess {excess:.0f} us",
             f"  flush on the GPU: median {fill_med:.1f} us, {sum(f > 1.2 * fill_med for f in fill)} calls over 1.2x; "
             f"launch-to-return host median {statistics.median(r[4] for r in rows) / 1e3:.1f} us",
             f"  the slow calls: {len(exposed)} exposed (excess {sum(event[i] - med for i in exposed):.0f} us), "
             f"{len(gpu_slow)} GPU-slow (excess {sum(event[i] - med for i in gpu_slow):.0f} us), "
             f"{len(slow - exposed - gpu_slow)} neither (excess {sum(event[i] - med for i in slow - exposed - gpu_slow):.0f} us)"]
    for th in THRESHOLDS:
        flagged = {i for i, r in enumerate(rows) if versus.host_busy(r[1], r[2], th * usual)}
        kept = [t for i, t in enumerate(event) if i not in flagged]
        missed = sum(event[i] - med for i in slow - flagged)
        lines.append(f"  gauge {th:.1f}x: flags {len(flagged)} ({len(slow & flagged)} of the slow), kept mean "
                     f"{statistics.mean(kept):.2f}, slow excess missed {missed:.0f} us")
    # The two causes as gauges of their own: retake a call whose launch outlasted its flush on the GPU,
    # or whose flush ran slow on the GPU.
    for name, flagged in (("exposed rule", {i for i, r in enumerate(rows) if versus.launch_exposed(r[4], r[3])}),
                          ("GPU-slow flush 1.2x", {i for i, f in enumerate(fill) if f > 1.2 * fill_med})):
        kept = [t for i, t in enumerate(event) if i not in flagged]
        missed = sum(event[i] - med for i in slow - flagged)
        lines.append(f"  {name}: flags {len(flagged)} ({len(slow & flagged)} of the slow), kept mean "
                     f"{statistics.mean(kept) if kept else float('nan'):.2f}, slow excess missed {missed:.0f} us")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--children", type=int, default=6)
    ap.add_argument("--calls", type=int, default=4000)
    ap.add_argument("--size", type=int, default=1638400)
    args = ap.parse_args()
    ctx = versus._context()
    print(f"read probe ({versus.FLOORS[versus.FLOOR]}) at {args.size:,} fp32, {args.calls} timed calls in each of {args.children} "
          "fresh processes", flush=True)
    for c in range(args.children):
        rows, why = versus.run_child(ctx, _child, (args.size, args.calls))
        if rows is None:
            print(f"process {c}: {why}")
            return 1
        print(f"process {c}: " + "\n".join(describe(rows)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
