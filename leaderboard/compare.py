"""python -m leaderboard.compare: redux.sum against torch.sum on the six
competition sizes, measured in one run with the competition's method
(leaderboard.core). Prints per-size means, ratios and the geometric mean."""
import argparse
import math

import torch

import redux  # noqa: F401
from leaderboard import core


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seed", type=int, default=4242)
    args = ap.parse_args(argv)
    sizes = core.BENCHMARK_SIZES if args.device.startswith("cuda") else core.CPU_BENCHMARK_SIZES
    fns = {"torch.sum": lambda d: torch.sum(d[0]), "redux.sum": lambda d: torch.ops.redux.sum(d[0])}
    timer = core.Timer(args.device)
    for fn in fns.values():  # warm up
        fn(core.generate_input(1024, 1, args.device))
    rows = {}
    for size in sizes:
        for name, fn in fns.items():
            st, msg = core.benchmark(fn, size, args.seed, args.device, timer=timer)
            if st is None:
                raise SystemExit(f"{name} at {size}: {msg}")
            rows[(name, size)] = st
    print(f"{'size':>12} {'torch.sum us':>13} {'redux.sum us':>13} {'ratio':>7} {'redux GB/s':>11}")
    logs = []
    for size in sizes:
        t, r = rows[("torch.sum", size)].mean, rows[("redux.sum", size)].mean
        logs.append(math.log(r / t))
        print(f"{size:>12} {t / 1e3:>13.2f} {r / 1e3:>13.2f} {r / t:>7.3f} {size * 4 / r:>11.1f}")
    gm_t = math.exp(sum(math.log(rows[("torch.sum", s)].mean) for s in sizes) / len(sizes))
    gm_r = math.exp(sum(math.log(rows[("redux.sum", s)].mean) for s in sizes) / len(sizes))
    print(f"{'geomean':>12} {gm_t / 1e3:>13.2f} {gm_r / 1e3:>13.2f} {gm_r / gm_t:>7.3f}")


if __name__ == "__main__":
    main()
