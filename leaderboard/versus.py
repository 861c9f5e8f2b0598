"""python -m leaderboard versus [FILE ...]: redux's exported submission
against torch.sum and any competition-style submission files, the
competition's way, in one run.

First each entry is loaded (the export compiled) and checked at every
size, each in a process of its own, all at once. Then the parent takes
the samples in rounds. In each round every entry, in an order that
rotates, takes one turn in a fresh child process of its own (as the
competition's runner gives each submission its own process): the child
loads the entry, checks it at every size, takes a few timed calls at
each size (after three thrown away) and exits before the next child
starts. So a slow phase of a shared
machine hits every entry alike, and only the timed entry's CUDA context
exists while it is timed (the parent never touches the GPU). A timed call
is the competition's: synchronize, 256 MiB L2 flush, CUDA events around
the Python call; in leaderboard (ranked) mode every call gets a fresh seed
(seed + 13 each time) and is checked.

The events time the host's launch too, and a shared host has slow phases
(tens of ms in which every host step runs several times slower). The host
gauge is the launch of the L2 flush, the same work whatever is timed: a
call is retaken when the flush launch just before or just after it took
over 1.5x the usual host time, or when its launch was exposed (the host
time from the flush's launch to the call's return outlasted the flush on
the GPU, so the GPU waited for the host inside the timed window), and a
turn that begins with the usual itself 1.5x the run's, or whose calls run
out of retakes, is taken again. The retakes per entry are printed and
saved; --no-retake keeps every call, as the competition does.

Beside the entries, two pure reads of the same bytes under the same timer
(torch.ops.redux._read_probe: no arithmetic, no finish, no check): "read
floor" (resident blocks, grid-stride) and "read floor 16K" (a block per
16 KB piece); the faster of the two, which differs by GPU and size, is the
floor under any entry that reads its input.

Prints a table (mean, the competition's statistic; median; best) and
writes versus.json: {"gpu", "mode", "entries": {ENTRY: {"<size>": {"mean_ns",
"best_ns", "median_ns", "runs"}}}, "retaken": {ENTRY: {"<size>": CALLS}},
"turns_retaken": {ENTRY: TURNS}, "host_slow": the gauge's factor (null with
--no-retake), "exposed_rule": whether exposed launches were retaken too,
"out_of_retakes_rule": whether a turn that ran out of retakes was taken again,
"disturbed": [REASON, ...]}, redux's
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
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_SUM = os.path.join(ROOT, "tests", "solutions", "torch_sum.py")
FLOOR = "read floor"
# The pure reads timed beside the entries: name -> _read_probe's pattern.
# FLOOR (the first) is also the disturbance gauge.
FLOORS = {FLOOR: "grid-stride", "read floor 16K": "pieces"}
SAMPLES_PER_TURN = 10
# The longest one turn may take: the first loads of the export compile it
# (load_inline, a few minutes on a fresh machine).
CHILD_TIMEOUT_S = 1200.0
WARMUP_CALLS = 3
# The host gauge: a shared host has slow phases (tens of ms in which every
# host step, the flush's launch included, runs several times slower), and
# the CUDA events around a Python call time the host's launch too. A call
# is retaken when a flush launch beside it took over HOST_SLOW x the usual
# one: the median of GAUGE_FLUSHES at the turn's start, or the run's usual
# (the median over the turns kept so far) when lower: on a busy host 1.5x
# caught 59-96% of the slow calls' excess, 2x 27-89% (bench/host_gauge.py;
# docs/notes/measuring.md).
# A call is also retaken when its launch was exposed (ExposureTimer): every
# call over 1.5x the median was exposed, and retaking the exposed ones
# missed none of their excess while flagging far fewer calls.
# A turn that starts with its usual over HOST_SLOW x the run's is given up
# and taken again (the last of TURN_TRIES is kept whatever the gauge says),
# and so is one whose calls at some size ran out of retakes (a slow phase
# longer than the turn's retakes: past them every call was kept).
HOST_SLOW = 1.5
GAUGE_FLUSHES = 25
RETAKES_PER_CALL = 3
TURN_TRIES = 3
# A run is disturbed when the read floor (the same pure read every time)
# has a mean this far over its median at some size, or some entry's median
# lies this far over its best. Calibrated on the committed runs: quiet ones
# reach 1.23 and 1.11 (both at 1.64M), the three disturbed H100 runs 2.68-4.28
# and 2.29-5.60.
FLOOR_MEAN_OVER_MEDIAN = 1.30
MEDIAN_OVER_BEST = 1.25

# ---- the child: one entry's turn ----

def _child_turn(conn, path, sizes, seed, ranked, count, retake, run_usual_ns, last_try):
    """One entry's turn, in a fresh process: load it, check it at every
    size, then at each size WARMUP_CALLS timed calls thrown away and `count`
    kept. Sends {"gpu", "samples": {size: [ns...]}, "retaken": {size: calls},
    "error": '' or why the entry is rejected, "gauge_ns": this process's
    usual flush launch, "busy": the turn was given up (see _turn)}."""
    try:
        result = _turn(path, sizes, seed, ranked, count, retake, run_usual_ns, last_try)
    except BaseException as e:  # an entry that raises is rejected, not fatal
        result = _result(error=f"raised {type(e).__name__}: {e}")
    answer(conn, result)
    conn.close()


def answer(conn, result):
    """A child's answer to the parent: JSON, since unpickling would run the
    child's bytes in the parent."""
    conn.send_bytes(json.dumps(result).encode())


