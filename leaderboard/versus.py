"""python -m leaderboard versus [FILE ...]: redux's exported submission
against torch.sum and any competition-style submission files, the
competition's way, in one run.

Each entry runs in its own spawned child process (as the competition's
runner spawns one per submission), loaded once and checked on every size
first. Then the parent takes the samples in rounds: in each round, for each
size, every entry takes a few timed calls in turn (the order rotates each
round), so a slow phase of a shared machine hits every entry alike; each
turn starts with one untimed call (the GPU's switch back from another
process's context is not the entry's time). A timed
call is the competition's: synchronize, 256 MiB L2 flush, CUDA events
around the Python call; in leaderboard (ranked) mode every call gets a fresh
seed (seed + 13 each time) and is checked.

Beside the entries, two pure reads of the same bytes under the same timer
(torch.ops.redux._read_probe: no arithmetic, no finish, no check): "read
floor" (resident blocks, grid-stride) and "read floor 16K" (a block per
16 KB piece); the faster of the two, which differs by GPU and size, is the
floor under any entry that reads its input.

Prints a table (mean, the competition's statistic; median; best) and
writes versus.json: {"gpu", "mode", "entries": {ENTRY: {"<size>": {"mean_ns",
"best_ns", "median_ns", "runs"}}}, "disturbed": [REASON, ...]}, redux's
export under "redux" and torch under "torch.sum". "disturbed" lists what
says the host was too busy for the means to rank anything (empty when the
run looks quiet; see disturbance()). `--report FILE` prints the table and
that verdict again from a saved versus.json, without a GPU.
"""
import argparse
import json
import math
import multiprocessing
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_SUM = os.path.join(ROOT, "tests", "solutions", "torch_sum.py")
FLOOR = "read floor"
# The pure reads timed beside the entries: name -> _read_probe's pattern.
# FLOOR (the first) is also the disturbance gauge.
FLOORS = {FLOOR: "grid-stride", "read floor 16K": "pieces"}
SAMPLES_PER_TURN = 5
# A run is disturbed when the read floor (the same pure read every time)
# has a mean this far over its median at some size, or some entry's median
# lies this far over its best. Calibrated on the committed runs: quiet ones
# reach 1.23 and 1.11 (both at 1.64M), the three disturbed H100 runs 2.68-4.28
# and 2.29-5.60.
FLOOR_MEAN_OVER_MEDIAN = 1.30
MEDIAN_OVER_BEST = 1.25

# ---- the child: one entry ----

_kernel = None
_timer = None


def _child_init(path):
    global _kernel, _timer
    import torch
    from leaderboard import core
    _timer = core.Timer("cuda")
    if path in FLOORS:
        import redux  # noqa: F401
        _kernel = lambda data: torch.ops.redux._read_probe(data[0], True, FLOORS[path])  # noqa: E731
    else:
        from leaderboard.ops import load_submission
        _kernel = load_submission(path)[1]


def _child_check(sizes, seed, is_floor):
    """'' when the entry is right at every size (also its warm-up)."""
    from leaderboard import core
    for size in sizes:
        data = core.generate_input(size, seed, "cuda")
        got = _kernel(data)
        msg = "" if is_floor else core.check(got, core.reference(data[0]))
        if msg:
            return f"size {size}: {msg}"
    return ""


def _child_samples(size, seed, ranked, count, is_floor):
    """count timed calls; (ns list, '' or the failed check)."""
    from leaderboard import core
    data = core.generate_input(size, seed, "cuda")
    # One untimed call first: the GPU has just run another process's context,
    # and switching contexts costs the next kernel tens of microseconds,
    # which the competition (one entry per child, run alone) never pays.
    _kernel(data)
    out = []
    for i in range(count):
        if ranked:
            seed += core.RANKED_SEED_STEP
            data = core.generate_input(size, seed, "cuda")
        got, ns = _timer(_kernel, data)
        if ranked and not is_floor:
            msg = core.check(got, core.reference(data[0]))
            if msg:
                return out, f"seed {seed}: {msg}"
        out.append(ns)
    return out, ""


