"""Running the same mining command again after the repository changed: commits that
reach the branch from a merge, or from a deepened shallow clone, are listed by git
before the last checkpoint, and must still be walked, in process and on a cluster."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from engines.commits.cluster import mine_on_cluster
from engines.commits.options import MineOptions
from engines.commits.pipeline import SilentReporter, mine_commits
from store import open_store
from tests.gitrepo import GitRepo, py_module


def _stored(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {row[0] for row in conn.execute("SELECT sha FROM commits")}
    finally:
        conn.close()


def _bodies(*changed: tuple[int, str]) -> str:
    bodies = [f"y += {i}" for i in range(4)]
    for slot, body in changed:
        bodies[slot] = body
    return py_module(*bodies)


def _merge(repo: GitRepo, branch: str) -> None:
    repo.ticks += 1
    date = f"2024-03-01T00:{repo.ticks:02d}:00+00:00"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    repo.git("merge", "-q", "--no-edit", branch, env=env)


def _branch_merged_after_a_run(tmp_path: Path) -> tuple[GitRepo, str, str]:
    """main: start, then ``a`` (one function each); ``side``, branched from start, holds
    ``s`` with a date before ``a``'s. Returns the repository, ``s`` and ``a``; ``side`` is
    merged by :func:`_merge` once a run has walked main."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {"m.py": _bodies()})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("speed up f3", {"m.py": _bodies((3, "y *= 3"))})
    repo.git("checkout", "-q", "main")
    a = repo.commit("speed up f0", {"m.py": _bodies((0, "y *= 2"))})
    return repo, side, a


def _mine(db: Path, path: Path, client: Client | None) -> SilentReporter:
    reporter = SilentReporter()
    with open_store(db) as store:
        if client is None:
            summaries = mine_commits(store, [str(path)], MineOptions(), reporter=reporter)
        else:
            summaries = mine_on_cluster(store, [str(path)], MineOptions(), client, chunk=2)
    assert not any(s.failed for s in summaries)
    return reporter


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.mark.parametrize("where", ["in-process", "cluster"])
def test_a_branch_merged_after_a_run_is_mined_by_the_next_run(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    client = request.getfixturevalue("client") if where == "cluster" else None
    repo, side, a = _branch_merged_after_a_run(tmp_path)
    db = tmp_path / "s.db"
    _mine(db, repo.path, client)
    assert _stored(db) == {a}
    _merge(repo, "side")
    # git lists the merged commit before the checkpoint's: it is older
    listed = repo.git("rev-list", "--reverse", "--no-merges", "main").split()
    assert listed.index(side) < listed.index(a)
    _mine(db, repo.path, client)
    assert _stored(db) == {a, side}  # was {a}: the merged commit was never walked
    fresh = tmp_path / "fresh.db"
    _mine(fresh, repo.path, None)
    assert _stored(fresh) == _stored(db)


def test_a_checkpoint_without_its_tip_still_finds_the_merged_commits(tmp_path: Path) -> None:
    # checkpoints written before tips were kept: the walk goes by the checkpoint's own
    # history, and what it examines again is recognised as stored
    repo, side, a = _branch_merged_after_a_run(tmp_path)
    db = tmp_path / "s.db"
    _mine(db, repo.path, None)
    conn = sqlite3.connect(db)
    with conn:
        (counters,) = conn.execute("SELECT counters FROM checkpoints").fetchone()
        old = {k: v for k, v in json.loads(counters).items() if k != "tip"}
        conn.execute("UPDATE checkpoints SET counters = ?", (json.dumps(old),))
    conn.close()
    _merge(repo, "side")
    _mine(db, repo.path, None)
    assert _stored(db) == {a, side}


def test_a_deepened_shallow_clone_is_walked_again(tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.commit("start", {"m.py": _bodies()})
    for n in range(8):
        origin.commit(f"speed up f{n % 4}", {"m.py": _bodies((n % 4, f"y *= {n + 2}"))})
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "3", f"file://{origin.path}", str(clone)],
        check=True,
        capture_output=True,
    )
    db = tmp_path / "s.db"
    _mine(db, clone, None)
    shallow = _stored(db)
    subprocess.run(["git", "-C", str(clone), "fetch", "-q", "--unshallow"], check=True)
    reporter = _mine(db, clone, None)
    assert any("the clone was deepened" in p for p in reporter.problems)
    fresh = tmp_path / "fresh.db"
    _mine(fresh, clone, None)
    assert shallow < _stored(db) == _stored(fresh)  # was: the older commits never walked
    assert _mine(db, clone, None).problems == []  # the edge is gone: no walk again
