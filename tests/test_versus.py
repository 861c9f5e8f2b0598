"""python -m leaderboard versus (leaderboard/versus.py): redux's export
against torch.sum and submission files, each in its own spawned child,
interleaved, with the read floor; its report and versus.json."""
import json
import os

import pytest
import torch

from conftest import HAS_CUDA, cuda
from leaderboard import versus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRIES = [os.path.join(ROOT, "bench", "entries", f) for f in ("atomic_fp32.py", "chunked_fp32.py")]


def fake_result():
    sizes = [1000, 2000]
    samples = {"redux": {1000: [10.0, 11.0, 10.0], 2000: [20.0, 21.0, 20.0]},
               "torch.sum": {1000: [12.0, 12.0, 13.0], 2000: [25.0, 24.0, 26.0]},
               versus.FLOOR: {1000: [8.0, 8.0, 8.0], 2000: [18.0, 18.0, 18.0]},
               "read floor 16K": {1000: [7.0, 7.0, 7.0], 2000: [17.0, 17.0, 17.0]}}
    return sizes, {"gpu": "fake", "mode": "leaderboard", "entries": versus.summarize(samples, {})}


def test_summary_has_the_promised_format():
    _, result = fake_result()
    cell = result["entries"]["redux"]["2000"]
    assert set(cell) == {"mean_ns", "best_ns", "median_ns", "runs"}
    assert cell["runs"] == 3 and cell["best_ns"] == 20.0 and cell["median_ns"] == 20.0
    assert abs(cell["mean_ns"] - 61 / 3) < 1e-9


def test_report_ranks_by_mean_and_states_the_ratios():
    sizes, result = fake_result()
    text = versus.report(result, sizes, {"broken": "size 1000: mismatch"})
    lines = text.splitlines()
    assert lines[2].startswith("redux") and lines[3].startswith("torch.sum")
    assert lines[4].startswith("read floor ") and lines[5].startswith("read floor 16K")
    assert "best other entry's: 0.8" in text and "read floor's: 1.130" in text and "read floor 16K's: 1.196" in text
    assert "broken: REJECTED" in text


def test_a_quiet_run_is_not_marked_disturbed():
    sizes, result = fake_result()
    assert versus.disturbance(result["entries"], sizes) == []
    assert "quiet: at every size" in versus.report(result, sizes, {})


def test_a_slow_phase_marks_the_run_disturbed():
    """The two signs of a busy host: the read floor (the same pure read each
    call) with a mean far over its median, and an entry whose typical call
    is far slower than its best."""
    sizes = [1000, 2000]
    samples = {"redux": {1000: [10.0, 30.0, 31.0], 2000: [20.0, 21.0, 20.0]},
               versus.FLOOR: {1000: [8.0, 8.0, 8.0], 2000: [18.0, 18.0, 90.0]}}
    entries = versus.summarize(samples, {})
    reasons = versus.disturbance(entries, sizes)
    assert len(reasons) == 2
    assert "read floor's mean is 2.33x its median at 2000" in reasons[0]
    assert "redux's median is 3.00x its best at 1000" in reasons[1]
    text = versus.report({"gpu": "fake", "mode": "leaderboard", "entries": entries}, sizes, {})
    assert "DISTURBED: the means rank nothing" in text


def test_report_reads_saved_runs_without_a_gpu(capsys):
    """The committed runs: the H200 one is quiet, the H100 runs kept as
    disturbed are marked so; a file that is not a versus.json is refused."""
    results = os.path.join(ROOT, "leaderboard", "results")
    assert versus.main(["--report", os.path.join(results, "h200", "versus.json")]) == 0
    out = capsys.readouterr().out
    assert "redux" in out and "quiet: at every size" in out
    for kept in (("h100", "versus_disturbed_a.json"), ("h100", "versus_disturbed_d.json"),
                 ("h100", "versus_disturbed_wide.json"), ("h100", "versus_disturbed_wide_b.json"),
                 ("h200", "versus_disturbed_faithful_atomic.json"), ("h200", "versus_disturbed_wide.json"),
                 ("h100", "versus_disturbed_straight.json"), ("h200", "versus_disturbed_straight.json")):
        assert versus.main(["--report", os.path.join(results, *kept)]) == 0
        assert "DISTURBED" in capsys.readouterr().out, kept
    assert versus.main(["--report", os.path.join(ROOT, "README.md")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.skipif(HAS_CUDA, reason="checks the message given without a GPU")
def test_versus_says_it_needs_a_gpu(capsys):
    assert versus.main(["--runs", "5"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


@cuda
@pytest.mark.cuda
def test_versus_on_the_gpu_with_the_comparison_entries(tmp_path, capsys):
    rc = versus.main([*ENTRIES, "--sizes", "4096,1638400", "--runs", "10", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    saved = json.load(open(tmp_path / "versus.json"))
    assert saved["mode"] == "leaderboard" and saved["gpu"] == torch.cuda.get_device_name()
    assert set(saved["entries"]) == {"redux", "torch.sum", "atomic_fp32", "chunked_fp32", *versus.FLOORS}, out
    assert isinstance(saved["disturbed"], list) and ("DISTURBED" in out) == bool(saved["disturbed"])
    for entry in saved["entries"].values():
        for cell in entry.values():
            assert cell["runs"] == 10 and 0 < cell["best_ns"] <= cell["median_ns"]
