"""python -m leaderboard: score every redux sum variant against torch.sum the
way the GPU-MODE vectorsum_v2 competition does (leaderboard/core.py).

Steps: measure the device's read bandwidth once; check every op on the
competition's test sizes; time every correct op on the benchmark sizes (L2
evicted before each call, CUDA events around the Python call, stop at 0.1%
standard error); print a ranked table; write JSON, markdown and a PNG plot.
Without a GPU the CPU ops run on CPU-sized inputs.

Differences from the competition's runner, on purpose: redux's ops and
torch.sum are timed in this one process, after a warm-up call per op and
size; each --submission file runs in a child process of its own, as the
competition's runner gives each submission one (a submission that crashes
or hangs fails alone), and its reported times are checked against this
process's clock.
"""
import argparse
import os
import sys


SUBCOMMANDS = {}  # name -> main(argv) of each subcommand (filled in below)
# One line each for --help; `python -m leaderboard NAME --help` tells the rest.
SUBCOMMAND_HELP = {
    "evaluate": "run one submission under the competition's runner protocol (test, benchmark, leaderboard, profile)",
    "export": "write any variant as a one-file competition submission",
    "plot": "draw a saved leaderboard.json or shapes.json record again",
    "shapes": "every performance target against torch.sum and the read floor",
    "versus": "redux against rival submission files, each in its own process, the competition's way",
}


def subcommands_epilog():
    width = max(map(len, SUBCOMMAND_HELP))
    lines = [f"  {name:<{width}}  {text}" for name, text in SUBCOMMAND_HELP.items()]
    return "subcommands (python -m leaderboard NAME --help):\n" + "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m leaderboard", description=__doc__, epilog=subcommands_epilog(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if present)")
    ap.add_argument("--ops", default=None,
                    help="comma-separated op names to score (default: all that run on the device); "
                         "torch.sum is always scored as the baseline")
    ap.add_argument("--submission", action="append", default=[], metavar="FILE",
                    help="also score a Python submission file defining custom_kernel(data) (repeatable)")
    ap.add_argument("--call-timeout", type=float, default=120.0,
                    help="seconds a --submission may take to load or to answer one request (default 120); "
                         "past it, it is stopped and reported as failed")
    ap.add_argument("--sizes", default=None, help="comma-separated input sizes (default: the six "
                    "competition benchmark sizes on CUDA, smaller ones on the CPU)")
    ap.add_argument("--quick", action="store_true", help="at most 10 timed runs and 1 s per (op, size)")
    ap.add_argument("--ranked", action="store_true",
                    help="leaderboard mode: a fresh seed (seed + 13) and a check on every timed run")
    ap.add_argument("--seed", type=int, default=8675309, help="base seed of the inputs")
    ap.add_argument("--time-budget", type=float, default=3.0, help="seconds per (op, size) at most")
    ap.add_argument("--out", default=os.path.join("out", "leaderboard"),
                    help="directory for leaderboard.json, leaderboard.md and leaderboard.png (default: "
                         "out/leaderboard, git-ignored; the committed records are in results/<gpu>/, "
                         "listed in results/INDEX.md)")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    args = ap.parse_args(argv)
    problem = check_args(args)
    if problem:
        ap.error(problem)  # exit 2, the usage and the message
    return args


# Bytes a size needs: the float32 input, its float64 reference copy and room
# for one more float32 copy (a submission's own buffers).
BYTES_PER_ELEMENT = 4 + 8 + 4


def memory_bytes(device):
    """Bytes the device can hold now (free GPU memory, or the machine's
    available memory), or None when unknown."""
    import torch
    if device is not None and device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.mem_get_info(torch.device(device))[0]
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_args(args):
    """The first argument problem as a message naming the argument, or None.
    Leaves args.sizes a list of ints (or None)."""
    if args.time_budget <= 0:
        return f"argument --time-budget: must be a positive number of seconds, got {args.time_budget}"
    if args.call_timeout <= 0:
        return f"argument --call-timeout: must be a positive number of seconds, got {args.call_timeout}"
    if args.sizes is not None:
        try:
            sizes = [int(s) for s in args.sizes.split(",")]
        except ValueError:
            return f"argument --sizes: expected comma-separated positive integers, got {args.sizes!r}"
        if not sizes or min(sizes) < 1:
            return f"argument --sizes: sizes must be positive integers, got {args.sizes!r}"
        args.sizes = sizes  # parsed once, for score.run
        from leaderboard import score  # torch: imported only by the commands that need it
        device = score.device_of(args)
        room = memory_bytes(device)
        if room is not None and max(sizes) * BYTES_PER_ELEMENT > room:
            return (f"argument --sizes: {max(sizes):,} elements need about {max(sizes) * BYTES_PER_ELEMENT:,} bytes; "
                    f"{device} has {room:,} free")
    names = {}
    for path in args.submission:
        if not path.endswith(".py") or not os.path.isfile(path):
            return f"argument --submission: {path!r} is not a Python file (.py) that exists"
        name = os.path.splitext(os.path.basename(path))[0]
        if name in names:
            return f"argument --submission: {path!r} and {names[name]!r} have the same name {name!r}"
        names[name] = path
    return None


def _evaluate(argv):
    from leaderboard import evaluator
    return evaluator.main(argv)


def _export(argv):
    from leaderboard import export
    return export.main(argv)


def _shapes(argv):
    from leaderboard import shapes
    return shapes.main(argv)


def _plot(argv):
    from leaderboard import plots
    return plots.main(argv)


def _versus(argv):
    from leaderboard import versus
    return versus.main(argv)


SUBCOMMANDS.update(evaluate=_evaluate, export=_export, plot=_plot, shapes=_shapes, versus=_versus)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    args = parse_args(argv)
    from leaderboard import report, score
    results = score.run(args)
    print(report.format_terminal(results))
    busy = score.busy_host_warning(*results["host_busy_share"])
    if busy:
        print(busy, file=sys.stderr)
    report.write_outputs(results, args.out, make_plot=not args.no_plot)
    print(f"wrote {args.out}/leaderboard.json, leaderboard.md" + ("" if args.no_plot else ", leaderboard.png"))
    # Exit 1 when a redux op (not a user submission) is incorrect.
    broken = [n for n, e in results["ops"].items() if not e["correct"] and not n.startswith("file:")]
    return 1 if broken else 0
