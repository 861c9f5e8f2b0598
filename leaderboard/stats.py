"""Honest numbers on a shared machine: the harness's sampling and statistics.

Every comparison mode (the main job, `shapes`) measures through here:
- interleaved: each round takes ONE sample of every cell still running
  (round-robin over ops and sizes), so a slow phase of the machine hits every
  entry alike instead of one entry's whole measurement;
- the competition's statistics (mean, std, err, best, worst: core.Stats) and
  the median beside them; the competition's stopping rule per cell (standard
  error under 0.1% of the mean, at least MIN_RUNS, at most max_runs, or the
  cell's time budget spent);
- noise flags: a cell whose samples show outliers (NOISE_RULE) is measured
  once more from scratch; if the second measurement is noisy too, the cell is
  marked noisy. Ratios and rankings use ROBUST (the median), which a few
  outliers cannot flip; the mean stays the competition's score.
"""
import time
from dataclasses import dataclass, field
from typing import Callable

from leaderboard import core

ROBUST = "median"
NOISE_WORST_OVER_MEDIAN = 3.0
NOISE_STD_OVER_MEAN = 0.10
NOISE_RULE = (f"worst > {NOISE_WORST_OVER_MEDIAN:g}x median or std > {100 * NOISE_STD_OVER_MEAN:g}% of mean")


class MeasureError(Exception):
    """A sample could not be taken: the op failed its check or raised."""


def is_noisy(st):
    return st.worst > NOISE_WORST_OVER_MEDIAN * st.median or st.std > NOISE_STD_OVER_MEAN * st.mean


@dataclass
class Cell:
    """One (entry, case) to time. sample() takes one timed call and returns
    nanoseconds, or raises MeasureError."""
    key: tuple
    sample: Callable[[], float]
    samples: list = field(default_factory=list)
    spent_s: float = 0.0
    error: str = ""
    first: core.Stats = None   # the first measurement, when it was noisy and taken again
    stats: core.Stats = None   # the result

    def done(self, max_runs, budget_s):
        n = len(self.samples)
        if self.error or n >= max_runs:
            return True
        if n < core.MIN_RUNS:
            return False
        st = core.summarize(self.samples)
        return st.err < core.TARGET_REL_ERR * st.mean or self.spent_s >= budget_s


def _rounds(cells, max_runs, budget_s, on_done=None):
    active = [c for c in cells if not c.done(max_runs, budget_s)]
    while active:
        for c in active:
            t0 = time.perf_counter()
            try:
                c.samples.append(float(c.sample()))
            except MeasureError as e:
                c.error = str(e) or "failed"
            c.spent_s += time.perf_counter() - t0
        still = [c for c in active if not c.done(max_runs, budget_s)]
        if on_done:
            for c in active:
                if c not in still:
                    on_done(c)
        active = still


def measure(cells, max_runs=core.MAX_RUNS, budget_s=3.0, on_done=None):
    """Measures every cell, interleaved; a noisy cell once more. Sets each
    cell's stats (None on error); its stats.noisy says it stayed noisy."""
    _rounds(cells, max_runs, budget_s, on_done)
    again = [c for c in cells if not c.error and is_noisy(core.summarize(c.samples))]
    for c in again:
        c.first = core.summarize(c.samples)
        c.samples, c.spent_s = [], 0.0
    _rounds(again, max_runs, budget_s)
    for c in cells:
        if c.error:
            continue
        c.stats = core.summarize(c.samples)
        c.stats.remeasured = c.first is not None
        c.stats.noisy = c.stats.remeasured and is_noisy(c.stats)
    return cells
