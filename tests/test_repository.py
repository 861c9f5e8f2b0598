"""The tree describes the product: no pointers into a development diary, no
result file outside the index, docs within their size, measuring programs
split by question."""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Numbered rounds of development (the word "stop" and a number): history belongs to git.
ROUND_REFERENCE = re.compile(r"\bstops? [0-9]+|stop-?[0-9]+", re.I)
# The development machines' and tools' names.
MACHINE_NAMES = re.compile(r"nvidia-h[0-9]{3}(-x[0-9])?\b|device tool|dev machine", re.I)
TEXT_SUFFIXES = (".c", ".h", ".cu", ".cuh", ".cpp", ".py", ".sh", ".md", ".txt", ".toml", ".json", ".cfg", ".in")


def tracked_files():
    """The repository's files: git's list in a checkout, else a walk of the tree."""
    try:
        # tracked and untracked-but-not-ignored files: a copy of a working
        # tree over an older checkout still lists what is there
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        files = sorted({f for f in out.splitlines() if os.path.isfile(os.path.join(ROOT, f))})
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    skip = {".git", ".venv", "build", "dist", "out", "__pycache__", ".pytest_cache"}
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip and not d.endswith(".egg-info")]
        files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]
    return files


def text_of(rel):
    with open(os.path.join(ROOT, rel), errors="replace") as f:
        return f.read()


def text_files():
    return {f for f in tracked_files() if f.endswith(TEXT_SUFFIXES) or f == ".ci/run"}


def test_no_numbered_rounds_of_development_anywhere():
    hits, texts = [], text_files()
    for rel in tracked_files():
        if ROUND_REFERENCE.search(rel):
            hits.append(f"{rel}: its name")
        if rel in texts:
            for n, line in enumerate(text_of(rel).splitlines(), 1):
                if ROUND_REFERENCE.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:80]}")
    assert not hits, "history belongs to git and the CHANGELOG:\n" + "\n".join(hits)


def test_no_development_machine_names():
    hits = [f"{rel}:{n}" for rel in text_files() if rel != "tests/test_repository.py"
            for n, line in enumerate(text_of(rel).splitlines(), 1) if MACHINE_NAMES.search(line)]
    assert not hits, hits


def test_no_superseded_result_files():
    names = [f for f in tracked_files() if re.search(r"disturbed|_interim|_stop", f, re.I)]
    assert not names, names


def index_entries():
    """The files results/INDEX.md lists (first column of its table)."""
    rows = re.findall(r"^\| `([^`]+)` \|", text_of("results/INDEX.md"), flags=re.M)
    assert rows, "results/INDEX.md lists no file"
    return rows


def test_every_result_file_is_indexed_and_every_indexed_file_exists():
    listed = set(index_entries())
    present = {os.path.relpath(f, "results") for f in tracked_files()
               if f.startswith("results/") and f != "results/INDEX.md"}
    assert present - listed == set(), f"results not in results/INDEX.md: {sorted(present - listed)}"
    assert listed - present == set(), f"results/INDEX.md lists missing files: {sorted(listed - present)}"
    assert len(present) <= 30


def test_each_index_row_names_a_commit_and_a_command():
    for line in text_of("results/INDEX.md").splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) >= 4, line  # file, what, commit, command
            assert re.fullmatch(r"[0-9a-f]{7,40}", cells[2]), f"no commit: {line}"
            assert "`" in cells[3], f"no command: {line}"


def test_results_live_outside_the_packages():
    inside = [f for f in tracked_files() if f.startswith(("redux/", "leaderboard/")) and "/results/" in f]
    assert not inside, inside


@pytest.mark.parametrize("rel, limit", [("README.md", 200), ("docs/performance.md", 150)])
def test_docs_within_their_size(rel, limit):
    assert len(text_of(rel).splitlines()) <= limit


def test_measuring_programs_are_split_by_question():
    for rel in tracked_files():
        if rel.startswith("bench/") and rel.endswith((".cu", ".cuh", ".c", ".h", ".py", ".sh")):
            assert len(text_of(rel).splitlines()) <= 800, rel


def test_bench_readme_lists_every_program():
    readme = text_of("bench/README.md")
    for rel in tracked_files():
        if rel.startswith("bench/") and rel.count("/") == 1 and rel.endswith((".cu", ".c", ".py", ".sh")):
            assert f"`{os.path.basename(rel)}`" in readme, rel
