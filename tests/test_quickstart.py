"""The Quick start's choices (scripts/quickstart.py): torch pinned to a build
whose CUDA major version matches the toolkit found, the CPU-only path when
there is none or no torch build matches."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("quickstart", os.path.join(ROOT, "scripts", "quickstart.py"))
quickstart = importlib.util.module_from_spec(spec)
spec.loader.exec_module(quickstart)
PIN = f"torch=={quickstart.TORCH_VERSION}"


def test_cuda_13_takes_pypi_torch_and_builds_cuda_kernels():
    args, cuda_build, why = quickstart.torch_plan((13, 0))
    assert args == [PIN] and cuda_build and "13.0" in why


def test_cuda_12_takes_the_matching_cu12_wheel():
    args, cuda_build, _ = quickstart.torch_plan((12, 8))
    assert args == [PIN, "--index-url", f"{quickstart.PYTORCH_INDEX}/cu128"] and cuda_build
    args, cuda_build, _ = quickstart.torch_plan((12, 6))
    assert args[-1].endswith("/cu126") and cuda_build


def test_no_toolkit_or_an_unmatched_one_builds_cpu_only():
    for cuda in (None, (11, 8), (14, 1)):
        args, cuda_build, why = quickstart.torch_plan(cuda)
        assert args == [PIN, "--index-url", f"{quickstart.PYTORCH_INDEX}/cpu"] and not cuda_build and "CPU-only" in why


def test_newest_takes_pypi_torch_and_leaves_the_cuda_choice_to_the_build():
    args, cuda_build, why = quickstart.torch_plan((13, 0), newest=True)
    assert args == ["torch"] and cuda_build is None and "newest" in why


def test_the_pin_is_the_torch_ci_builds_against():
    import os
    import pytest
    if os.environ.get("REDUX_CI_TORCH") == "newest":
        pytest.skip("CI's stage with PyPI's newest torch")
    import torch
    assert torch.__version__.split("+")[0] == quickstart.TORCH_VERSION


def test_toolkit_detection_reads_nvcc(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "nvcc"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    got = quickstart.nvcc_version()
    assert got == (12, 4)
