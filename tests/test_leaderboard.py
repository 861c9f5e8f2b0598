"""The harness (leaderboard/): the competition's generator, checker, stats
and stopping rule, an end-to-end CPU run, and proof that the checker rejects
the deliberately wrong solutions in tests/wrong_solutions/."""
import json
import os
import time

import pytest
import torch

from leaderboard import cli, core, report, score

HERE = os.path.dirname(__file__)
WRONG = os.path.join(HERE, "wrong_solutions")


def test_generator_is_seeded_scaled_and_offset():
    a, out = core.generate_input(4096, 7, "cpu")
    b, _ = core.generate_input(4096, 7, "cpu")
    c, _ = core.generate_input(4096, 8, "cpu")
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert a.dtype == torch.float32 and a.shape == (4096,) and a.is_contiguous()
    assert out.shape == (1,) and out.dtype == torch.float32
    offsets = [core.generate_input(20000, s, "cpu")[0].mean().item() for s in range(12)]
    assert all(-101 < o < 101 for o in offsets) and max(abs(o) for o in offsets) > 5
    stds = [core.generate_input(20000, s, "cpu")[0].std().item() for s in range(12)]
    assert all(0.09 < s < 10.5 for s in stds)


def test_reference_is_fp64_sum_cast_to_fp32():
    x = torch.tensor([1e8, 1.0, -1e8, 0.5], dtype=torch.float32)
    ref = core.reference(x)
    assert ref.shape == () and ref.dtype == torch.float32 and ref.item() == 1.5


def test_checker_tolerance_and_special_values():
    ref = torch.tensor(1000.0)
    assert core.check(torch.tensor(1000.0 + 0.009), ref) == ""          # within 1e-5 * 1000
    assert "mismatch" in core.check(torch.tensor(1000.02), ref)
    assert "shape" in core.check(torch.tensor([1000.0]), ref)
    assert "NaN" in core.check(torch.tensor(float("nan")), ref)
    assert "inf" in core.check(torch.tensor(float("inf")), ref)
    assert core.check(torch.tensor(float("inf")), torch.tensor(float("inf"))) == ""
    assert core.check(torch.tensor(float("nan")), torch.tensor(float("nan"))) == ""
    assert "inf" in core.check(torch.tensor(float("-inf")), torch.tensor(float("inf")))
    assert "expected a plain torch.Tensor" in core.check(1000.0, ref)
    assert "tensor subclass" in core.check(torch.nn.Parameter(torch.tensor(1000.0)), ref)


def test_stats_and_stopping_rule():
    st = core.summarize([10.0, 12.0, 14.0])
    assert st.runs == 3 and st.mean == 12.0 and st.best == 10.0 and st.worst == 14.0
    assert abs(st.std - 2.0) < 1e-12 and abs(st.err - 2.0 / 3 ** 0.5) < 1e-12
    calls = []

    def fn(data):
        calls.append(1)
        return core.reference(data[0])

    st, msg = core.benchmark(fn, 1024, 1, "cpu", max_time_s=0.5)
    assert msg == "" and core.MIN_RUNS <= st.runs <= core.MAX_RUNS
    assert len(calls) == st.runs + 1  # one check before timing
    st, msg = core.benchmark(fn, 1024, 1, "cpu", ranked=True, max_time_s=0.2, max_runs=5)
    assert msg == "" and st.runs <= 5


def _run(tmp_path, *extra):
    args = cli.parse_args(["--device", "cpu", "--quick", "--sizes", "4096,65536", "--out", str(tmp_path),
                           "--time-budget", "0.3", *extra])
    return score.run(args)


def test_end_to_end_cpu_run_writes_table_json_plot(tmp_path):
    results = _run(tmp_path)
    report.write_outputs(results, str(tmp_path))
    assert set(results["ops"]) >= {"torch.sum", "sum"}
    for name in ("torch.sum", "sum"):
        e = results["ops"][name]
        assert e["correct"], e
        assert all(v == "pass" for v in e["tests"].values())
        assert e["benchmarks"]["65536"]["runs"] >= core.MIN_RUNS and e["score_ns"] > 0
    assert abs(results["ops"]["torch.sum"]["ratio_to_torch"] - 1.0) < 1e-12
    saved = json.load(open(tmp_path / "leaderboard.json"))
    assert saved["ops"]["sum"]["benchmarks"]["4096"]["mean"] > 0
    md = open(tmp_path / "leaderboard.md").read()
    assert "| 1 |" in md and "torch.sum" in md
    assert (tmp_path / "leaderboard.png").stat().st_size > 10_000
    text = report.format_terminal(results)
    assert "torch.sum" in text and "score" in text


