"""One version number (redux.__version__, the installed metadata, the
CHANGELOG), a license, the typing marker, and a distribution name of our
own."""
import importlib.metadata
import os
import re

import pytest

import redux

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DISTRIBUTION = "torch-redux"


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def test_the_version_is_written_once():
    assert re.fullmatch(r"\d+\.\d+\.\d+", redux.__version__)
    pyproject = read("pyproject.toml")
    assert 'dynamic = ["version", "dependencies"]' in pyproject and 'attr = "redux._version.__version__"' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, flags=re.M), "a second version in pyproject.toml"
    assert re.search(rf"^## {re.escape(redux.__version__)}$", read("CHANGELOG.md"), flags=re.M)


def test_installed_metadata_has_the_version_and_name():
    try:
        installed = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{DISTRIBUTION} is not installed (redux imported from a build in place)")
    assert installed == redux.__version__
    assert f'name = "{DISTRIBUTION}"' in read("pyproject.toml")


def test_license_and_typing_marker_ship():
    assert read("LICENSE").startswith("BSD 3-Clause License")
    assert os.path.exists(os.path.join(os.path.dirname(redux.__file__), "py.typed"))
    assert 'redux = ["py.typed"]' in read("pyproject.toml")


def test_another_torch_gets_a_clear_error_naming_both_and_the_fix():
    """redux._C works only under the torch release it was built for: under
    any other, import redux says which torch it was built for, which is
    running, and how to rebuild (here the running torch's version is faked)."""
    import subprocess
    import sys
    try:
        from redux import _build_info
    except ImportError:
        pytest.skip("this build predates redux/_build_info.py: rebuild to test the check")
    code = ("import torch; torch.__version__ = '0.0.1'\n"
            "try:\n    import redux\nexcept ImportError as e:\n    print(e)\nelse:\n    print('imported')\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    out = run.stdout
    assert f"redux was built for torch {_build_info.TORCH_VERSION}, but torch 0.0.1 is running" in out, out + run.stderr
    assert "pip install --no-build-isolation --force-reinstall --no-deps <a redux checkout or git URL>" in out
