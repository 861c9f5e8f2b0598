"""The competition interface: the evaluator of the runner protocol, seed mixing,
exit codes, the one-file export, and the task.h / utils.h headers."""
import ast
import os
import shutil
import subprocess
import sys
import time

import pytest
import torch

from conftest import cuda, torch_cxx_std
from leaderboard import evaluator, export

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS_TXT = os.path.join(ROOT, "leaderboard", "tests.txt")


@pytest.fixture(scope="module")
def extensions_dir(tmp_path_factory):
    """One TORCH_EXTENSIONS_DIR for this file's builds of exported files: an
    export's module name carries its sources' digest, so the sum export is
    built once (a minute or more) and loaded by the tests after it."""
    return str(tmp_path_factory.mktemp("torch_extensions"))


def evaluate(mode, testfile, *extra, device="cpu", env_extra=None, fd=True):
    """Runs the evaluator in a subprocess; returns (exit code, {key: value}, stderr)."""
    env = dict(os.environ, REDUX_EVAL_DEVICE=device, PYTHONPATH=ROOT)
    env.update(env_extra or {})
    r, w = os.pipe()
    if fd:
        env["POPCORN_FD"] = str(w)
    else:
        env.pop("POPCORN_FD", None)
    proc = subprocess.Popen([sys.executable, "-m", "leaderboard", "evaluate", mode, testfile, *extra],
                            cwd=ROOT, env=env, pass_fds=(w,), stderr=subprocess.PIPE, text=True)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    _, err = proc.communicate(timeout=600)
    lines = {}
    for line in out.splitlines():
        key, _, value = line.partition(": ")
        assert key and _, f"malformed protocol line {line!r}"
        lines[key] = value
    return proc.returncode, lines, err


def test_parse_test_file():
    cases = evaluator.parse_test_file("size: 1024; seed: 5236\n\nsize: 7;seed: 1; kind: big\n")
    assert cases == [{"size": 1024, "seed": 5236}, {"size": 7, "seed": 1, "kind": "big"}]
    for bad in ("size 1024; seed: 1", "size: 1024", "size: x; seed: 1", ""):
        with pytest.raises(evaluator.SpecError):
            evaluator.parse_test_file(bad)
    assert evaluator.spec_string(cases[0]) == "size: 1024; seed: 5236"


def test_seed_mixing_is_cantor_pairing():
    assert evaluator.combine_seed(1, 2) == 1 + 3 * 4 // 2
    assert evaluator.combine_seed(5236, 0) == 5236 + 5236 * 5237 // 2
    big = 10**12
    seed = evaluator.combine_seed(3, big)
    assert 0 <= seed < evaluator.SEED_LIMIT and seed == (3 + (3 + big) * (4 + big) // 2) % evaluator.SEED_LIMIT
    assert evaluator.combine_seed(2**64 - 1, 2**64 - 1) < evaluator.SEED_LIMIT


@pytest.mark.parametrize("spec", ["size: -5; seed: 1", "size: 0; seed: 1", f"size: 8; seed: {2**63}",
                                  "size: 8; seed: -1"])
def test_out_of_range_specs_are_spec_errors(spec):
    with pytest.raises(evaluator.SpecError):
        evaluator.parse_test_file(spec)


def test_bad_spec_files_and_secrets_exit_113(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text(f"size: 1024; seed: {2**63}\n")
    rc, _, err = evaluate("test", str(bad), "--submission", os.path.join(HERE, "solutions", "torch_sum.py"))
    assert rc == 113 and "seed" in err
    for secret in ("abc", str(2**64), "-1"):
        rc, _, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "solutions", "torch_sum.py"),
                              env_extra={"POPCORN_SEED": secret})
        assert rc == 113 and "POPCORN_SEED" in err, secret


def test_a_64_bit_secret_seed_works():
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "solutions", "torch_sum.py"),
                              env_extra={"POPCORN_SEED": str(10**12)})
    assert rc == 0 and lines["check"] == "pass", err
    assert lines["test.0.spec"] == f"size: 1023; seed: {evaluator.combine_seed(4242, 10**12)}"


