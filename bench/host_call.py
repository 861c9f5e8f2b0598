"""Host time of one call, back to back (evidence tool, not a test): for a
submission file, the mean host time of custom_kernel((x, out)) and of
torch.sum(x) in the same process, at 65,536 fp32 elements (GPU time under the host's), with no L2 fill between
calls and a synchronize every 100 calls. What a ranked call's host path
costs before the GPU sees its launch.

    python bench/host_call.py SUBMISSION.py [--calls 2000]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from leaderboard import core  # noqa: E402
from leaderboard.ops import load_submission  # noqa: E402


def per_call_us(fn, calls):
    best = float("inf")
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for i in range(calls):
            fn()
            if i % 100 == 99:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter_ns() - t0) / calls / 1e3)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("submission")
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    _, sub = load_submission(args.submission)
    data = core.generate_input(65536, 12345, "cuda")
    sub(data)
    fns = {"submission": lambda: sub(data), "torch.sum": lambda: torch.sum(data[0]),
           "empty": lambda: torch.empty(1, device="cuda")}
    print(f"{os.path.basename(args.submission)}: " +
          "  ".join(f"{k} {per_call_us(f, args.calls):.2f} us" for k, f in fns.items()), flush=True)


if __name__ == "__main__":
    main()
