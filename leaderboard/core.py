"""The competition's method, in one place.

Input generator, reference, checker, timing and stopping rule of GPU MODE's
vectorsum_v2 problem (PMPP practice set), as its published evaluator
(eval.py) and reference code define them. The leaderboard harness and the
evaluator (leaderboard/evaluator.py) both use these functions; nothing else
defines them.
"""
import math
import time
from dataclasses import asdict, dataclass

import torch

# The competition's sizes.
TEST_SIZES = (1023, 1024, 1025, 2048, 4096)
BENCHMARK_SIZES = (1_638_400, 3_276_800, 6_553_600, 13_107_200, 26_214_400, 52_428_800)
RANKED_SIZE = 52_428_800
# CPU-appropriate sizes for machines without a GPU.
CPU_BENCHMARK_SIZES = (65_536, 262_144, 1_048_576, 4_194_304)

# Checker tolerance: |got - ref| <= ATOL + RTOL * |ref|.
RTOL = 1e-5
ATOL = 1e-8

# Timing rules.
L2_EVICT_BYTES = 256 * 1024 * 1024
MAX_RUNS = 100
MIN_RUNS = 3
TARGET_REL_ERR = 0.001  # stop when std/sqrt(runs) < 0.1% of the mean
RANKED_SEED_STEP = 13

# The clock and the CUDA event calls, bound when this module loads (before
# any submission does): a submission that patches time.perf_counter_ns or
# torch.cuda.Event afterwards does not reach the harness's timing.
clock_ns = time.perf_counter_ns
CudaEvent = torch.cuda.Event
record_event = torch.cuda.Event.record
event_elapsed_ms = torch.cuda.Event.elapsed_time
cuda_synchronize = torch.cuda.synchronize
_Tensor = torch.Tensor