def test_cli_main_and_help(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0 and "--ranked" in capsys.readouterr().out
    rc = cli.main(["--device", "cpu", "--quick", "--sizes", "2048", "--out", str(tmp_path), "--no-plot",
                   "--time-budget", "0.2", "--ops", "sum"])
    assert rc == 0 and "sum" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="unknown or unavailable ops"):
        cli.main(["--device", "cpu", "--ops", "sum_vec4", "--out", str(tmp_path)])


@pytest.mark.parametrize("ranked", [False, True])
def test_wrong_solutions_are_rejected(tmp_path, ranked):
    subs = ["skip_one_percent.py", "early_return.py"] + (["cached_result.py"] if ranked else [])
    flags = [a for s in subs for a in ("--submission", os.path.join(WRONG, s))]
    results = _run(tmp_path, "--ops", "sum", *flags, *(["--ranked"] if ranked else []))
    for s in subs:
        e = results["ops"]["file:" + s[:-3]]
        assert not e["correct"], f"{s} was accepted: {e}"
    assert results["ops"]["sum"]["correct"] and results["ops"]["torch.sum"]["correct"]


@pytest.mark.parametrize("fault", ["segfault", pytest.param("hang", marks=pytest.mark.faults),
                                   pytest.param("systemexit", marks=pytest.mark.faults)])
def test_a_submission_that_crashes_or_hangs_fails_alone(tmp_path, monkeypatch, fault):
    """Each --submission runs in a process of its own: one that crashes,
    hangs or exits is reported as failed and the others are still scored;
    a timer-patching one and a lazy tensor are caught."""
    monkeypatch.setenv("FAULT", fault)
    subs = [os.path.join(HERE, "solutions", "faulty.py"), os.path.join(HERE, "solutions", "torch_sum.py"),
            os.path.join(WRONG, "patched_timer.py"), os.path.join(WRONG, "lazy_tensor.py")]
    flags = [a for s in subs for a in ("--submission", s)]
    results = _run(tmp_path, "--ops", "sum", "--call-timeout", "30", *flags)  # room for a loaded host
    ops = results["ops"]
    why = {"segfault": "SIGSEGV", "hang": "no answer within 30 s", "systemexit": "SystemExit(0)"}[fault]
    assert not ops["file:faulty"]["correct"] and all(why in v for v in ops["file:faulty"]["tests"].values())
    assert ops["file:torch_sum"]["correct"] and ops["file:torch_sum"]["benchmarks"]["65536"]["runs"] >= 1
    timer = ops["file:patched_timer"]
    assert not timer["correct"] and any("tampered" in b.get("error", "") for b in timer["benchmarks"].values())
    assert not ops["file:lazy_tensor"]["correct"]
    assert ops["sum"]["correct"] and ops["torch.sum"]["correct"]


def test_a_correct_submission_is_accepted(tmp_path):
    sub = tmp_path / "good.py"
    sub.write_text("import torch\n\ndef custom_kernel(data):\n    return torch.ops.redux.sum(data[0])\n")
    results = _run(tmp_path, "--ops", "sum", "--ranked", "--submission", str(sub))
    assert results["ops"]["file:good"]["correct"]


