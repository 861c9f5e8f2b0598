"""The host gauge of `python -m leaderboard versus`, checked (evidence
tool, not a test): in fresh processes forked as versus forks its turns, the
read probe at one size timed the competition's way many times, each call
beside the host time of its L2 flush's launch (before it, and of one right
after it). Per process it prints the first timed calls (what versus throws
away), the median, the calls slower than 1.5x the median ("slow") and their
excess over it, and for each threshold how many calls the gauge flags,
how many of the slow ones it flags, the mean of the calls it keeps, and the
slow calls' excess it misses.

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
    timer = core.Timer("cuda")
    kernel = lambda data: torch.ops.redux._read_probe(data[0], True, versus.FLOORS[versus.FLOOR])  # noqa: E731
    kernel(core.generate_input(size, 1, "cuda"))
    rows = []  # (event ns, flush launch before, flush launch after)
    for i in range(calls):
        _, ns = timer(kernel, core.generate_input(size, 100 + i, "cuda"))
        rows.append((ns, timer.flush_host_ns, timer.flush()))
    conn.send(rows)
    conn.close()


def describe(rows, first=3):
    event = [r[0] / 1e3 for r in rows]
    usual = statistics.median(r[1] for r in rows)
    med = statistics.median(event)
    slow = {i for i, t in enumerate(event) if t > 1.5 * med}
    excess = sum(event[i] - med for i in slow)
    lines = [f"first calls {' '.join(f'{t:.1f}' for t in event[:first])} us; median {med:.2f}, mean "
             f"{statistics.mean(event):.2f}; usual flush launch {usual / 1e3:.1f} us; {len(slow)} slow calls, "
             f"excess {excess:.0f} us"]
    for th in THRESHOLDS:
        flagged = {i for i, r in enumerate(rows) if versus.host_busy(r[1], r[2], th * usual)}
        kept = [t for i, t in enumerate(event) if i not in flagged]
        missed = sum(event[i] - med for i in slow - flagged)
        lines.append(f"  gauge {th:.1f}x: flags {len(flagged)} ({len(slow & flagged)} of the slow), kept mean "
                     f"{statistics.mean(kept):.2f}, slow excess missed {missed:.0f} us")
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