def test_correct_submission_passes_test_mode():
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "solutions", "fp64_reference.py"))
    assert rc == 0, err
    assert lines["check"] == "pass"
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "solutions", "torch_sum.py"))
    assert rc == 0, err
    assert lines["check"] == "pass" and lines["test-count"] == "6"
    assert all(lines[f"test.{i}.status"] == "pass" for i in range(6))
    assert lines["test.0.spec"] == "size: 1023; seed: 4242"


def test_cpp_custom_kernel_passes_test_mode():
    rc, lines, err = evaluate("test", TESTS_TXT, "--cpp")
    assert rc == 0, err
    assert lines["check"] == "pass"


CHEATS_CAUGHT_IN_TEST_MODE = ["skip_one_percent.py", "cached_result.py", "early_return.py", "lazy_tensor.py",
                              "secret_seed.py"]


@pytest.mark.parametrize("name", CHEATS_CAUGHT_IN_TEST_MODE)
def test_wrong_solutions_fail_test_mode_with_112(name):
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "wrong_solutions", name))
    assert rc == 112, err
    assert lines["check"] == "fail"
    assert any(v == "fail" for k, v in lines.items() if k.endswith(".status"))
    assert any(k.endswith(".error") for k in lines)


def test_every_wrong_solution_is_tested():
    files = {f for f in os.listdir(os.path.join(HERE, "wrong_solutions")) if f.endswith(".py")}
    assert files == set(CHEATS_CAUGHT_IN_TEST_MODE) | {"patched_timer.py"}


def test_the_secret_seed_never_reaches_the_submission():
    """secret_seed.py precomputes every answer from the secret it finds at
    import (its environment, its parent's /proc environ). Leaked to it
    (REDUX_TEST_LEAKED_SEED, the tests' stand-in for a leak) it passes: so
    its failure under POPCORN_SEED alone is the secret not reaching it."""
    path = os.path.join(HERE, "wrong_solutions", "secret_seed.py")
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", path,
                              env_extra={"POPCORN_SEED": "31337", "REDUX_TEST_LEAKED_SEED": "31337"})
    assert rc == 0 and lines["check"] == "pass", err
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", path, env_extra={"POPCORN_SEED": "31337"})
    assert rc == 112 and lines["check"] == "fail", err


def test_a_patched_timer_fails_leaderboard_mode(tmp_path):
    """patched_timer.py makes every clock it can reach read 1 ns; the
    harness's timing is bound before it loads, and the reported mean is
    checked against the evaluator's own clock."""
    tf = tmp_path / "bench.txt"
    tf.write_text("size: 65536; seed: 3\n")
    rc, lines, err = evaluate("leaderboard", str(tf), "--submission",
                              os.path.join(HERE, "wrong_solutions", "patched_timer.py"), "--max-time", "0.5")
    assert rc == 112 and lines["check"] == "fail", (lines, err)
    assert "tampered" in lines["benchmark.0.error"]
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "wrong_solutions", "patched_timer.py"))
    assert rc == 0, "its sum is right: only its timing is wrong"


FAULTS = ["exit", "systemexit", "segfault", "hang", "raise"]
FAULT_MODES = ["test", "benchmark", "leaderboard"]
# The default suite takes these; the whole matrix runs with -m faults (CI does).
QUICK_FAULTS = {("segfault", "leaderboard", "call"), ("hang", "test", "call")}


def _fault_params():
    for when in ("call", "load"):
        for fault in FAULTS:
            for mode in FAULT_MODES:
                marks = [] if (fault, mode, when) in QUICK_FAULTS else [pytest.mark.faults]
                yield pytest.param(fault, mode, when, marks=marks, id=f"{fault}-{mode}-{when}")


