"""Defects found mining real histories: C++ template implementation files and CUDA
sources were no known language; a function a commit only moved was stored as its
changed function, with the same code before and after; an interrupted ``--json`` run
printed nothing on stdout; a repository of another language ended with a summary that
did not say so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from engines.commits.boundaries import function_spans, parse
from engines.commits.languages import language_of, parse_languages
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.reporting import SilentReporter
from store import Store
from tests import raw_sql
from tests.gitrepo import GitRepo
from tests.test_mining_resume import build_history, mine_cmd

ROOT = Path(__file__).resolve().parents[1]

_KERNEL = """\
template <typename T>
__global__ void __launch_bounds__(256, 2) scale_kernel(T* out, const T* in, int n) {
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2;
}

__device__ __forceinline__ float twice(float x) {
    return x * 2;
}

void launch(float* out, const float* in, int n, cudaStream_t stream) {
    scale_kernel<float><<<dim3((n + 255) / 256, 1), 256, 0, stream>>>
        (out, in, n);
    cudaCheck(cudaGetLastError());
}
"""


def _cpp(*bodies: str) -> str:
    return "\n\n".join(
        f"int f{i}(int x) {{\n    {b}\n    return x;\n}}\n" for i, b in enumerate(bodies)
    )


@pytest.mark.parametrize("ext", [".ipp", ".inl", ".tpp", ".txx", ".cu", ".cuh", ".INL"])
def test_template_bodies_and_cuda_are_cpp(ext: str) -> None:
    # was None: a commit touching only detail/impl.ipp was filtered as `language`
    assert language_of(f"include/detail/impl{ext}") == "cpp"
    assert "cpp" in parse_languages("c++")


def test_a_cuda_file_gives_its_kernels_and_the_function_that_launches_them() -> None:
    # CUDA's qualifiers and `<<<...>>>` were syntax errors: where the text has one, an
    # incremental parse re-reads whole paragraphs (mining llm.c took 1.8 times as long)
    assert not parse("kernels.cu", _KERNEL.encode()).tree.root_node.has_error
    spans = function_spans("kernels.cu", _KERNEL.encode())
    assert [(s.name, s.start, s.end) for s in spans] == [
        ("scale_kernel", 2, 6),
        ("twice", 8, 10),
        ("launch", 12, 16),
    ]


@pytest.mark.parametrize("boundaries", ["tree-sitter", "lizard"])
def test_an_ipp_change_is_mined(repo: GitRepo, store: Store, boundaries: str) -> None:
    repo.commit("init", {"detail/impl.ipp": _cpp("x += 1;", "x += 2;")})
    sha = repo.commit("faster f1", {"detail/impl.ipp": _cpp("x += 1;", "x <<= 1;")})
    options = MineOptions(languages=parse_languages("cpp"), boundaries=boundaries)
    (summary,) = mine_commits(store, [str(repo.path)], options)
    rows = raw_sql.query(store, "SELECT sha, functions FROM commits")
    assert [(r[0], json.loads(r[1])) for r in rows] == [(sha, ["f1"])], summary.filtered


def _two(first: str, second: str) -> str:
    return f"{first}\n\n{second}"


_A = "def a(x):\n    y = x + 1\n    return y\n"
_B = "def b(x):\n    y = x * 2\n    return y\n"
_B2 = "def b(x):\n    y = x << 1\n    return y\n"
_C = "def c(x):\n    return -x\n"


@pytest.mark.parametrize("boundaries", ["tree-sitter", "lizard"])
def test_a_moved_function_is_not_a_changed_one(
    repo: GitRepo, store: Store, boundaries: str
) -> None:
    repo.commit("init", {"m.py": "\n\n".join([_A, _B, _C])})
    moved = repo.commit("move a to the end", {"m.py": "\n\n".join([_B, _C, _A])})
    both = repo.commit("move b up, change it", {"m.py": "\n\n".join([_B2, _C, _A])})
    back = repo.commit("move a up, change b", {"m.py": "\n\n".join([_A, _B, _C])})
    options = MineOptions(boundaries=boundaries)
    (summary,) = mine_commits(store, [str(repo.path)], options)
    rows = raw_sql.query(store, "SELECT sha, functions, code_before, code_after FROM commits")
    kept = {r[0]: json.loads(r[1]) for r in rows}
    # was: `moved` stored as a change of `a`, its code the same before and after
    assert moved not in kept and summary.filtered["no-code-change"] == 1
    assert all(r[2] != r[3] for r in rows)
    assert kept[both] == ["b"]
    # `a` moved and `b` changed: one changed function, not too-many-functions
    assert kept[back] == ["b"], summary.filtered


@pytest.mark.parametrize("boundaries", ["tree-sitter", "lizard"])
def test_a_changed_method_beside_an_unchanged_one_of_its_name_is_kept(
    repo: GitRepo, store: Store, boundaries: str
) -> None:
    """Two classes' ``forward(self, x)``, both in the hunk: the one that changed counts
    (llm.c's ``train_gpt2.py``, where comparing the last ``forward`` of the file, which
    had not changed, called such commits ``no-code-change``)."""
    two = "class A:\n    def forward(self, x):\n        return x + {}\nclass B:\n"
    two += "    def forward(self, x):\n        return x * 2\n"
    repo.commit("init", {"m.py": two.format(1), "README.md": "two classes\n"})
    sha = repo.commit("faster A", {"m.py": two.format(2)})
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(boundaries=boundaries))
    rows = raw_sql.query(store, "SELECT sha, functions FROM commits")
    assert [(r[0], json.loads(r[1])) for r in rows] == [(sha, ["forward"])], summary.filtered


def test_an_interrupted_json_run_prints_what_it_saved(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    build_history(repo, 400)
    db = tmp_path / "stopped.db"
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen(
        [*mine_cmd(repo.path, db), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and _stored(db) < 20:
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    summary = json.loads(out)  # was: nothing on stdout
    assert summary["interrupted"] is True
    (source,) = summary["sources"]
    stored = _stored(db)
    # what the summary counts is what the store holds: the unsaved tail is not counted
    assert source["stored"] == summary["stored"] == stored >= 20
    assert source["seen"] == sum(source["filtered"].values()) + source["duplicates"] + stored
    assert source["seen"] < 401


def _stored(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=0.1)
        try:
            return conn.execute("SELECT count(*) FROM commits").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def test_a_repository_of_another_language_says_so(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"src/main.rs": "fn main() {}\n", "Cargo.toml": "[package]\n"})
    repo.commit("faster", {"src/main.rs": "fn main() { run(); }\n"})
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.filtered == {"too-many-files": 1, "language": 1}
    # was: nothing but those two reasons, which do not say that the code is Rust
    (line,) = reporter.problems
    assert "no file of the chosen languages (cpp, java, python) at the tip of main" in line
    assert "(its files: .rs 1, .toml 1)" in line


def test_a_repository_of_a_chosen_language_has_no_such_line(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": _A, "README.md": "hi\n"})
    repo.commit("docs", {"README.md": "hello\n"})
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.filtered == {"too-many-files": 1, "language": 1}
    assert reporter.problems == []
