"""python -m leaderboard versus (leaderboard/versus.py): redux's export
against torch.sum and submission files, each in its own spawned child,
interleaved, with the read floor; its report and versus.json."""
import json
import os
import time

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
    # redux's 1000: mean 31/3 over median 10 (torch.sum's 1000: 37/3 over 12)
    assert "largest mean over median: redux's, 1.03x at 1000" in text


def test_report_states_the_retakes_and_the_gauge_they_used():
    sizes, result = fake_result()
    result.update(retaken={n: {"1000": 2, "2000": 1} for n in result["entries"]},
                  turns_retaken={n: 0 for n in result["entries"]}, host_slow=1.5)
    text = versus.report(result, sizes, {})
    assert "(a flush launch over 1.5x its usual host time): redux 3, torch.sum 3" in text
    assert "turns taken again, begun with the host that much slower than the run's usual: redux 0" in text
    result["out_of_retakes_rule"] = True
    assert "turns taken again, begun with the host that much slower than the run's usual or out of retakes: " \
        "redux 0" in versus.report(result, sizes, {})
    del result["out_of_retakes_rule"]
    del result["host_slow"]  # runs saved before the factor was
    assert "over a factor (not saved) of its usual host time): redux 3" in versus.report(result, sizes, {})
    result.update(host_slow=1.5, exposed_rule=True)
    assert "(a flush launch over 1.5x its usual host time, or the launch exposed: the host slower than the flush " \
        "on the GPU): redux 3" in versus.report(result, sizes, {})
    result["host_slow"] = None  # --no-retake
    text = versus.report(result, sizes, {})
    assert "no call retaken (--no-retake)" in text and "calls retaken" not in text


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


def test_report_reads_saved_runs_without_a_gpu(capsys, tmp_path):
    """The committed records: versus.json on both GPUs is quiet (and retook
    exposed launches); the same record with one entry's mean blown up at one
    size is reported as disturbed; a file that is not a versus.json is
    refused."""
    results = os.path.join(ROOT, "results")
    for gpu in ("h100", "h200"):
        record = os.path.join(results, gpu, "versus.json")
        assert versus.main(["--report", record]) == 0
        out = capsys.readouterr().out
        assert "redux" in out and "quiet: at every size" in out and "or the launch exposed" in out, gpu
        with open(record) as f:
            saved = json.load(f)
        floor = saved["entries"][versus.FLOOR]
        cell = floor[list(floor)[-1]]
        cell["mean_ns"] = cell["median_ns"] * (versus.FLOOR_MEAN_OVER_MEDIAN + 0.2)
        saved.pop("disturbed", None)
        disturbed = tmp_path / f"{gpu}_disturbed.json"
        disturbed.write_text(json.dumps(saved))
        assert versus.main(["--report", str(disturbed)]) == 0
        assert "DISTURBED" in capsys.readouterr().out, gpu
    assert versus.main(["--report", os.path.join(ROOT, "README.md")]) == 2
    assert "cannot read" in capsys.readouterr().err


def _sends_double(conn, x):
    versus.answer(conn, 2 * x)
    conn.close()


def _exits(conn, code):
    os._exit(code)


def _sleeps(conn, seconds):
    time.sleep(seconds)


def test_each_turn_runs_in_a_process_that_has_exited_when_it_returns():
    """run_child: the answer of a child that sends one; why not, for a child
    that dies or hangs (it is killed); never a hang of the parent."""
    ctx = versus._context()
    assert versus.run_child(ctx, _sends_double, (21,)) == (42, "")
    assert versus.run_child(ctx, _exits, (3,)) == (None, "its process died (exit code 3)")
    t0 = time.monotonic()
    assert versus.run_child(ctx, _sleeps, (60,), timeout_s=2) == (None, "no answer in 2 s")
    assert time.monotonic() - t0 < 30


def test_an_entry_that_raises_is_rejected_with_its_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('this entry is broken')\n")
    got, why = versus.run_child(versus._context(), versus._child_turn,
                                (str(broken), [4096], 1, True, 1, True, 0.0, False))
    assert why == "" and got["error"] == "raised RuntimeError: this entry is broken" and not got["samples"]


