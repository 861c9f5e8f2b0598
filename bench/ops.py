"""Is each of redux's reductions as fast as torch's own on model shapes?

    python bench/ops.py [--device cuda|cpu] [--threads N] [--reps 30] [--out FILE]
                        [--ops softmax,logsumexp] [--shapes 128256] [--dtype bfloat16]

For each op (sum, mean, var, std, var_mean, logsumexp, softmax,
log_softmax, vector_norm with ord 2 and inf, amax, amin) and each shape, rows
(the last dim reduced, as a model's norms and softmaxes do) and columns
(dim 0, as a bias gradient does) of widths 1024 and 8192, rows of a
128256-token vocabulary (a cross-entropy's logsumexp), and one full
sum of the competition's ranked size: the median time per call of
torch's op and of redux's (torch.ops.redux), measured in the same run,
one after the other for each shape, and their ratio (below 1: redux is
faster). Each redux result is first checked against torch's op in
float64 within the dtype's tolerance (torch's float32 answer can be further
off: its log_softmax of 4M elements by 7e-5). For ops that write as much as they read (softmax,
log_softmax), the last column is redux's time over a copy of the input
(x.clone(), the read-and-write floor the hardware allows).

--ops and --shapes time a part of the table (the ops named, the shapes
whose label holds the text), for a quick comparison; --out, which writes
the record, takes the whole table. --dtype (float32 by default, bfloat16,
float16) is the inputs' dtype, and so each op's output's.

CUDA: CUDA events around each call, the L2 flushed by a 256 MiB write
before it. CPU: wall time, torch's intra-op threads set to --threads
(default: every core).
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's redux
import redux  # noqa: E402,F401  registers torch.ops.redux

OPS = {  # name: (torch's call, redux's call, writes as much as it reads)
    "sum": (lambda x, d: torch.sum(x, d), lambda x, d: torch.ops.redux.sum(x, d), False),
    "mean": (lambda x, d: torch.mean(x, d), lambda x, d: torch.ops.redux.mean(x, d), False),
    "var": (lambda x, d: torch.var(x, d), lambda x, d: torch.ops.redux.var(x, d), False),
    "std": (lambda x, d: torch.std(x, d), lambda x, d: torch.ops.redux.std(x, d), False),
    "var_mean": (lambda x, d: torch.var_mean(x, d), lambda x, d: torch.ops.redux.var_mean(x, d), False),
    "logsumexp": (lambda x, d: torch.logsumexp(x, d), lambda x, d: torch.ops.redux.logsumexp(x, d), False),
    "softmax": (lambda x, d: torch.softmax(x, d[0]), lambda x, d: torch.ops.redux.softmax(x, d[0]), True),
    "log_softmax": (lambda x, d: torch.log_softmax(x, d[0]), lambda x, d: torch.ops.redux.log_softmax(x, d[0]),
                    True),
    "norm 2": (lambda x, d: torch.linalg.vector_norm(x, 2, d), lambda x, d: torch.ops.redux.vector_norm(x, 2, d),
               False),
    "norm inf": (lambda x, d: torch.linalg.vector_norm(x, float("inf"), d),
                 lambda x, d: torch.ops.redux.vector_norm(x, float("inf"), d), False),
    "amax": (lambda x, d: torch.amax(x, d), lambda x, d: torch.ops.redux.amax(x, d), False),
    "amin": (lambda x, d: torch.amin(x, d), lambda x, d: torch.ops.redux.amin(x, d), False),
}


def shapes(device):
    """(label, shape, dims): rows and columns of model widths, vocabulary rows, one full reduction."""
    counts = (1, 256, 4096, 32768) if device == "cuda" else (1, 256, 2048)
    out = []
    for width in (1024, 8192):
        for rows in counts:
            out.append((f"({rows}, {width}) rows", (rows, width), [1]))
    vocab_rows = 256 if device == "cuda" else 8  # a cross-entropy's rows over a 128256-token vocabulary
    out.append((f"({vocab_rows}, 128256) rows", (vocab_rows, 128256), [1]))
    for rows, width in (((4096, 1024), (32768, 1024)) if device == "cuda" else ((2048, 1024),)):
        out.append((f"({rows}, {width}) cols", (rows, width), [0]))
    out.append(("52,428,800 full" if device == "cuda" else "4,194,304 full",
                (52428800 if device == "cuda" else 1 << 22,), [0]))
    return out


class Timer:
    def __init__(self, device, reps):
        self.device, self.reps = device, reps
        self.flush = torch.empty(64 << 20, dtype=torch.float32, device=device) if device == "cuda" else None

    def us(self, fn):
        """Median microseconds of fn() over the reps (after one warm-up call)."""
        fn()
        times = []
        for _ in range(self.reps):
            if self.device == "cuda":
                self.flush.fill_(1.0)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TOLERANCE = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 2e-3}  # a few of the dtype's ulps


def agree(ours, reference, tol):
    """Whether redux's outputs match the float64 reference rounded to their dtype (so a float16 sum past
    65504 is inf in both)."""
    ours = ours if isinstance(ours, tuple) else (ours,)
    reference = reference if isinstance(reference, tuple) else (reference,)
    return all(torch.allclose(x.double(), y.to(x.dtype).double(), rtol=tol, atol=tol) for x, y in zip(ours, reference))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=0, help="CPU: torch's intra-op threads (default: every core)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--out", default="", help="also write the table to this file")
    ap.add_argument("--ops", default="", help="comma-separated ops to time (default: all): " + ", ".join(OPS))
    ap.add_argument("--shapes", default="", help="time only the shapes whose label holds this text (e.g. 128256, cols)")
    ap.add_argument("--dtype", choices=list(DTYPES), default="float32", help="the inputs' dtype (default: float32)")
    args = ap.parse_args()
    ops = [o.strip() for o in args.ops.split(",") if o.strip()] or list(OPS)
    unknown = [o for o in ops if o not in OPS]
    if unknown:
        ap.error(f"--ops: unknown op {unknown[0]!r}; choose from {', '.join(OPS)}")
    chosen = [s for s in shapes(args.device) if args.shapes in s[0]]
    if not chosen:
        ap.error(f"--shapes: no shape's label holds {args.shapes!r}; the labels: "
                 + "; ".join(s[0] for s in shapes(args.device)))
    if args.out and (args.ops or args.shapes):
        ap.error("--out writes the record, which holds the whole table: drop --ops and --shapes")
    if args.device == "cpu" and args.threads:
        torch.set_num_threads(args.threads)
    timer = Timer(args.device, args.reps)
    where = (torch.cuda.get_device_name() if args.device == "cuda"
             else f"CPU, {torch.get_num_threads()} threads")
    dtype = DTYPES[args.dtype]
    lines = [f"{where}, torch {torch.__version__}, {args.dtype}, median of {args.reps}; us per call, redux / torch "
             "(below 1: redux faster); floor: redux / x.clone() for ops that write what they read",
             f"{'op':<12} {'shape':<24} {'torch':>10} {'redux':>10} {'ratio':>6} {'floor':>6}"]
    print("\n".join(lines), flush=True)
    g = torch.Generator(device=args.device).manual_seed(0)
    for label, shape, dims in chosen:
        x = torch.randn(shape, generator=g, device=args.device).mul_(2).add_(3).to(dtype)
        copy_us = timer.us(lambda: x.clone())
        for name in ops:
            theirs, ours, writes = OPS[name]
            if not agree(ours(x, dims), theirs(x.double(), dims), TOLERANCE[dtype]):
                raise SystemExit(f"{name} {label}: redux's result differs from the float64 one beyond {args.dtype} "
                                 "tolerance")
            t_us, r_us = timer.us(lambda: theirs(x, dims)), timer.us(lambda: ours(x, dims))
            floor = f"{r_us / copy_us:6.2f}" if writes else f"{'-':>6}"
            line = f"{name:<12} {label:<24} {t_us:10.1f} {r_us:10.1f} {r_us / t_us:6.2f} {floor}"
            lines.append(line)
            print(line, flush=True)
        del x
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
