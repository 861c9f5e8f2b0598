"""Each fact has one home; these tests fail when a copy drifts from it.

- the variants table (include/redux/variants.h, read by redux.VARIANTS):
  the numbering, the table of docs/harness.md, ladder.cu's contents (the registered
  ops: tests/test_ladder.py);
- the dtype pairs (REDUX_DTYPE_PAIRS in redux.h): no second list in csrc/;
- element sizes (redux_dtype_size in redux.h): no second definition;
- the runner protocol's exit codes (utils.h): what the evaluator uses and
  what its docstring states.
"""
import os
import re

import redux
from leaderboard import evaluator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def csrc_files():
    for folder, _, names in os.walk(os.path.join(ROOT, "csrc")):
        for name in names:
            if name.endswith((".c", ".h", ".cu", ".cuh", ".cpp")):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, ROOT), read(os.path.relpath(path, ROOT))


def test_variants_are_numbered_from_one_with_the_product_last():
    assert [v.rung for v in redux.VARIANTS] == list(range(1, len(redux.VARIANTS) + 1))
    general = [v.name for v in redux.VARIANTS if v.general]
    assert general == ["sum"] and redux.VARIANTS[-1].name == "sum"
    assert redux.by_name("sum").deterministic and redux.by_name("sum_two_pass").deterministic


def test_docs_table_is_the_variants_table():
    text = read("docs/harness.md")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| (.+?) \| (yes|no) \|$", text, flags=re.M)
    want = [(str(v.rung), v.name, v.idea, "yes" if v.deterministic else "no") for v in redux.VARIANTS]
    assert rows == want, "docs/harness.md's variants table differs from include/redux/variants.h"


def test_ladder_source_contents_follow_the_numbering():
    listed = re.findall(r"^ \*   rung (\d+) (\w+)", read("csrc/cuda/ladder.cu"), flags=re.M)
    want = [(str(v.rung), v.name[len("sum_"):]) for v in redux.VARIANTS if not v.general]
    assert listed == want


def test_dtype_pairs_have_one_list():
    pair = re.compile(r"\b(in|out)\s*==\s*REDUX_(F16|BF16|F32|F64|I64)\s*&&\s*(in|out)\s*==\s*REDUX_")
    for rel, text in csrc_files():
        assert not pair.search(text), f"{rel} spells a dtype pair: use REDUX_DTYPE_PAIRS (redux.h)"
    uses = [rel for rel, text in csrc_files() if "REDUX_DTYPE_PAIRS(" in text]
    assert sorted(uses) == ["csrc/cpu/status.c", "csrc/cuda/dispatch.cuh"]


def test_element_sizes_have_one_definition():
    for rel, text in csrc_files():
        assert not re.search(r"\b(elem_bytes|dtype_bytes)\s*\(", text), f"{rel}: use redux_dtype_size (redux.h)"


def test_exit_codes_come_from_utils_h():
    codes = evaluator.read_exit_codes()
    assert codes == {"OK": 0, "USAGE": 2, "CUDA_API": 110, "NO_FD": 111, "TEST_FAIL": 112, "TEST_SPEC": 113}
    assert (evaluator.EXIT_OK, evaluator.EXIT_USAGE, evaluator.EXIT_CUDA, evaluator.EXIT_NO_FD, evaluator.EXIT_TEST_FAIL,
            evaluator.EXIT_TEST_SPEC) == (0, 2, 110, 111, 112, 113)
    stated = "0 ok, 2 usage, 110 CUDA error, 111 no POPCORN_FD,\n112 a test failed, 113 bad test spec"
    assert stated in evaluator.__doc__


def test_product_code_has_no_sweep_knobs_or_notebook_pointers():
    """Measuring tools rebuild copies (bench/sweep.sh); product code keeps no
    -D override for them and states reasons, not pointers into a log."""
    for rel, text in csrc_files():
        assert not re.search(r"#ifndef REDUX_(CHUNKS|COLS|ROWS)_", text), f"{rel} has a build override"
        assert "PERFORMANCE.md change" not in text and "describe_cols" not in text, rel
    for rel in ("include/redux/reduce.cuh", "include/redux/redux.h"):
        assert "PERFORMANCE.md change" not in read(rel), rel


# ---- functions sized to be read ----

MAX_FUNCTION_LINES = 60


def c_function_lengths(text):
    """(first line, length) of every function body at file or namespace
    scope in C/C++/CUDA source: a brace matcher that treats namespace,
    extern and type bodies as scopes, not functions."""
    stack, found = [], []
    for i, line in enumerate(text.split("\n")):
        code = re.sub(r'//.*|"(\\.|[^"])*"', "", line)
        for ch in code:
            if ch == "{":
                at_scope = not stack or stack[-1][0] == "scope"
                is_scope = re.search(r"\b(namespace|extern)\b", code) or (
                    at_scope and re.search(r"\b(struct|class|enum|union)\b\s*\w*\s*(:[^{]*)?\{", code))
                stack.append(("scope" if is_scope else "function" if at_scope else "block", i))
            elif ch == "}" and stack:
                kind, start = stack.pop()
                if kind == "function":
                    found.append((start + 1, i - start + 1))
    return found


def test_functions_fit_on_a_screen():
    import ast
    long = []
    for rel, text in csrc_files():
        long += [f"{rel}:{line} ({n} lines)" for line, n in c_function_lengths(text) if n > MAX_FUNCTION_LINES]
    for folder in ("leaderboard", "redux"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".py"):
                rel = f"{folder}/{name}"
                for node in ast.walk(ast.parse(read(rel))):
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        n = node.end_lineno - node.lineno + 1
                        if n > MAX_FUNCTION_LINES:
                            long.append(f"{rel}:{node.lineno} {node.name} ({n} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_function_length_check_sees_functions():
    src = "namespace a {\nstruct S { int f() {\nreturn 1; } };\nint g() {\n" + "x;\n" * 70 + "}\n}\n"
    lengths = c_function_lengths(src)
    assert (4, 72) in lengths and (2, 2) not in lengths