class ScriptedTimer:
    """A Timer whose calls take 1, 2, 3, ... ns, whose flush launches take
    the host times given, in order (one inside each call, one after), and
    whose calls are exposed where `exposed` says (none by default)."""
    device = "cpu"

    def __init__(self, flush_ns, exposed=()):
        self.flush_ns, self.calls, self.flush_host_ns = list(flush_ns), 0, 0
        self.exposures, self.exposed = list(exposed), False

    def flush(self):
        self.flush_host_ns = self.flush_ns.pop(0)
        return self.flush_host_ns

    def __call__(self, fn, *args):
        self.flush()
        self.calls += 1
        self.exposed = self.exposures.pop(0) if self.exposures else False
        return fn(*args), float(self.calls)


def test_calls_beside_a_busy_host_are_retaken_and_counted():
    """The host gauge: a call whose flush launch before or after took over
    slow_ns is taken again; ranked calls are checked all the same; past
    RETAKES_PER_CALL x count retakes every call is kept."""
    total = lambda data: data[0].sum()  # noqa: E731
    # call 1 clean; call 2 busy before; call 3 busy after; calls 4-5 clean
    timer = ScriptedTimer([10, 10, 50, 10, 10, 50, 10, 10, 10, 10])
    out, retaken, msg = versus._timed_calls(total, timer, 1000, 7, True, 3, False, slow_ns=20)
    assert (out, retaken, msg) == ([1.0, 4.0, 5.0], 2, "")
    # always busy: the first RETAKES_PER_CALL x count calls are retaken, then kept
    cap = versus.RETAKES_PER_CALL * 2
    timer = ScriptedTimer([50] * 2 * (cap + 2))
    out, retaken, msg = versus._timed_calls(total, timer, 1000, 7, False, 2, False, slow_ns=20)
    assert (out, retaken, msg) == ([cap + 1.0, cap + 2.0], cap, "")
    assert versus.retakes_ran_out(retaken, 2) and not versus.retakes_ran_out(cap - 1, 2)
    # a wrong answer is rejected even on a retaken call
    timer = ScriptedTimer([50] * 4)
    out, retaken, msg = versus._timed_calls(lambda data: data[0].sum() + 1, timer, 1000, 7, True, 2, False, 20)
    assert out == [] and retaken == 0 and msg.startswith("seed 20: ")


def test_a_call_whose_launch_was_exposed_is_retaken_unless_retakes_are_off():
    """The exposure rule: a call whose host launch outlasted the flush on the
    GPU is taken again, though the flush launches beside it were quick;
    with retakes off (slow_ns infinite) it is kept like any other."""
    total = lambda data: data[0].sum()  # noqa: E731
    timer = ScriptedTimer([10] * 8, exposed=[False, True, False, False])
    out, retaken, msg = versus._timed_calls(total, timer, 1000, 7, True, 3, False, slow_ns=20)
    assert (out, retaken, msg) == ([1.0, 3.0, 4.0], 1, "")
    timer = ScriptedTimer([10] * 6, exposed=[False, True, False])
    out, retaken, msg = versus._timed_calls(total, timer, 1000, 7, True, 3, False, slow_ns=float("inf"))
    assert (out, retaken, msg) == ([1.0, 2.0, 3.0], 0, "")
    assert versus.launch_exposed(95_000, 90_000) and not versus.launch_exposed(50_000, 90_000)


def _scripted_turn(conn, path, sizes, seed, ranked, count, retake, run_usual_ns, last_try):
    """A turn without a GPU: path "busy" starts every turn in a slow phase
    (its gauge 50 against the others' 10), "broken" fails its check."""
    gauge = 50.0 if path == "busy" else 10.0
    if retake and not last_try and versus.turn_is_busy(gauge, run_usual_ns):
        versus.answer(conn, versus._result(gauge_ns=gauge, busy=True))
    elif path == "broken":
        versus.answer(conn, versus._result(error="size 1000: mismatch"))
    else:
        versus.answer(conn, versus._result("fake", {s: [float(seed)] * count for s in sizes}, {s: 1 for s in sizes},
                                 gauge_ns=gauge))
    conn.close()


def _rendezvous_turn(conn, path, sizes, seed, ranked, count, retake, run_usual_ns, last_try):
    """A turn without a GPU whose load-and-check turn (count 0) leaves a
    mark beside `path` and answers only once every entry's mark is there:
    entries loaded one after another never all get there."""
    if count == 0:
        folder = os.path.dirname(path)
        open(path + ".loading", "w").close()
        deadline = time.monotonic() + 20
        while len([f for f in os.listdir(folder) if f.endswith(".loading")]) < 3:
            if time.monotonic() > deadline:
                versus.answer(conn, versus._result(error="loaded alone"))
                conn.close()
                return
            time.sleep(0.05)
    versus.answer(conn, versus._result("fake", {s: [1.0] * count for s in sizes}, {s: 0 for s in sizes}, gauge_ns=10.0))
    conn.close()