def _result(gpu="", samples=None, retaken=None, error="", gauge_ns=0.0, busy=False):
    return {"gpu": gpu, "samples": samples or {}, "retaken": retaken or {}, "error": error, "gauge_ns": gauge_ns,
            "busy": busy}


def _turn(path, sizes, seed, ranked, count, retake, run_usual_ns, last_try):
    import torch
    from leaderboard import core
    is_floor = path in FLOORS
    if is_floor:
        import redux  # noqa: F401
        kernel = lambda data: torch.ops.redux._read_probe(data[0], True, FLOORS[path])  # noqa: E731
    else:
        from leaderboard.ops import load_submission
        kernel = load_submission(path)[1]
    timer = ExposureTimer("cuda")
    for size in sizes:
        data = core.generate_input(size, seed, "cuda")
        got = kernel(data)
        msg = "" if is_floor else core.check(got, core.reference(data[0]))
        if msg:
            return _result(error=f"size {size}: {msg}")
    if not count:  # the load-and-check turn
        return _result(torch.cuda.get_device_name())
    gauge_ns = statistics.median(timer.flush() for _ in range(GAUGE_FLUSHES))
    if retake and not last_try and turn_is_busy(gauge_ns, run_usual_ns):
        return _result(gauge_ns=gauge_ns, busy=True)
    slow_ns = HOST_SLOW * min(gauge_ns, run_usual_ns or gauge_ns) if retake else math.inf
    samples, retaken = {}, {}
    for size in sizes:
        # Timed calls thrown away first: a fresh process's first timed call
        # pays one-time host costs (on H100s, 88-212 us against 7.2-7.5 us at
        # 1.64M), which no call of a long-lived process pays.
        _, _, msg = _timed_calls(kernel, timer, size, seed - WARMUP_CALLS * core.RANKED_SEED_STEP, ranked,
                                 WARMUP_CALLS, is_floor, math.inf)
        if not msg:
            samples[size], retaken[size], msg = _timed_calls(kernel, timer, size, seed, ranked, count, is_floor,
                                                             slow_ns)
        if msg:
            return _result(samples=samples, retaken=retaken, error=f"size {size}, {msg}")
        if retake and not last_try and retakes_ran_out(retaken[size], count):
            return _result(gauge_ns=gauge_ns, busy=True)
    return _result(torch.cuda.get_device_name(), samples, retaken, gauge_ns=gauge_ns)


