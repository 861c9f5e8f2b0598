"""The CUDA code compiles for every GPU architecture we ship for: sm_80
(A100), sm_89 (L4/Ada), sm_90 (H100/H200), sm_100 (B200) and sm_120
(consumer Blackwell). Compile only (nvcc is on CI's machine, no GPU needed):
the extension's kernels (csrc/cuda/*.cu) and the kernels of every exported
submission. Hopper-only code (thread block clusters) sits behind
__CUDA_ARCH__ >= 900 with the ticket finish as the fallback."""
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from leaderboard import export

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHS = (80, 89, 90, 100, 120)
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
pytestmark = [pytest.mark.compile, pytest.mark.skipif(NVCC is None, reason="needs nvcc (the CUDA toolkit)")]


def compile_for_all_archs(src, out):
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in ARCHS]
    r = subprocess.run([NVCC, "-O3", "-std=c++17", *gencode, "-I", os.path.join(ROOT, "include"), "-I",
                        os.path.join(ROOT, "csrc", "cuda"), "-c", src, "-o", out], capture_output=True, text=True)
    return src, r.returncode, r.stderr[-2000:]


def test_kernels_and_exports_compile_for_every_architecture(tmp_path):
    units = sorted(os.path.join(ROOT, "csrc", "cuda", f) for f in os.listdir(os.path.join(ROOT, "csrc", "cuda"))
                   if f.endswith(".cu"))
    for op in ("sum", "sum_last_block"):  # the product's export and the rungs' (one file serves every rung)
        path = tmp_path / f"export_{op}_kernels.cu"
        path.write_text(export.carried_source(op=op, sources=export.kernel_sources(op)))
        units.append(str(path))
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        results = list(pool.map(lambda u: compile_for_all_archs(u, str(tmp_path / (os.path.basename(u) + ".o"))),
                                units))
    failed = [(os.path.basename(src), err) for src, rc, err in results if rc != 0]
    assert not failed, failed