def generate_input(size, seed, device="cuda"):
    """(data, output): normal data with a random scale in [0.1, 10] and offset
    in [-100, 100], and a preallocated float32 output of shape [1]."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    data = torch.randn(size, device=device, dtype=torch.float32, generator=gen)
    offset_gen = torch.Generator(device=device)
    offset_gen.manual_seed(seed + 1)
    scale_gen = torch.Generator(device=device)
    scale_gen.manual_seed(seed + 2)
    offset = (torch.rand(1, device=device, generator=offset_gen) * 200 - 100).item()
    scale = (torch.rand(1, device=device, generator=scale_gen) * 9.9 + 0.1).item()
    data = (data * scale + offset).contiguous()
    output = torch.empty(1, device=device, dtype=torch.float32)
    return data, output


def reference(data):
    """The sum in float64, cast to float32 (shape [])."""
    return data.to(torch.float64).sum().to(torch.float32)


def plain_tensor_problem(got):
    """'' when got is a plain torch.Tensor, else why not. Stricter than the
    competition: a tensor subclass can compute its value only when the
    checker reads it, after the timed call."""
    if type(got) is not _Tensor:
        kind = "a tensor subclass" if isinstance(got, _Tensor) else "not a tensor"
        return f"expected a plain torch.Tensor, got {type(got).__module__}.{type(got).__qualname__} ({kind})"
    return ""


def synchronize(device):
    if torch.device(device).type == "cuda":
        cuda_synchronize(device)


def check(got, expected):
    """'' when got matches expected, else the reason (the competition's rules,
    and a plain tensor)."""
    problem = plain_tensor_problem(got)
    if problem:
        return problem
    if got.shape != expected.shape:
        return f"shape mismatch: got {tuple(got.shape)}, expected {tuple(expected.shape)}"
    g = got.detach().to(torch.float64).cpu()
    e = expected.detach().to(torch.float64).cpu()
    g_nan, e_nan = torch.isnan(g), torch.isnan(e)
    g_inf, e_inf = torch.isinf(g), torch.isinf(e)
    if not torch.equal(g_nan, e_nan):
        return "NaN in one of result and reference but not the other"
    if not torch.equal(g_inf, e_inf) or not torch.equal(g[g_inf], e[e_inf]):
        return "inf in one of result and reference but not the other"
    fin = ~(g_nan | g_inf)
    diff = (g[fin] - e[fin]).abs()
    bad = diff > ATOL + RTOL * e[fin].abs()
    if bad.any():
        i = int(bad.nonzero()[0])
        return (f"mismatch: got {g[fin][i].item():.9g}, expected {e[fin][i].item():.9g} "
                f"(|diff| {diff[i].item():.3g} > {ATOL} + {RTOL} * |expected|)")
    return ""


@dataclass
class Stats:
    """The competition's statistics of one case (runs, mean, std, err, best,
    worst; ns), the median beside them, and the harness's noise marks
    (leaderboard/stats.py): remeasured (the first measurement was noisy) and
    noisy (the second was too)."""
    runs: int
    mean: float  # ns
    std: float
    err: float
    best: float
    worst: float
    median: float
    remeasured: bool = False
    noisy: bool = False

    def as_dict(self):
        return asdict(self)


def summarize(samples_ns):
    n = len(samples_ns)
    mean = sum(samples_ns) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in samples_ns) / (n - 1)) if n > 1 else 0.0
    ordered = sorted(samples_ns)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return Stats(runs=n, mean=mean, std=std, err=std / math.sqrt(n), best=ordered[0], worst=ordered[-1],
                 median=median)


class Timer:
    """Times one call the competition's way: synchronize, evict L2 by writing
    a 256 MiB scratch tensor, CUDA events around the Python call, synchronize.
    On the CPU: a monotonic clock around the call."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.scratch = torch.empty(L2_EVICT_BYTES // 4, dtype=torch.float32, device=self.device) if self.cuda else None
        self.flush_host_ns = 0  # the last flush's launch, on the host: a gauge of how busy the host is

    def flush(self):
        """Synchronize, then evict L2 (256 MiB of writes); returns the host
        ns that launching the flush took (the same work every time, outside
        the timed window, whatever is being timed)."""
        cuda_synchronize(self.device)
        t0 = clock_ns()
        self.scratch.fill_(1.0)
        self.flush_host_ns = clock_ns() - t0
        return self.flush_host_ns

    def __call__(self, fn, *args):
        if not self.cuda:
            t0 = clock_ns()
            out = fn(*args)
            return out, float(clock_ns() - t0)
        self.flush()
        start = CudaEvent(enable_timing=True)
        end = CudaEvent(enable_timing=True)
        record_event(start)
        out = fn(*args)
        record_event(end)
        cuda_synchronize(self.device)
        return out, event_elapsed_ms(start, end) * 1e6


def benchmark(fn, size, seed, device, ranked=False, max_time_s=10.0, timer=None, max_runs=MAX_RUNS):
    """Times fn((data, output)) until the standard error is below 0.1% of the
    mean (at least MIN_RUNS, at most MAX_RUNS runs, or max_time_s). One check
    before timing; in ranked mode a fresh seed (seed + 13 each time) and a
    check on every run. Returns (Stats or None, error message)."""
    timer = timer or Timer(device)
    data, output = generate_input(size, seed, device)
    msg = check(fn((data, output)), reference(data))
    if msg:
        return None, msg
    samples = []
    t_end = clock_ns() + max_time_s * 1e9
    for i in range(max_runs):
        if ranked:
            seed += RANKED_SEED_STEP
            data, output = generate_input(size, seed, device)
            expected = reference(data)
        got, ns = timer(fn, (data, output))
        if ranked:
            msg = check(got, expected)
            if msg:
                return None, f"run {i} (seed {seed}): {msg}"
        samples.append(ns)
        if len(samples) >= MIN_RUNS:
            st = summarize(samples)
            if st.err < TARGET_REL_ERR * st.mean or clock_ns() > t_end:
                break
    return summarize(samples), ""
