"""Every Python block of the README runs as written, in order, in one fresh
interpreter, on the CPU (CUDA hidden), and prints what it says it prints."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def python_blocks():
    with open(os.path.join(ROOT, "README.md")) as f:
        return re.findall(r"^```python\n(.*?)^```$", f.read(), flags=re.M | re.S)


def test_readme_has_the_examples_it_promises():
    text = "\n".join(python_blocks())
    for promised in ("torch.ops.redux.sum", "redux.mean", "redux.enabled()", "rd.sum(", "core.check("):
        assert promised in text, promised


def test_readme_python_blocks_run_on_the_cpu(tmp_path):
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n\n".join(python_blocks()))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^sum [-0-9.]+, error against fp64 [0-9.e+-]+$", run.stdout, flags=re.M), run.stdout
    assert "switch on: True" in run.stdout, run.stdout
