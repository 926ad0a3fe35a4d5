"""The lines a run prints about a commit or a source say why: a clone that lacks some
objects (a copy made without its largest files, a partial clone away from its remote)
loses the commits that need them, each with a line naming the object git could not
read, and a clone from such a repository says so; a diff over a small
``--max-diff-mb`` gives both sizes in a unit that tells them apart; a message whose
declared encoding fails is kept, with a warning; a clone folder that is a file fails
the URLs only."""

from __future__ import annotations

import subprocess
from pathlib import Path

from engines.commits.filters import diff_bytes_verdict
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.reporting import SilentReporter
from store import Store
from tests import raw_sql
from tests.gitrepo import GitRepo, py_module


def test_a_missing_blob_is_named_in_its_commit_line(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2"), "n.py": py_module("y += 1")})
    ok = repo.commit("ok", {"m.py": py_module("y += 1", "y += 3")})
    bad = repo.commit("touches n", {"n.py": py_module("y += 99")})
    after = repo.commit("touches n again", {"n.py": py_module("y += 98")})
    # the version of n.py only these two commits hold (git diff would read the work
    # tree's file in place of a missing blob that matches it)
    blob = repo.git("rev-parse", f"{bad}:n.py").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert (summary.failed, summary.filtered["error"]) == (None, 2)
    assert {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")} == {ok}
    for sha in (bad, after):
        (line,) = [p for p in reporter.problems if sha[:12] in p]
        # was: "git diff-tree stopped while reading SHA", git's reason thrown away
        assert f"unable to read {blob}" in line and "\n" not in line


def test_a_diff_over_a_small_limit_says_both_sizes() -> None:
    options = MineOptions(max_diff_bytes=int(0.001 * 1024 * 1024))  # --max-diff-mb 0.001
    verdict = diff_bytes_verdict("a" * 40, "+x\n" * 500, options)
    assert verdict is not None and verdict.reason == "diff-too-large"
    # was: "diff is 0.0 MB, over the limit of 0.0 MB"
    assert verdict.message == "diff is 1,500 bytes, over the limit of 1,048 bytes"
    large = diff_bytes_verdict("a" * 40, "+" * (3 * 2**20), MineOptions(max_diff_bytes=2**20))
    assert large is not None and large.message == "diff is 3.0 MB, over the limit of 1.0 MB"


def test_a_clone_of_a_damaged_remote_says_what_it_lacks(
    repo: GitRepo, store: Store, tmp_path: Path
) -> None:
    """git ends a clone that broke off with ``fatal: early EOF`` and ``fetch-pack:
    invalid index-pack output``; the line that says why comes from the remote."""
    repo.commit("init", {"m.py": py_module("y += 1")})
    sha = repo.commit("two", {"m.py": py_module("y += 2")})
    origin = tmp_path / "origin.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(origin))  # loose objects, linked
    blob = repo.git("rev-parse", f"{sha}:m.py").strip()
    (origin / "objects" / blob[:2] / blob[2:]).unlink()
    url = f"file://{origin}"
    (summary,) = mine_commits(store, [url], MineOptions(), clone_dir=tmp_path / "clones")
    assert summary.reason == "clone"
    # was: "cannot clone: fatal: fetch-pack: invalid index-pack output"
    assert summary.failed == f"cannot clone: remote: fatal: unable to read {blob}"


def _declare_encoding(repo: GitRepo, encoding: bytes) -> str:
    """Rewrite HEAD with an ``encoding`` header (as ``i18n.commitEncoding`` writes it)."""
    raw = subprocess.run(
        ["git", "-C", str(repo.path), "cat-file", "commit", "HEAD"],
        check=True,
        capture_output=True,
    ).stdout
    head, _, message = raw.partition(b"\n\n")
    new = (
        subprocess.run(
            ["git", "-C", str(repo.path), "hash-object", "-t", "commit", "-w", "--stdin"],
            input=head + b"\nencoding " + encoding + b"\n\n" + message,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .strip()
    )
    repo.git("update-ref", "HEAD", new)
    return new


def test_a_codec_that_fails_on_the_message_keeps_the_commit(repo: GitRepo, store: Store) -> None:
    """A declared encoding whose codec raises something other than a decode error
    (``punycode`` on a sentence) lost the commit as unreadable."""
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("Speed up f1. Fewer copies", {"m.py": py_module("y += 1", "y += 3")})
    sha = _declare_encoding(repo, b"punycode")
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert (summary.stored, summary.filtered["error"]) == (1, 0)
    stored = raw_sql.scalar(store, "SELECT message FROM commits WHERE sha = ?", (sha,))
    assert stored == "Speed up f1. Fewer copies"
    assert any(sha[:12] in p and "undecodable bytes were replaced" in p for p in reporter.problems)


def test_a_clone_folder_that_is_a_file_fails_its_urls_only(
    repo: GitRepo, store: Store, tmp_path: Path
) -> None:
    """``--clone-dir`` naming a file ended the whole run with ``error: PATH: File
    exists``: the sources after the URL were never mined, and no summary was printed."""
    repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("two", {"m.py": py_module("y += 2")})
    origin = tmp_path / "origin.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(origin))
    taken = tmp_path / "clones"
    taken.write_text("not a folder")
    failed, mined = mine_commits(
        store, [f"file://{origin}", str(repo.path)], MineOptions(), clone_dir=taken
    )
    assert failed.reason == "clone"
    assert failed.failed == f"cannot clone into {taken}: {taken} is a file, not a folder"
    assert (mined.failed, mined.stored) == (None, 2)
    assert taken.read_text() == "not a folder"