def test_entries_are_loaded_at_once_then_timed_one_at_a_time(tmp_path):
    """measure: the load-and-check turns (the export's compile, minutes on
    a fresh machine) overlap; the timed rounds still follow them."""
    import argparse
    entries = {name: str(tmp_path / name) for name in "abc"}
    args = argparse.Namespace(runs=10, seed=0, mode="leaderboard", no_retake=False)
    samples, retaken, errors, gpu = versus.measure(entries, [1000], args, turn=_rendezvous_turn)
    assert errors == {} and gpu == "fake"
    assert all(samples[name][1000] == [1.0] * 10 for name in "abc")


@pytest.mark.parametrize("retake", [True, False])
def test_rounds_take_turns_and_take_a_busy_turn_again(retake):
    """measure: every round gives each entry one turn of `count` calls a
    size; a turn that begins in a slow phase of the host (once the run has
    a usual gauge: three turns kept) is taken again, TURN_TRIES in all, the
    last kept; --no-retake keeps every turn; a rejected entry leaves."""
    import argparse
    entries = {"a": "quiet", "b": "quiet", "c": "busy", "d": "broken"}
    args = argparse.Namespace(runs=25, seed=0, mode="leaderboard", no_retake=not retake)
    samples, retaken, errors, gpu = versus.measure(entries, [1000, 2000], args, turn=_scripted_turn)
    assert gpu == "fake" and errors == {"d": "size 1000: mismatch"}
    rounds = -(-25 // versus.SAMPLES_PER_TURN)
    for name in "abc":
        assert [len(samples[name][s]) for s in (1000, 2000)] == [25, 25]
        assert sorted(set(samples[name][1000])) == [1000.0 * r for r in range(rounds)]
        assert retaken["calls"][name] == {1000: rounds, 2000: rounds}
    # c's first turn comes in round 0 after a and b: the run has no usual yet
    busy_rounds = rounds - 1 if retake else 0
    assert retaken["turns"] == {"a": 0, "b": 0, "c": busy_rounds * (versus.TURN_TRIES - 1), "d": 0}


def test_versus_refuses_a_run_count_under_one(capsys):
    with pytest.raises(SystemExit) as e:
        versus.main(["--runs", "0"])
    assert e.value.code == 2 and "--runs must be at least 1 (got 0)" in capsys.readouterr().err


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
    assert set(saved["retaken"]) == set(saved["turns_retaken"]) == set(saved["entries"]) and "calls retaken" in out
    assert saved["host_slow"] == versus.HOST_SLOW and f"over {versus.HOST_SLOW:.1f}x its usual" in out
    assert saved["exposed_rule"] is True and "or the launch exposed" in out
    assert saved["out_of_retakes_rule"] is True and "or out of retakes" in out
    for entry in saved["entries"].values():
        for cell in entry.values():
            assert cell["runs"] == 10 and 0 < cell["best_ns"] <= cell["median_ns"]


@cuda
@pytest.mark.cuda
@pytest.mark.quiet
def test_the_exposure_timer_sees_a_launch_that_outlasts_the_flush():
    """ExposureTimer times the call as core.Timer does, and marks it exposed
    when the host took longer than the flush ran on the GPU: a call that
    sleeps 20 ms on the host before launching always is; of 20 plain calls
    at least one is not (a slow phase of a shared host may expose some)."""
    timer = versus.ExposureTimer("cuda")
    x = torch.randn(1 << 20, device="cuda") + 0.5

    def late(t):
        time.sleep(0.02)
        return t.sum()

    got, ns = timer(late, x)
    assert timer.exposed and ns > 15e6 and timer.launch_host_ns > 20e6 and 0 < timer.flush_gpu_ns < 15e6
    assert torch.allclose(got, x.sum())
    plain = []
    for _ in range(20):
        _, ns = timer(torch.sum, x)
        plain.append(timer.exposed)
        assert ns > 0 and timer.flush_gpu_ns > 0 and timer.flush_host_ns > 0
    assert not all(plain)
