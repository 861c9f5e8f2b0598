"""One command from a fresh clone to a built redux and its main job.

    python3 scripts/quickstart.py [--no-run] [--torch newest] [-- LEADERBOARD ARGS...]

1. makes the virtual environment .venv (or reuses it);
2. installs torch pinned to a build whose CUDA major version matches the
   CUDA toolkit found (nvcc on PATH, $CUDA_HOME or /usr/local/cuda), or the
   CPU-only path when there is none; plus the test and plot dependencies;
3. builds redux into .venv (pip install --no-build-isolation -e .): with
   CUDA kernels when a matching toolkit is there, CPU-only otherwise;
4. runs the main job, python -m leaderboard (its results go to the
   git-ignored out/leaderboard/), unless --no-run.

--torch newest installs PyPI's newest torch instead of the pin; the build
then takes CUDA kernels when that torch's CUDA major version equals the
toolkit's (setup.py decides and says why). CI runs the suite both ways.

Needs only Python >= 3.10 and pip's registries. Environment: TORCH_CUDA_ARCH_LIST
(default 9.0), MAX_JOBS (default: the CPU count) as for the build.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv")
TORCH_VERSION = "2.11.0"
# torch 2.11.0's wheels by CUDA major version: PyPI's default wheel is the
# CUDA 13.0 build; the CUDA 12 builds and the CPU-only build are on the
# PyTorch index.
PYTORCH_INDEX = "https://download.pytorch.org/whl"
DEPENDENCIES = ["pytest", "expecttest", "numpy", "matplotlib", "setuptools>=77,<82", "wheel", "ninja"]  # torch 2.11 wants setuptools<82


def nvcc_version():
    """(major, minor) of the CUDA toolkit's nvcc, or None when there is none."""
    candidates = [shutil.which("nvcc")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(os.path.join(home, "bin", "nvcc"))
    for nvcc in filter(None, candidates):
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        m = re.search(r"release (\d+)\.(\d+)", out)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def torch_plan(cuda, newest=False):
    """(pip arguments for torch, whether redux builds its CUDA kernels, why)
    for the toolkit version `cuda` ((major, minor) or None). newest: PyPI's
    newest torch; None for the CUDA choice, which setup.py then makes."""
    if newest:
        return ["torch"], None, "PyPI's newest torch; setup.py picks the CUDA or the CPU-only build"
    pin = f"torch=={TORCH_VERSION}"
    if cuda is None:
        return [pin, "--index-url", f"{PYTORCH_INDEX}/cpu"], False, "no CUDA toolkit found: the CPU-only build"
    major, minor = cuda
    if major == 13:
        return [pin], True, f"CUDA {major}.{minor}: torch's CUDA 13.0 build (PyPI)"
    if major == 12:
        tag = "cu128" if minor >= 8 else "cu126"
        return [pin, "--index-url", f"{PYTORCH_INDEX}/{tag}"], True, f"CUDA {major}.{minor}: torch's {tag} build"
    return ([pin, "--index-url", f"{PYTORCH_INDEX}/cpu"], False,
            f"CUDA {major}.{minor} has no torch {TORCH_VERSION} build: the CPU-only build")


def run(cmd, **env):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT, env={**os.environ, **env})


def venv_python():
    if not os.path.exists(VENV):
        run([sys.executable, "-m", "venv", VENV])
    return os.path.join(VENV, "bin", "python")


def install_torch(py, args, cuda_build):
    """Installs torch; a CPU-only plan whose index is out of reach falls back
    to PyPI's wheel, which runs on the CPU too."""
    try:
        run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *args])
    except subprocess.CalledProcessError:
        if cuda_build or "--index-url" not in args:
            raise
        print("quickstart: the CPU-only index is out of reach; PyPI's torch wheel runs on the CPU too", flush=True)
        run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", args[0]])


def main(argv):
    if sys.version_info < (3, 10):
        raise SystemExit(f"redux needs Python >= 3.10, this is {sys.version.split()[0]}")
    own = argv[:argv.index("--")] if "--" in argv else argv
    job_args = argv[argv.index("--") + 1:] if "--" in argv else []
    unknown = [a for a in own if a not in ("--no-run", "--torch", "newest")]
    if unknown or ("--torch" in own) != ("newest" in own):
        raise SystemExit(f"usage: python3 scripts/quickstart.py [--no-run] [--torch newest] [-- LEADERBOARD ARGS]"
                         f" (got {' '.join(own)})")
    run_job = "--no-run" not in own
    cuda = nvcc_version()
    torch_args, cuda_build, why = torch_plan(cuda, newest="--torch" in own)
    print(f"quickstart: {why}", flush=True)
    py = venv_python()
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--upgrade", "pip"])
    install_torch(py, torch_args, cuda_build)
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", *DEPENDENCIES])
    build_env = {"MAX_JOBS": os.environ.get("MAX_JOBS", str(os.cpu_count() or 1)),
                 "TORCH_CUDA_ARCH_LIST": os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0")}
    if cuda_build is False:
        build_env["REDUX_CPU_ONLY"] = "1"
    run([py, "-m", "pip", "install", "--disable-pip-version-check", "--no-build-isolation", "-e", "."], **build_env)
    if run_job:
        run([py, "-m", "leaderboard", *job_args])
    print(f"quickstart: done. Tests: {os.path.relpath(py, ROOT)} -m pytest tests", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