# ---- the parent ----

def entries_from(files, tmp):
    """{name: path}: redux's export, torch.sum, the files, the read floors."""
    from leaderboard import export
    redux_path = os.path.join(tmp, "redux_submission.py")
    with open(redux_path, "w") as f:
        f.write(export.render())
    entries = {"redux": redux_path, "torch.sum": TORCH_SUM}
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        entries[name if name not in entries else path] = os.path.abspath(path)
    for name in FLOORS:
        entries[name] = name
    return entries


def measure(entries, sizes, args):
    """{name: {size: [ns...]}} and {name: error}."""
    ctx = multiprocessing.get_context("spawn")
    pools = {name: ctx.Pool(1, initializer=_child_init, initargs=(path,)) for name, path in entries.items()}
    samples = {name: {s: [] for s in sizes} for name in entries}
    errors = {}
    try:
        for name, pool in pools.items():
            msg = pool.apply(_child_check, (sizes, args.seed, name in FLOORS))
            if msg:
                errors[name] = msg
        names = [n for n in entries if n not in errors]
        turns = math.ceil(args.runs / SAMPLES_PER_TURN)
        for r in range(turns):
            order = names[r % len(names):] + names[:r % len(names)]
            for size in sizes:
                for name in order:
                    if name in errors:
                        continue
                    got, msg = pools[name].apply(_child_samples, (size, args.seed + 1000 * r, args.mode == "leaderboard",
                                                                  SAMPLES_PER_TURN, name in FLOORS))
                    samples[name][size] += got
                    if msg:
                        errors[name] = msg
            sys.stderr.write(f"\rround {r + 1}/{turns}")
        sys.stderr.write("\n")
    finally:
        for pool in pools.values():
            pool.terminate()
    return samples, errors


def summarize(samples, errors):
    from leaderboard import core
    out = {}
    for name, per_size in samples.items():
        if name in errors:
            continue
        out[name] = {}
        for size, ns in per_size.items():
            st = core.summarize(ns)
            out[name][str(size)] = {"mean_ns": st.mean, "best_ns": st.best, "median_ns": st.median, "runs": st.runs}
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def disturbance(entries, sizes):
    """Why this run's means rank nothing (the worst case of each sign), or []
    when it looks quiet. entries: versus.json's "entries"."""
    reasons = []
    if not entries:
        return reasons
    if FLOOR in entries:
        ratio, size = max((entries[FLOOR][str(s)]["mean_ns"] / entries[FLOOR][str(s)]["median_ns"], s)
                          for s in sizes)
        if ratio > FLOOR_MEAN_OVER_MEDIAN:
            reasons.append(f"the read floor's mean is {ratio:.2f}x its median at {size_label(size)} "
                           f"(quiet runs: <= {FLOOR_MEAN_OVER_MEDIAN:.2f}x)")
    ratio, size, name = max((e[str(s)]["median_ns"] / e[str(s)]["best_ns"], s, n)
                            for n, e in entries.items() for s in sizes)
    if ratio > MEDIAN_OVER_BEST:
        reasons.append(f"{name}'s median is {ratio:.2f}x its best at {size_label(size)} "
                       f"(quiet runs: <= {MEDIAN_OVER_BEST:.2f}x)")
    return reasons


def size_label(size):
    return f"{size / 1e6:.2f}M" if size >= 1e5 else str(size)


