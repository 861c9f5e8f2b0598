"""Host time per call of competition submissions in a warm loop (no ranked-mode
work between calls), and where it goes (torch.profiler over 100 calls).
bench/ranked_host.py measures the same inside the evaluator's ranked loop.

    python bench/host_profile.py SUBMISSION.py [SUBMISSION.py ...]
"""
import argparse
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from leaderboard import core  # noqa: E402
from leaderboard.ops import load_submission  # noqa: E402

SIZES = (1638400, 52428800)


def host_us(fn, data, calls=300):
    """Host time of each call (us), the GPU drained between calls."""
    for _ in range(50):
        fn(data)
    torch.cuda.synchronize()
    out = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn(data)
        out.append((time.perf_counter_ns() - t0) / 1e3)
        torch.cuda.synchronize()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("submissions", nargs="+")
    args = ap.parse_args()
    for path in args.submissions:
        fn = load_submission(path)[1]
        for size in SIZES:
            data = core.generate_input(size, 12345, "cuda")
            v = host_us(fn, data)
            print(f"{path} {size}: host per call median {statistics.median(v):.2f} us, min {min(v):.2f}")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(100):
                fn(data)
            torch.cuda.synchronize()
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14, max_name_column_width=60))


if __name__ == "__main__":
    main()