@pytest.mark.parametrize("fault,mode,when", list(_fault_params()))
def test_a_faulty_submission_fails_every_case_in_bounded_time(fault, mode, when, tmp_path):
    """Whatever a submission does, in any mode: every case gets its fail
    lines, then check: fail and exit 112, within the deadline."""
    tf = tmp_path / "cases.txt"
    tf.write_text("size: 4096; seed: 3\nsize: 1024; seed: 4\n")
    t0 = time.monotonic()
    # Deadlines with room for a loaded host (a GPU machine running the suite
    # 14-wide took 25 s to load a submission).
    rc, lines, err = evaluate(mode, str(tf), "--submission", os.path.join(HERE, "solutions", "faulty.py"),
                              "--max-time", "0.5", "--call-timeout", "15", "--total-timeout", "120",
                              env_extra={"FAULT": fault, "FAULT_WHEN": when})
    assert time.monotonic() - t0 < 150
    prefix = "test" if mode == "test" else "benchmark"
    assert rc == 112, (lines, err)
    assert lines["check"] == "fail" and lines[f"{prefix}-count"] == "2"
    for i in range(2):
        assert lines[f"{prefix}.{i}.status"] == "fail" and lines[f"{prefix}.{i}.error"]
    expected = {"exit": "exited with code 3", "systemexit": "SystemExit(0)", "segfault": "SIGSEGV",
                "hang": "no answer within", "raise": "ValueError: broken on purpose"}[fault]
    assert expected in lines[f"{prefix}.0.error"], lines


def test_the_total_deadline_ends_a_slow_run(tmp_path):
    tf = tmp_path / "cases.txt"
    tf.write_text("size: 4096; seed: 3\n" * 4)
    t0 = time.monotonic()
    rc, lines, err = evaluate("test", str(tf), "--submission", os.path.join(HERE, "solutions", "faulty.py"),
                              "--call-timeout", "100", "--total-timeout", "8", env_extra={"FAULT": "hang"})
    assert rc == 112 and time.monotonic() - t0 < 60
    # the first case's call is cut to what is left of the 8 s (or, on a host
    # slow to load, the total deadline has passed already)
    assert any(m in lines["test.0.error"] for m in ("no answer within", "total deadline of 8 s passed"))
    assert all(lines[f"test.{i}.status"] == "fail" for i in range(4))


def test_bad_deadlines_are_usage_errors(capsys):
    for flag in ("--call-timeout", "--total-timeout", "--max-time"):
        assert evaluator.main(["test", TESTS_TXT, "--cpp", flag, "0"]) == 2
        assert flag in capsys.readouterr().err


def test_secret_seed_is_mixed_in():
    rc, lines, err = evaluate("test", TESTS_TXT, "--cpp", env_extra={"POPCORN_SEED": "99"})
    assert rc == 0, err
    assert lines["test.0.spec"] == f"size: 1023; seed: {evaluator.combine_seed(4242, 99)}"


def test_benchmark_and_leaderboard_modes_report_stats(tmp_path):
    tf = tmp_path / "bench.txt"
    tf.write_text("size: 4096; seed: 3\nsize: 65536; seed: 4\n")
    for mode in ("benchmark", "leaderboard"):
        rc, lines, err = evaluate(mode, str(tf), "--cpp", "--max-time", "0.5")
        assert rc == 0, err
        assert lines["benchmark-count"] == "2" and lines["check"] == "pass"
        for i in range(2):
            runs, mean = int(lines[f"benchmark.{i}.runs"]), float(lines[f"benchmark.{i}.mean"])
            assert runs >= 3 and mean > 0
            assert float(lines[f"benchmark.{i}.best"]) <= mean <= float(lines[f"benchmark.{i}.worst"])
            for key in ("std", "err"):
                assert float(lines[f"benchmark.{i}.{key}"]) >= 0


def test_leaderboard_mode_rejects_cache(tmp_path):
    tf = tmp_path / "bench.txt"
    tf.write_text("size: 4096; seed: 3\n")
    rc, lines, err = evaluate("leaderboard", str(tf), "--submission",
                              os.path.join(HERE, "wrong_solutions", "cached_result.py"), "--max-time", "0.5")
    assert rc == 112 and lines["check"] == "fail" and "mismatch" in lines["benchmark.0.error"]


def test_exit_codes_for_usage_fd_and_spec(tmp_path):
    rc, _, err = evaluate("test", TESTS_TXT, "--cpp", fd=False)
    assert rc == 111 and "POPCORN_FD" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("size: 12 seed 3\n")
    rc, _, _ = evaluate("test", str(bad), "--cpp")
    assert rc == 113
    rc, _, _ = evaluate("nonsense-mode", TESTS_TXT)
    assert rc == 2