class ExposureTimer:
    """core.Timer (the competition's call, which it times) that also tells
    whether the host's launch showed in the timed window: `exposed` is set
    when the host time from the flush's launch to the call's return
    outlasted the flush's GPU time (an event recorded before the flush,
    outside the window). Not exposed: the call was launched while the GPU
    still flushed, so the events timed the GPU alone. The entry's own host
    path counts too, but the flush runs ~90 us on the GPU, far longer than a
    light entry's launch."""

    def __init__(self, device):
        from leaderboard import core
        self.timer = core.Timer(device)
        self.device = self.timer.device
        self.launch_host_ns = self.flush_gpu_ns = 0.0  # the last call's
        self.exposed = False

    @property
    def flush_host_ns(self):
        return self.timer.flush_host_ns

    def flush(self):
        return self.timer.flush()

    def __call__(self, fn, *args):
        from leaderboard import core
        # core's clock and event calls, bound before any entry loaded (an entry cannot patch them)
        core.cuda_synchronize(self.device)
        before, start, end = (core.CudaEvent(enable_timing=True) for _ in range(3))
        core.record_event(before)
        t0 = core.clock_ns()
        self.timer.scratch.fill_(1.0)
        self.timer.flush_host_ns = core.clock_ns() - t0
        core.record_event(start)
        out = fn(*args)
        core.record_event(end)
        self.launch_host_ns = core.clock_ns() - t0
        core.cuda_synchronize(self.device)
        self.flush_gpu_ns = core.event_elapsed_ms(before, start) * 1e6
        self.exposed = launch_exposed(self.launch_host_ns, self.flush_gpu_ns)
        return out, core.event_elapsed_ms(start, end) * 1e6


def launch_exposed(launch_host_ns, flush_gpu_ns):
    """A call's launch showed in its timed window: from the flush's launch to
    the call's return the host took longer than the flush ran on the GPU."""
    return launch_host_ns > flush_gpu_ns


def turn_is_busy(gauge_ns, run_usual_ns):
    """A turn begun in a slow phase of the host: its usual flush launch over
    HOST_SLOW x the run's (0: the run has no usual yet)."""
    return bool(run_usual_ns) and gauge_ns > HOST_SLOW * run_usual_ns


def retakes_ran_out(retaken, count):
    """count calls took every retake they may: the calls kept after that were
    kept however busy the host was."""
    return retaken >= RETAKES_PER_CALL * count


def host_busy(before_ns, after_ns, slow_ns):
    """The gauge's verdict on one call: the flush launch before it or right
    after it took over slow_ns on the host."""
    return max(before_ns, after_ns) > slow_ns


def _timed_calls(kernel, timer, size, seed, ranked, count, is_floor, slow_ns):
    """count calls timed the competition's way (ranked: a fresh input, seed
    + 13 each time, checked). A call is retaken when the host was busy
    around it: the launch of the flush before it or of one right after it
    took over slow_ns, or (slow_ns finite: retakes on) its launch was
    exposed; after RETAKES_PER_CALL * count retakes every call is kept.
    ([ns...], calls retaken, '' or the failed check)."""
    from leaderboard import core
    data = None if ranked else core.generate_input(size, seed, timer.device)
    out, retaken = [], 0
    while len(out) < count:
        if ranked:
            seed += core.RANKED_SEED_STEP
            data = core.generate_input(size, seed, timer.device)
        got, ns = timer(kernel, data)
        exposed = math.isfinite(slow_ns) and timer.exposed
        busy = host_busy(timer.flush_host_ns, timer.flush(), slow_ns) or exposed
        if ranked and not is_floor:
            msg = core.check(got, core.reference(data[0]))
            if msg:
                return out, retaken, f"seed {seed}: {msg}"
        if busy and not retakes_ran_out(retaken, count):
            retaken += 1
        else:
            out.append(ns)
    return out, retaken, ""


# ---- the parent ----

