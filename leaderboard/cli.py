"""python -m leaderboard: score every redux sum variant against torch.sum the
way the GPU-MODE vectorsum_v2 competition does (leaderboard/core.py).

Steps: measure the device's read bandwidth once; check every op on the
competition's test sizes; time every correct op on the benchmark sizes (L2
evicted before each call, CUDA events around the Python call, stop at 0.1%
standard error); print a ranked table; write JSON, markdown and a PNG plot.
Without a GPU the CPU ops run on CPU-sized inputs.

Differences from the competition's runner, on purpose: all ops are timed in
this one process (the competition spawns one child per submission), after a
warm-up call per op and size.
"""
import argparse
import json
import math
import os
import platform
import sys
import time

import torch

from leaderboard import core, ops as ops_mod
from redux.variants import BASELINE


SUBCOMMANDS = {}  # name -> main(argv): export, evaluate, shapes register themselves here


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m leaderboard", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if present)")
    ap.add_argument("--ops", default=None,
                    help="comma-separated op names to score (default: all that run on the device); "
                         "torch.sum is always scored as the baseline")
    ap.add_argument("--submission", action="append", default=[], metavar="FILE",
                    help="also score a Python submission file defining custom_kernel(data) (repeatable)")
    ap.add_argument("--sizes", default=None, help="comma-separated input sizes (default: the six "
                    "competition benchmark sizes on CUDA, smaller ones on the CPU)")
    ap.add_argument("--quick", action="store_true", help="at most 10 timed runs and 1 s per (op, size)")
    ap.add_argument("--ranked", action="store_true",
                    help="leaderboard mode: a fresh seed (seed + 13) and a check on every timed run")
    ap.add_argument("--seed", type=int, default=8675309, help="base seed of the inputs")
    ap.add_argument("--time-budget", type=float, default=3.0, help="seconds per (op, size) at most")
    ap.add_argument("--out", default=os.path.join("leaderboard", "results"),
                    help="directory for leaderboard.json, leaderboard.md and leaderboard.png")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    return ap.parse_args(argv)


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


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def run(args):
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = torch.device(device).type == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda asked for, but no CUDA GPU is visible")
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
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes
             else list(core.BENCHMARK_SIZES if cuda else core.CPU_BENCHMARK_SIZES))
    budget = 1.0 if args.quick else args.time_budget
    max_runs = 10 if args.quick else core.MAX_RUNS

    read_bw = measure_read_bandwidth(device)
    results = {"device": torch.cuda.get_device_name(device) if cuda else platform.processor() or "cpu",
               "torch": torch.__version__, "mode": "ranked" if args.ranked else "benchmark",
               "quick": args.quick, "read_bandwidth_Bps": read_bw, "sizes": sizes, "ops": {}}
    progress = Progress(len(chosen) * (1 + len(sizes)))
    timer = core.Timer(device)
    for name, fn in chosen.items():
        idea, deterministic = ops_mod.describe(name)
        entry = {"idea": idea, "deterministic": deterministic, "tests": {}, "benchmarks": {}, "correct": True}
        for i, size in enumerate(core.TEST_SIZES):  # the competition's test phase
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
        results["ops"][name] = entry
    summarize(results)
    return results


def summarize(results):
    """Adds per-op summary numbers: geometric mean, ranked score, ratios."""
    sizes = results["sizes"]
    base = results["ops"].get(BASELINE, {}).get("benchmarks", {})
    for name, e in results["ops"].items():
        means = [e["benchmarks"].get(str(s), {}).get("mean") for s in sizes]
        e["geomean_ns"] = geomean(means) if e["correct"] and all(means) else None
        last = str(max(sizes))
        e["score_ns"] = e["benchmarks"].get(last, {}).get("mean") if e["correct"] else None
        ratios = [e["benchmarks"][str(s)]["mean"] / base[str(s)]["mean"]
                  for s in sizes if e["correct"] and str(s) in base and "mean" in base[str(s)]
                  and "mean" in e["benchmarks"].get(str(s), {})]
        e["ratio_to_torch"] = geomean(ratios)
        if e["score_ns"]:
            gbps = max(sizes) * 4 / e["score_ns"]  # bytes / ns = GB/s
            e["score_GBps"] = gbps
            bw = results["read_bandwidth_Bps"]
            e["score_fraction_of_read_bw"] = gbps * 1e9 / bw if bw else None