def test_profile_mode(tmp_path):
    tf = tmp_path / "p.txt"
    tf.write_text("size: 4096; seed: 3\n")
    rc, lines, err = evaluate("profile", str(tf), "--cpp")
    assert rc == 0, err
    assert "redux::_competition_custom_kernel" in lines["benchmark.0.report"]


def test_export_writes_a_valid_single_file_submission(tmp_path):
    out = tmp_path / "submission.py"
    assert export.main(["--out", str(out)]) == 0
    text = out.read_text()
    assert text.splitlines()[0] == "#!POPCORN leaderboard vectorsum_v2"
    tree = ast.parse(text)
    imports = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imports.add(node.module.split(".")[0])
    assert imports == {"torch"}, imports
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "custom_kernel" in funcs
    assert "sum_chunks_kernel" in text and "__global__" in text and "load_inline" in text
    assert '#include "' not in text  # every local header is inlined


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the CUDA toolkit)")
def test_exported_submission_compiles_and_loads(tmp_path, monkeypatch, extensions_dir):
    """The exported file builds as the competition builds it (load_inline),
    binding included, on any machine with nvcc: import it, as the evaluator
    does, and find custom_kernel's compiled entry point."""
    import importlib.util
    out = tmp_path / "submission.py"
    assert export.main(["--out", str(out)]) == 0
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", extensions_dir)
    if not torch.cuda.is_available() and "TORCH_CUDA_ARCH_LIST" not in os.environ:
        # no GPU to take the architecture from (with one, the build serves the tests after this one)
        monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    spec = importlib.util.spec_from_file_location("exported_submission", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.custom_kernel) and callable(module._module.submission_sum)
    with pytest.raises(RuntimeError, match="argument|must be"):
        module.custom_kernel((torch.ones(4, dtype=torch.float64), torch.empty(1)))


def test_every_variant_exports():
    """--op NAME: the product's sources for sum, the ladder's behind a
    binding that names the rung for the others."""
    import redux
    for v in redux.VARIANTS:
        text = export.render(op=v.name)
        assert text.splitlines()[0] == "#!POPCORN leaderboard vectorsum_v2" and f"--op {v.name}" in text
        if v.general:
            assert "sum_chunks_kernel" in text and "REDUX_EXPORT_RUNG" not in text
        else:
            assert f"#define REDUX_EXPORT_RUNG REDUX_RUNG_{export.rung_id(v.name)}" in text and "ladder.cu" in text
    with pytest.raises(SystemExit):
        export.main(["--op", "sum_nothing"])


@cuda
@pytest.mark.cuda
def test_every_exported_variant_passes_the_evaluators_test_mode(tmp_path, extensions_dir):
    """Each export built by load_inline as the competition builds it, in
    parallel (a folder each in the extensions dir), then the evaluator's
    test mode."""
    from concurrent.futures import ThreadPoolExecutor
    import redux

    def run(op):
        out = tmp_path / f"{op}.py"
        assert export.main(["--op", op, "--out", str(out)]) == 0
        rc, lines, err = evaluate("test", TESTS_TXT, "--submission", str(out), device="cuda",
                                  env_extra={"TORCH_EXTENSIONS_DIR": extensions_dir})
        return op, rc, lines.get("check"), err[-1500:]
    with ThreadPoolExecutor(max_workers=len(redux.VARIANTS)) as pool:
        results = list(pool.map(run, [v.name for v in redux.VARIANTS]))
    bad = [(op, err) for op, rc, check, err in results if rc != 0 or check != "pass"]
    assert not bad, bad


CXX = shutil.which("g++")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
HAS_TOOLKIT = CXX is not None and os.path.exists(os.path.join(CUDA_HOME, "include", "cuda_runtime.h"))