def report(result, sizes, errors):
    entries = result["entries"]
    last = str(max(sizes))
    rank = sorted((n for n in entries if n not in FLOORS), key=lambda n: entries[n][last]["mean_ns"])
    floors = [n for n in FLOORS if n in entries]
    gm = {n: geomean([entries[n][str(s)]["mean_ns"] for s in sizes]) for n in entries}
    head = f"{'entry':<16}" + "".join(f"{s / 1e6:>9.2f}M" if s >= 1e5 else f"{s:>10}" for s in sizes) + \
        f"{'median':>10}{'best':>9}{'geomean':>10}{'x best other':>14}"
    lines = [f"{result['gpu']}  mode {result['mode']}  mean us per size (the competition's statistic); "
             f"median and best at {int(last):,}", head]
    for n in rank + floors:
        e = entries[n]
        others = [m for m in rank if m != n]
        vs = e[last]["mean_ns"] / min(entries[m][last]["mean_ns"] for m in others) if others and n in rank else None
        lines.append(f"{n:<16}" + "".join(f"{e[str(s)]['mean_ns'] / 1e3:>10.2f}" for s in sizes)
                     + f"{e[last]['median_ns'] / 1e3:>10.2f}{e[last]['best_ns'] / 1e3:>9.2f}{gm[n] / 1e3:>10.2f}"
                     + (f"{vs:>14.3f}" if vs else f"{'-':>14}"))
    if "redux" in entries:
        others = [m for m in rank if m != "redux"]
        if others:
            best_gm = min(gm[m] for m in others)
            lines.append(f"redux geomean over the sizes / best other entry's: {gm['redux'] / best_gm:.3f}")
        for n in floors:
            lines.append(f"redux mean at {int(last):,} / {n}'s: "
                         f"{entries['redux'][last]['mean_ns'] / entries[n][last]['mean_ns']:.3f}")
    reasons = disturbance(entries, sizes)
    lines.append("DISTURBED: the means rank nothing in this run: " + "; ".join(reasons) if reasons
                 else f"quiet: at every size the read floor's mean is within {FLOOR_MEAN_OVER_MEDIAN:.2f}x its "
                 f"median and every entry's median within {MEDIAN_OVER_BEST:.2f}x its best")
    for name, msg in errors.items():
        lines.append(f"{name}: REJECTED: {msg}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m leaderboard versus", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="competition-style submission files to compare")
    ap.add_argument("--mode", choices=("leaderboard", "benchmark"), default="leaderboard",
                    help="leaderboard: fresh seed and a check every call (the ranked mode); benchmark: one input")
    ap.add_argument("--sizes", default=None, help="comma-separated sizes (default: the six benchmark sizes)")
    ap.add_argument("--runs", type=int, default=100, help="timed calls per entry and size (the competition's cap)")
    ap.add_argument("--seed", type=int, default=12345, help="base seed")
    ap.add_argument("--out", default=os.path.join("out", "versus"), help="folder for versus.json (default out/versus)")
    ap.add_argument("--report", metavar="FILE", default=None,
                    help="print the table and the verdict of a saved versus.json (no GPU needed) and exit")
    args = ap.parse_args(argv)
    if args.report:
        return print_saved(args.report)
    import torch
    from leaderboard import core
    if not torch.cuda.is_available():
        print("versus needs a CUDA GPU: the entries are CUDA submissions", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(core.BENCHMARK_SIZES)
    with tempfile.TemporaryDirectory() as tmp:
        entries = entries_from(args.files, tmp)
        print(f"versus on {torch.cuda.get_device_name()}: {', '.join(entries)}; {args.mode} mode, "
              f"{args.runs} calls per entry and size, interleaved", flush=True)
        samples, errors = measure(entries, sizes, args)
    result = {"gpu": torch.cuda.get_device_name(), "mode": args.mode, "entries": summarize(samples, errors)}
    result["disturbed"] = disturbance(result["entries"], sizes)
    print(report(result, sizes, errors))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "versus.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {os.path.join(args.out, 'versus.json')}")
    return 1 if any(n in errors for n in ("redux", "torch.sum")) else 0


def print_saved(path):
    """`--report FILE`: the table and verdict of a saved run."""
    try:
        with open(path) as f:
            result = json.load(f)
        sizes = sorted({int(s) for e in result["entries"].values() for s in e})
        text = report(result, sizes, {})
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"versus --report: cannot read {path!r} as a versus.json: {e}", file=sys.stderr)
        return 2
    print(text)
    return 0