def ranked_names(results):
    def key(item):
        e = item[1]
        return (0, e["score_ns"]) if e["score_ns"] else (1, float("inf"))
    return [n for n, _ in sorted(results["ops"].items(), key=key)]


def table_rows(results):
    sizes = results["sizes"]
    header = (["rank", "op", "ok", "det"] + [f"{s/1e6:.2f}M us" if s >= 1e5 else f"{s} us" for s in sizes]
              + ["GB/s", "of read BW", "x torch", "geomean us", "score us"])
    rows = []
    for rank, name in enumerate(ranked_names(results), 1):
        e = results["ops"][name]
        cells = [str(rank), name, "yes" if e["correct"] else "NO", "yes" if e["deterministic"] else "no"]
        for s in sizes:
            b = e["benchmarks"].get(str(s), {})
            cells.append(f"{b['mean'] / 1e3:.2f}" if "mean" in b else "-")
        cells.append(f"{e['score_GBps']:.0f}" if e.get("score_GBps") else "-")
        frac = e.get("score_fraction_of_read_bw")
        cells.append(f"{100 * frac:.1f}%" if frac else "-")
        cells.append(f"{e['ratio_to_torch']:.3f}" if e.get("ratio_to_torch") else "-")
        cells.append(f"{e['geomean_ns'] / 1e3:.2f}" if e.get("geomean_ns") else "-")
        cells.append(f"{e['score_ns'] / 1e3:.2f}" if e.get("score_ns") else "-")
        rows.append(cells)
    return header, rows


def format_terminal(results):
    header, rows = table_rows(results)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda cells: "  ".join(c.rjust(w) if i != 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    bw = results["read_bandwidth_Bps"]
    out = [f"{results['device']}  torch {results['torch']}  mode {results['mode']}"
           + (f"  read bandwidth {bw / 1e12:.2f} TB/s" if bw else "")]
    out += [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
    for name in ranked_names(results):
        e = results["ops"][name]
        if not e["correct"]:
            bad = {k: v for k, v in {**e["tests"], **{k: b.get("error") for k, b in e["benchmarks"].items()}}.items()
                   if v and v != "pass"}
            out.append(f"  {name}: REJECTED: {next(iter(bad.items()))}")
    out.append(f"score = mean time at {max(results['sizes'])} elements (the ranked number); "
               "x torch = geometric mean of per-size time ratios")
    return "\n".join(out)


def format_markdown(results):
    header, rows = table_rows(results)
    bw = results["read_bandwidth_Bps"]
    md = [f"# Leaderboard: {results['device']}", "",
          f"torch {results['torch']}, mode {results['mode']}"
          + (f", measured read bandwidth {bw / 1e12:.2f} TB/s" if bw else ""), "",
          "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(md) + "\n"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6))
    for name in ranked_names(results):
        e = results["ops"][name]
        pts = [(s, e["benchmarks"][str(s)]["mean"] / 1e3) for s in results["sizes"]
               if "mean" in e["benchmarks"].get(str(s), {})]
        if pts:
            ax.plot(*zip(*pts), marker="o", linewidth=2.5 if name in ("sum", BASELINE) else 1.2,
                    linestyle="--" if name == BASELINE else "-", label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("elements (float32)")
    ax.set_ylabel("mean time per call (us)")
    ax.set_title(f"redux sum variants vs torch.sum: {results['device']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(results, out_dir, make_plot=True):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "leaderboard.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "leaderboard.md"), "w") as f:
        f.write(format_markdown(results))
    if make_plot:
        plot(results, os.path.join(out_dir, "leaderboard.png"))


def _evaluate(argv):
    from leaderboard import popcorn
    return popcorn.main(argv)


def _export(argv):
    from leaderboard import export
    return export.main(argv)


def _shapes(argv):
    from leaderboard import shapes
    return shapes.main(argv)


SUBCOMMANDS.update(evaluate=_evaluate, export=_export, shapes=_shapes)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    args = parse_args(argv)
    results = run(args)
    print(format_terminal(results))
    write_outputs(results, args.out, make_plot=not args.no_plot)
    print(f"wrote {args.out}/leaderboard.json, leaderboard.md" + ("" if args.no_plot else ", leaderboard.png"))
    # Exit 1 when a redux op (not a user submission) is incorrect.
    broken = [n for n, e in results["ops"].items() if not e["correct"] and not n.startswith("file:")]
    return 1 if broken else 0