@pytest.mark.skipif(not HAS_TOOLKIT, reason="needs g++ and the CUDA toolkit headers")
def test_utils_h_reporter_and_cuda_check(tmp_path):
    src = tmp_path / "t.cpp"
    src.write_text(r'''
#include "utils.h"
#include <cstring>
int main() {
  TestReporter r;
  if (r.has_run()) return 1;
  r.fail("off by one");
  if (r.has_passed() || std::strcmp(r.message().c_str(), "off by one") != 0) return 2;
  r.pass();
  if (!r.has_passed() || !r.message().empty()) return 3;
  CUDA_CHECK(cudaSetDevice(1 << 20));  /* no such device anywhere */
  return 4;
}''')
    exe = tmp_path / "t"
    subprocess.run([CXX, "-std=c++17", "-I", ROOT, "-I", os.path.join(CUDA_HOME, "include"), str(src), "-o", str(exe),
                    "-L", os.path.join(CUDA_HOME, "lib64"), "-lcudart"], check=True)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(CUDA_HOME, "lib64"))
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert r.returncode == 110, (r.returncode, r.stderr)
    assert "cudaSetDevice(1 << 20)" in r.stderr and "t.cpp:11" in r.stderr and "function main" in r.stderr


@pytest.mark.skipif(CXX is None, reason="needs g++")
def test_task_h_declares_the_contract(tmp_path):
    from torch.utils.cpp_extension import include_paths
    src = tmp_path / "impl.cpp"
    src.write_text('#include "task.h"\n#include <type_traits>\n'
                   'static_assert(std::is_same_v<input_t, std::tuple<at::Tensor, at::Tensor>>);\n'
                   'static_assert(std::is_same_v<output_t, at::Tensor>);\n'
                   'output_t custom_kernel(input_t data) { return std::get<1>(data).view(c10::IntArrayRef{}); }\n'
                   'int size_of_args() { task_args_t a{1024, 5236}; return (int)(a.size + a.seed); }\n')
    flags = sum([["-I", p] for p in include_paths()], [])
    subprocess.run([CXX, torch_cxx_std(), "-fsyntax-only", "-I", ROOT, *flags, str(src)], check=True)


@cuda
@pytest.mark.cuda
def test_cuda_evaluator_cpp_and_wrong_solutions():
    rc, lines, err = evaluate("test", TESTS_TXT, "--cpp", device="cuda")
    assert rc == 0 and lines["check"] == "pass", err
    for name in ("skip_one_percent.py", "cached_result.py", "early_return.py"):
        rc, lines, err = evaluate("test", TESTS_TXT, "--submission", os.path.join(HERE, "wrong_solutions", name),
                                  device="cuda")
        assert rc == 112 and lines["check"] == "fail", (name, err)


@cuda
@pytest.mark.cuda
def test_exported_submission_on_cuda(tmp_path, monkeypatch, extensions_dir):
    """The exported file itself (compiled by load_inline, as the competition
    would): the evaluator's test and ranked modes, then in-process on two
    streams at once, several sizes, a strided input and an empty one."""
    from leaderboard import core
    from leaderboard.ops import load_submission

    out = tmp_path / "submission.py"
    assert export.main(["--out", str(out)]) == 0
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", extensions_dir)  # the evaluator's and load_submission's builds
    rc, lines, err = evaluate("test", TESTS_TXT, "--submission", str(out), device="cuda")
    assert rc == 0 and lines["check"] == "pass", err
    tf = tmp_path / "bench.txt"
    tf.write_text("size: 100003; seed: 5\nsize: 3276800; seed: 6\n")
    rc, lines, err = evaluate("leaderboard", str(tf), "--submission", str(out), "--max-time", "0.5", device="cuda")
    assert rc == 0 and lines["check"] == "pass", err

    _, custom_kernel = load_submission(str(out))
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    cases = [core.generate_input(n, seed, "cuda") for seed, n in enumerate((1023, 3_000_017, 65_536, 1_638_400))]
    for _ in range(3):
        for _, output in cases:
            output.fill_(float("nan"))  # every call must write it
        for s in streams:
            s.wait_stream(torch.cuda.current_stream())
        results = []
        for i, (data, output) in enumerate(cases):
            with torch.cuda.stream(streams[i % 2]):
                results.append(custom_kernel((data, output)))
        torch.cuda.synchronize()
        for (data, _), got in zip(cases, results):
            assert got.shape == () and not core.check(got, core.reference(data))
    data, output = core.generate_input(2 * 100_001, 9, "cuda")
    assert not core.check(custom_kernel((data[::2], output)), core.reference(data[::2].contiguous()))
    empty = torch.empty(0, device="cuda")
    assert custom_kernel((empty, torch.full((1,), 5.0, device="cuda"))).item() == 0.0