def test_shapes_benchmark_cpu_part_runs(capsys, tmp_path):
    from leaderboard import shapes
    assert shapes.main(["--cpu-only", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    for label, _, _ in shapes.CPU_TARGETS:  # full and rows of 1M, 4M and 16M fp32
        assert label in out
    saved = json.load(open(tmp_path / "s.json"))
    assert len(saved["cpu"]) == 6 and all(r["torch_us"] > 0 and r["redux_us"] > 0 for r in saved["cpu"])
    assert all(r["target"] == 1.00 for r in saved["cpu"])


def test_ops_benchmark_times_a_chosen_part_and_writes_only_whole_records(tmp_path):
    """bench/ops.py --ops / --shapes time those rows alone, --dtype in a 16-bit
    dtype; a bad name is a usage error naming its option, and --out (the
    record) refuses a part."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(HERE), "bench", "ops.py")

    def ops(*args):
        return subprocess.run([sys.executable, script, "--device", "cpu", "--threads", "1", "--reps", "2", *args],
                              capture_output=True, text=True, timeout=120)

    run = ops("--ops", "sum,norm 2", "--shapes", "(1, 1024)")
    assert run.returncode == 0, run.stderr
    rows = [line.split() for line in run.stdout.splitlines()[2:]]
    assert [r[0] if r[0] != "norm" else "norm 2" for r in rows] == ["sum", "norm 2"], run.stdout
    assert all(" ".join(r[-6:-4]) == "1024) rows" and float(r[-2]) > 0 for r in rows), run.stdout
    for dtype in ("bfloat16", "float16"):  # 16-bit inputs, checked against float64 at their own tolerance
        run = ops("--ops", "sum,softmax", "--shapes", "(1, 8192)", "--dtype", dtype)
        assert run.returncode == 0, run.stderr
        assert f", {dtype}, median of 2;" in run.stdout.splitlines()[0] and len(run.stdout.splitlines()) == 4
    run = ops("--dtype", "float64")
    assert run.returncode == 2 and "--dtype: invalid choice: 'float64'" in run.stderr
    run = ops("--ops", "bogus")
    assert run.returncode == 2 and "--ops: unknown op 'bogus'" in run.stderr
    run = ops("--shapes", "no such shape")
    assert run.returncode == 2 and "--shapes: no shape's label holds 'no such shape'" in run.stderr
    run = ops("--ops", "sum", "--out", str(tmp_path / "ops.txt"))
    assert run.returncode == 2 and "--out writes the record" in run.stderr and not (tmp_path / "ops.txt").exists()


def test_gpu_check_require_gpu_runs_nothing_on_another_gpu(tmp_path):
    """REQUIRE_GPU names the GPU a run needs: on any other (here: none, or
    a GPU whose name lacks the text) gpu_check.sh exits 3 before any step."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, OUT=str(tmp_path), REQUIRE_GPU="NO SUCH GPU 0000", STEPS="build test shapes versus")
    run = subprocess.run(["bash", os.path.join(root, "scripts", "gpu_check.sh")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "not a 'NO SUCH GPU 0000': nothing run" in run.stderr
    assert os.listdir(tmp_path) == []  # no step wrote a log


def gpu_check(tmp_path, **env):
    """scripts/gpu_check.sh's test step (STEPS=test) with env, this interpreter's python3 first on PATH."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    env = dict(os.environ, OUT=str(tmp_path), STEPS="test", PATH=path, **env)
    return subprocess.run(["bash", os.path.join(root, "scripts", "gpu_check.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)


def test_gpu_check_says_which_pytest_the_budget_stopped_or_left_out(tmp_path):
    """TEST_BUDGET_S: a pytest cut short is reported incomplete, one with no
    time left is reported not run, and the script's status is 4."""
    run = gpu_check(tmp_path, SLICE="switch core", TEST_BUDGET_S="21", PYTEST_ARGS="-p no:cacheprovider")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "gpu_check: pytest_switch stopped by TEST_BUDGET_S=21: incomplete" in run.stdout
    assert "gpu_check: pytest_core not run: TEST_BUDGET_S=21 is spent" in run.stdout
    assert (tmp_path / "pytest_switch.log").exists() and not (tmp_path / "pytest_core.log").exists()


def test_gpu_check_joins_slices_named_with_a_plus_into_one_pytest(tmp_path):
    """SLICE="core+switch": one pytest over both slices' files, logged as
    pytest_core_switch.log; a part that names no slice is refused."""
    run = gpu_check(tmp_path, SLICE="core+switch", PYTEST_ARGS="-p no:cacheprovider --collect-only")
    assert "gpu_check: pytest_core_switch exit=0" in run.stdout, run.stdout + run.stderr
    collected = (tmp_path / "pytest_core_switch.log").read_text()
    assert "tests/test_bit_identity.py::" in collected and "tests/test_switch.py::" in collected
    assert "tests/test_sum.py::" not in collected
    run = gpu_check(tmp_path, SLICE="core+bogus")
    assert run.returncode == 2 and "SLICE must be one of" in run.stderr and "got 'bogus'" in run.stderr


def test_gpu_check_runs_the_quiet_tests_alone_after_a_parallel_run(tmp_path):
    """With -n, the tests marked quiet that PYTEST_ARGS select (here: both)
    leave the slices' runs and run alone after them, in pytest_quiet.log."""
    import re
    args = "-n 2 -p no:cacheprovider -k 'exposure_timer or sporadic'"
    run = gpu_check(tmp_path, SLICE="switch rest", PYTEST_ARGS=args)
    quiet = (tmp_path / "pytest_quiet.log").read_text()
    summary = quiet.strip().splitlines()[-1]
    assert re.match(r"(2 passed|1 passed, 1 skipped) in ", summary), run.stdout + quiet  # the CUDA one skips on a CPU


def test_plot_redraws_the_committed_records(tmp_path, capsys):
    """python -m leaderboard plot draws a saved leaderboard.json or
    shapes.json again; anything else is a usage error naming the file."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for gpu in ("h100", "h200"):
        for record in ("leaderboard.json", "shapes.json"):
            png = tmp_path / f"{gpu}_{record}.png"
            assert cli.main(["plot", os.path.join(root, "results", gpu, record), str(png)]) == 0
            assert png.stat().st_size > 10_000
    with pytest.raises(SystemExit) as e:
        cli.main(["plot", os.path.join(root, "README.md"), str(tmp_path / "x.png")])
    assert e.value.code == 2 and "README.md: not a JSON record" in capsys.readouterr().err


def test_shapes_plot_draws_a_goal_below_the_floor_apart_from_a_miss():
    from leaderboard import plots
    assert plots._shapes_color({"ratio": 0.75, "floor_ratio": 0.74, "target": 0.70, "pass": False}) == "C1"
    assert plots._shapes_color({"ratio": 0.91, "floor_ratio": 0.86, "target": 0.90, "pass": False}) == "C3"
    assert plots._shapes_color({"ratio": 0.85, "floor_ratio": 0.80, "target": 0.90, "pass": True}) == "C2"
    assert plots._shapes_color({"ratio": 0.70, "floor_ratio": 0.60, "target": None}) == "C0"


def test_help_lists_every_subcommand_with_one_line(capsys):
    assert set(cli.SUBCOMMAND_HELP) == set(cli.SUBCOMMANDS)
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name, text in cli.SUBCOMMAND_HELP.items():
        assert f"  {name}" in out and text in out, name


def test_a_busy_host_is_named_in_a_warning():
    assert score.busy_host_warning(0.1, 0.2) == ""
    assert score.busy_host_warning(None, None) == ""
    assert "busy before the run (90% of its CPUs" in score.busy_host_warning(0.9, 0.1)
    assert "busy after the run" in score.busy_host_warning(0.1, 0.8)
    share = score.busy_share(0.05)
    assert share is None or 0.0 <= share <= 1.0


def test_a_cpu_hog_makes_the_host_busy():
    """Two processes spinning on this machine's CPUs are seen as busy."""
    import multiprocessing
    if score.busy_share(0.05) is None:
        pytest.skip("no /proc/stat here")
    ctx = multiprocessing.get_context("spawn")
    hogs = [ctx.Process(target=_spin, args=(3.0,)) for _ in range(os.cpu_count() or 1)]
    for h in hogs:
        h.start()
    try:
        time.sleep(0.5)
        share = score.busy_share(0.5)
    finally:
        for h in hogs:
            h.join()
    assert share > score.BUSY_SHARE, share


def _spin(seconds):
    end = time.time() + seconds
    while time.time() < end:
        pass


@pytest.mark.parametrize("argv, named", [
    (["--sizes", "abc"], "--sizes"),
    (["--sizes", "0,1024"], "--sizes"),
    (["--sizes", str(2**62)], "--sizes"),
    (["--time-budget", "-1"], "--time-budget"),
    (["--submission", "README.md"], "--submission"),
    (["--submission", "no_such_file.py"], "--submission"),
])
def test_bad_arguments_are_usage_errors_naming_the_argument(argv, named, capsys):
    with pytest.raises(SystemExit) as e:
        cli.parse_args(["--device", "cpu", *argv])
    assert e.value.code == 2
    assert f"argument {named}:" in capsys.readouterr().err


def test_two_submissions_of_one_name_are_a_usage_error(tmp_path, capsys):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    first = os.path.join(root, "tests", "solutions", "torch_sum.py")
    (tmp_path / "torch_sum.py").write_text(open(first).read())
    with pytest.raises(SystemExit) as e:
        cli.parse_args(["--device", "cpu", "--submission", first, "--submission", str(tmp_path / "torch_sum.py")])
    assert e.value.code == 2 and "have the same name 'torch_sum'" in capsys.readouterr().err
