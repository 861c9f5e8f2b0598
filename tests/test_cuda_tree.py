"""The block tree's narrower second stage gives the bits of the 32-lane one.

tests/cuda/block_tree_check.cu compares include/redux/reduce.cuh's
block_reduce_sum with the 32-lane second stage it replaced, bit for bit, for
every accumulator type (it saves two dependent shuffle levels). Built with
nvcc for this GPU and run; needs a CUDA GPU and nvcc (on PATH or under
CUDA_HOME, as the extension's build does).
"""
import os
import shutil
import subprocess

import pytest
import torch

from conftest import cuda

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@cuda
def test_block_tree_bits_equal_the_wide_tree(tmp_path):
    from torch.utils.cpp_extension import CUDA_HOME  # where the extension's own build found nvcc

    nvcc = shutil.which("nvcc") or (os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None)
    if nvcc is None or not os.path.exists(nvcc):
        pytest.fail("nvcc not found (PATH, CUDA_HOME): the tree check cannot be built on this CUDA machine")
    major, minor = torch.cuda.get_device_capability()
    exe = tmp_path / "block_tree_check"
    build = subprocess.run(
        [nvcc, "-O3", "-std=c++17", f"-arch=sm_{major}{minor}", "-I", os.path.join(ROOT, "include"),
         os.path.join(ROOT, "tests", "cuda", "block_tree_check.cu"), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "block tree check: all bits equal" in run.stdout
    assert run.stdout.count("0 with different bits") == 4
