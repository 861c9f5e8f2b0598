"""Builds redux._C with torch.utils.cpp_extension.

CUDA build when torch has CUDA and a CUDA toolkit (nvcc) is found, else a
CPU-only build (announced at build time). Environment:
  TORCH_CUDA_ARCH_LIST  GPU architectures, default "9.0" (H100/H200);
                        e.g. "8.0;9.0;10.0" for A100 + Hopper + Blackwell.
  REDUX_CPU_ONLY=1      force the CPU-only build.
  REDUX_PTXAS_VERBOSE=1 print the compiler's register/spill report.
The C kernels (csrc/cpu/*.c) are compiled as C11 by the C compiler: the
ninja build would otherwise hand them to the C++ compiler.
"""
import glob
import os
import re
import subprocess
import sys

from setuptools import setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
C_FLAGS = ["-std=c11", "-O3", "-fPIC", "-ffp-contract=off", "-Wall", "-Wextra"]


def nvcc_major():
    """The CUDA toolkit's major version (nvcc --version), or None."""
    try:
        out = subprocess.run([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"release (\d+)\.", out)
    return int(m.group(1)) if m else None


def want_cuda():
    """(CUDA build?, why): the CUDA kernels need a torch built with CUDA and a
    toolkit of the same major version (cpp_extension refuses any other)."""
    if os.environ.get("REDUX_CPU_ONLY") == "1":
        return False, "REDUX_CPU_ONLY=1"
    if torch.version.cuda is None:
        return False, f"torch {torch.__version__} has no CUDA"
    if CUDA_HOME is None:
        return False, "no CUDA toolkit (nvcc) found"
    toolkit = nvcc_major()
    if toolkit != int(torch.version.cuda.split(".")[0]):
        return False, (f"the CUDA toolkit at {CUDA_HOME} is CUDA {toolkit}, torch {torch.__version__} is built "
                       f"for CUDA {torch.version.cuda}: their major versions differ")
    return True, f"torch {torch.__version__} (CUDA {torch.version.cuda}), toolkit at {CUDA_HOME}"


def torch_release():
    """The torch release the extension is built against, without a local tag
    (2.11.0+cu130 -> 2.11.0): its C++ ABI is the one the extension needs."""
    return torch.__version__.split("+")[0]


def write_build_info(cuda):
    """redux/_build_info.py: which torch this build is for, read at import
    (redux/__init__.py) to refuse another torch with a clear error."""
    with open(os.path.join(ROOT, "redux", "_build_info.py"), "w") as f:
        f.write('"""Written by setup.py at build time: the torch this build of redux._C is for."""\n')
        f.write(f"TORCH_VERSION = {torch.__version__!r}\n")
        f.write(f"TORCH_RELEASE = {torch_release()!r}\n")
        f.write(f"CUDA_KERNELS = {bool(cuda)!r}\n")


def _links_shared_libstdcxx(cxx):
    try:
        out = subprocess.run([*cxx.split(), "-print-file-name=libstdc++.so"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return os.path.isabs(out)


def pick_cxx():
    """The extension must share libstdc++ with torch. A C++ compiler that can
    only link libstdc++ statically (seen: CXX=/opt/gcc/bin/g++ on a CUDA
    image) puts a private, uninitialized copy of iostreams into redux._C,
    which crashes on the first error message. Use a compiler that links the
    shared library, and say so."""
    cxx = os.environ.get("CXX", "c++")
    if _links_shared_libstdcxx(cxx):
        return
    for cand_cxx, cand_cc in (("/usr/bin/g++", "/usr/bin/gcc"), ("/usr/bin/c++", "/usr/bin/cc")):
        if os.path.exists(cand_cxx) and _links_shared_libstdcxx(cand_cxx):
            print(f"redux: {cxx} cannot link a shared libstdc++; building with {cand_cxx} instead",
                  file=sys.stderr)
            os.environ["CXX"], os.environ["CC"] = cand_cxx, cand_cc
            return
    raise SystemExit(f"redux: {cxx} links libstdc++ only statically and no other g++ was found; "
                     "set CXX to a compiler with a shared libstdc++")


def openmp_flags():
    """-fopenmp if the C++ compiler can build and link OpenMP code, else []
    with a warning: at::parallel_for is header-inline OpenMP, so without it
    the CPU kernels run on one thread (still correct and deterministic)."""
    import tempfile
    cxx = os.environ.get("CXX", "c++")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "omp.cpp")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main() { int n = 0;\n#pragma omp parallel\n n = omp_get_num_threads(); return n < 1; }\n")
        try:
            subprocess.run([*cxx.split(), "-fopenmp", src, "-o", os.path.join(d, "omp")], check=True,
                           capture_output=True)
            return ["-fopenmp"]
        except (OSError, subprocess.CalledProcessError):
            print(f"redux: WARNING: {cxx} cannot build OpenMP code; the CPU kernels will run single-threaded",
                  file=sys.stderr)
            return []


class BuildWithC11(BuildExtension):
    """Compiles csrc/cpu/*.c with the C compiler, then links them in."""

    def build_extensions(self):
        cc = os.environ.get("CC", "cc")
        out_dir = os.path.join(self.build_temp, "c11")
        os.makedirs(out_dir, exist_ok=True)
        for ext in self.extensions:
            for src in sorted(glob.glob(os.path.join(ROOT, "csrc", "cpu", "*.c"))):
                obj = os.path.join(out_dir, os.path.basename(src) + ".o")
                cmd = [cc, *C_FLAGS, "-I", os.path.join(ROOT, "include"), "-c", src, "-o", obj]
                print(" ".join(cmd))
                subprocess.check_call(cmd)
                ext.extra_objects.append(obj)
        super().build_extensions()


def extension():
    cuda, why = want_cuda()
    # -fopenmp: at::parallel_for is header-inline OpenMP; without it the CPU
    # work items silently run on one thread (measured: no speedup at 2 threads).
    link = openmp_flags()
    # No -std: cpp_extension adds the C++ standard its torch's headers need.
    cxx = ["-O3", *link]
    sources = sorted(glob.glob("csrc/torch/*.cpp"))
    include_dirs = [os.path.join(ROOT, "include")]
    if not cuda:
        print(f"redux: building the CPU-ONLY extension ({why}); torch.ops.redux.* will have no CUDA kernels",
              file=sys.stderr)
        sources = [s for s in sources if not s.endswith("_cuda.cpp")]
        return CppExtension("redux._C", sources, include_dirs=include_dirs,
                            extra_compile_args={"cxx": cxx}, extra_link_args=link, py_limited_api=False)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    print(f"redux: building the CUDA extension for TORCH_CUDA_ARCH_LIST={os.environ['TORCH_CUDA_ARCH_LIST']}"
          f" ({why})", file=sys.stderr)
    nvcc = ["-O3", "-lineinfo"]
    if os.environ.get("REDUX_PTXAS_VERBOSE") == "1":
        nvcc += ["-Xptxas", "-v"]
    sources += sorted(glob.glob("csrc/cuda/*.cu"))
    return CUDAExtension("redux._C", sources, include_dirs=include_dirs, define_macros=[("REDUX_WITH_CUDA", None)],
                         extra_compile_args={"cxx": cxx, "nvcc": nvcc}, extra_link_args=link)


pick_cxx()
ext = extension()
write_build_info(any(src.endswith(".cu") for src in ext.sources))
# Name, version and packages are in pyproject.toml; the dependency is the
# torch release this build is for (its C++ ABI), not a range.
setup(
    ext_modules=[ext],
    cmdclass={"build_ext": BuildWithC11},
    install_requires=[f"torch=={torch_release()}"],
)
