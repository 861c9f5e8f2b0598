"""The mean against torch.mean and against redux's own sum, on the CPU, for
the redux built here (A/B two builds by running it in each).

    PYTHONPATH=. python bench/mean_ab.py [--threads 2] [--reps 30]

Prints, per shape (rows of 4096 fp32, a full sum, columns), the median
time ratios redux.mean / torch.mean, redux.sum / torch.sum and
redux.mean / redux.sum, measured in the same run.
"""
import argparse
import statistics
import time

import torch

import redux

SHAPES = [  # (label, shape, dim)
    ("(256, 4096) rows", (256, 4096), -1),
    ("(1024, 4096) rows", (1024, 4096), -1),
    ("(4096, 4096) rows", (4096, 4096), -1),
    ("4,194,304 full", (1 << 22,), None),
    ("(4096, 1024) columns", (4096, 1024), 0),
]


def median_s(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"CPU, {args.threads} threads, torch {torch.__version__}, median of {args.reps} calls")
    print(f"{'shape':<22} {'mean/torch.mean':>16} {'sum/torch.sum':>14} {'mean/sum':>9}")
    for label, shape, dim in SHAPES:
        x = torch.randn(shape, generator=torch.Generator().manual_seed(0)) + 1
        dims = () if dim is None else (dim,)
        torch_mean = median_s(lambda: torch.mean(x, *dims), args.reps)
        torch_sum = median_s(lambda: torch.sum(x, *dims), args.reps)
        mean = median_s(lambda: redux.mean(x, dim), args.reps)
        total = median_s(lambda: redux.sum(x, dim), args.reps)
        print(f"{label:<22} {mean / torch_mean:16.2f} {total / torch_sum:14.2f} {mean / total:9.2f}")


if __name__ == "__main__":
    main()