def _context():
    """Children fork from a server that has imported torch but never touched
    CUDA, so each starts clean and in well under a second (spawning afresh
    would import torch each turn)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "leaderboard.core"])
    return ctx


def start_child(ctx, target, args):
    """target(conn, *args) started in a new process: (process, the pipe's
    end it answers on)."""
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(send, *args), daemon=True)
    proc.start()
    send.close()
    return proc, recv


def wait_child(proc, recv, timeout_s=CHILD_TIMEOUT_S):
    """Waits for a started child until it has exited (so its CUDA context is
    gone): (what it sent, '') or (None, why not)."""
    got, why = None, ""
    try:
        if recv.poll(timeout_s):
            got = json.loads(recv.recv_bytes())
        else:
            why = f"no answer in {timeout_s:.0f} s"
    except EOFError:
        pass
    except (ValueError, TypeError) as e:
        why = f"a malformed answer ({e})"
    finally:
        recv.close()
        if why:
            proc.terminate()
        proc.join()
    if got is None and not why:
        why = f"its process died (exit code {proc.exitcode})"
    return got, why


def run_child(ctx, target, args, timeout_s=CHILD_TIMEOUT_S):
    """target(conn, *args) in a new process, waited for until it has exited:
    (what it sent, '') or (None, why not)."""
    return wait_child(*start_child(ctx, target, args), timeout_s)


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


def load_all(ctx, entries, sizes, args, turn):
    """A first turn of no timed calls for each entry: it is loaded (the
    export is compiled, minutes on a fresh machine, a host busy for a while
    after) and checked at every size before any entry is timed. These turns
    run at once, each in its own process (nothing is timed yet), so the
    compiles of the export and the files overlap. Returns ({name: error},
    gpu name)."""
    errors, gpu = {}, ""
    loading = {name: start_child(ctx, turn, (path, sizes, args.seed, args.mode == "leaderboard", 0, False, 0.0, True))
               for name, path in entries.items()}
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    for name, child in loading.items():
        got, why = wait_child(*child, max(1.0, deadline - time.monotonic()))
        if got is None or got["error"]:
            errors[name] = why if got is None else got["error"]
        else:
            gpu = got["gpu"] or gpu
    return errors, gpu


def measure(entries, sizes, args, turn=_child_turn):
    """Rounds of turns: in each round every entry, in an order that rotates,
    takes one turn in a process of its own, which exits before the next
    starts, so only one CUDA context exists while anything is timed (stop
    32 saw the H200's runs grow noisier with each idle context of the other
    entries' processes). Returns ({name: {size: [ns...]}}, {"calls": {name:
    {size: calls retaken}}, "turns": {name: turns taken again}}, {name:
    error}, gpu name)."""
    ctx = _context()
    samples = {name: {s: [] for s in sizes} for name in entries}
    retaken = {"calls": {name: {s: 0 for s in sizes} for name in entries}, "turns": {name: 0 for name in entries}}
    gauges = []  # the usual flush launch of every kept turn: the run's usual is their median
    names = list(entries)
    started = time.monotonic()
    errors, gpu = load_all(ctx, entries, sizes, args, turn)
    sys.stderr.write(f"entries loaded and checked ({time.monotonic() - started:.0f} s)\n")
    rounds = math.ceil(args.runs / SAMPLES_PER_TURN)
    for r in range(rounds):
        count = min(SAMPLES_PER_TURN, args.runs - r * SAMPLES_PER_TURN)
        for name in names[r % len(names):] + names[:r % len(names)]:
            for attempt in range(TURN_TRIES):
                if name in errors:
                    break
                run_usual = statistics.median(gauges) if len(gauges) >= 3 else 0.0
                got, why = run_child(ctx, turn, (entries[name], sizes, args.seed + 1000 * r, args.mode == "leaderboard",
                                                 count, not args.no_retake, run_usual, attempt == TURN_TRIES - 1))
                if got is None:
                    errors[name] = why
                elif got["busy"]:
                    retaken["turns"][name] += 1
                    continue
                else:
                    gpu = got["gpu"] or gpu
                    gauges.append(got["gauge_ns"])
                    for size, ns in got["samples"].items():
                        samples[name][int(size)] += ns
                    for size, n in got["retaken"].items():
                        retaken["calls"][name][int(size)] += n
                    if got["error"]:
                        errors[name] = got["error"]
                break
        # Elapsed time and turns given up so far: why a run outgrows its call on a busy host.
        sys.stderr.write(f"\rround {r + 1}/{rounds} ({time.monotonic() - started:.0f} s, "
                         f"{sum(retaken['turns'].values())} turns taken again)")
    sys.stderr.write("\n")
    return samples, retaken, errors, gpu


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
    # Absent from runs saved before the retakes existed.
    if "host_slow" in result and not result["host_slow"]:
        lines.append("no call retaken (--no-retake)")
    elif "retaken" in result:
        slow = f"{result['host_slow']:.1f}x" if "host_slow" in result else "a factor (not saved) of"
        total = {n: sum(per.values()) for n, per in result["retaken"].items()}
        why = f"a flush launch over {slow} its usual host time"
        if result.get("exposed_rule"):
            why += ", or the launch exposed: the host slower than the flush on the GPU"
        lines.append(f"calls retaken, the host busy around them ({why}): "
                     + ", ".join(f"{n} {k}" for n, k in total.items()))
        if "turns_retaken" in result:
            why = " or out of retakes" if result.get("out_of_retakes_rule") else ""
            lines.append(f"turns taken again, begun with the host that much slower than the run's usual{why}: "
                         + ", ".join(f"{n} {k}" for n, k in result["turns_retaken"].items()))
    reasons = disturbance(entries, sizes)
    lines.append("DISTURBED: the means rank nothing in this run: " + "; ".join(reasons) if reasons
                 else f"quiet: at every size the read floor's mean is within {FLOOR_MEAN_OVER_MEDIAN:.2f}x its "
                 f"median and every entry's median within {MEDIAN_OVER_BEST:.2f}x its best")
    if rank:
        # The verdict reads medians and the floor; a few slow calls of one
        # entry can still move that entry's mean (the ranked statistic).
        ratio, size, name = max((entries[n][str(s)]["mean_ns"] / entries[n][str(s)]["median_ns"], s, n)
                                for n in rank for s in sizes)
        lines.append(f"largest mean over median: {name}'s, {ratio:.2f}x at {size_label(size)}")
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
    ap.add_argument("--no-retake", action="store_true",
                    help="keep every timed call, also those the host gauge marks as taken in a slow phase of the "
                         "host or with their launch exposed, and every turn (the competition keeps them all)")
    ap.add_argument("--out", default=os.path.join("out", "versus"), help="folder for versus.json (default out/versus)")
    ap.add_argument("--report", metavar="FILE", default=None,
                    help="print the table and the verdict of a saved versus.json (no GPU needed) and exit")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs must be at least 1 (got {args.runs})")
    if args.report:
        return print_saved(args.report)
    import torch
    from leaderboard import core
    if not torch.cuda.is_available():
        print("versus needs a CUDA GPU: the entries are CUDA submissions", file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(core.BENCHMARK_SIZES)
    # This process never touches the GPU (is_available creates no context):
    # the children's contexts are the only ones alive while they time.
    with tempfile.TemporaryDirectory() as tmp:
        entries = entries_from(args.files, tmp)
        print(f"versus: {', '.join(entries)}; {args.mode} mode, {args.runs} calls per entry and size, "
              f"in turns of {SAMPLES_PER_TURN}, one process a turn", flush=True)
        samples, retaken, errors, gpu = measure(entries, sizes, args)
    result = {"gpu": gpu, "mode": args.mode, "entries": summarize(samples, errors),
              "retaken": {n: {str(s): k for s, k in per.items()} for n, per in retaken["calls"].items()
                          if n not in errors},
              "turns_retaken": {n: k for n, k in retaken["turns"].items() if n not in errors},
              "host_slow": None if args.no_retake else HOST_SLOW, "exposed_rule": not args.no_retake,
              "out_of_retakes_rule": not args.no_retake}
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
