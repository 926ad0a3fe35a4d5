"""Windows by date: ``--since``/``--until`` given as a date mean that day's midnight,
UTC, whenever and wherever the command runs; a checkpoint outside its window (written
while the window moved with the clock) walks the window again instead of skipping it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.reporting import SilentReporter
from store import open_store
from tests.gitrepo import GitRepo


def _commit_at(repo: GitRepo, n: int, date: str) -> str:
    repo.write(f"f{n}.py", f"def g{n}(x):\n    return x + {n}\n")
    repo.git("add", "-A")
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    repo.git("commit", "-q", "-m", f"add g{n}", env=env)
    return repo.head()


def test_a_date_is_that_days_midnight_utc(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """git reads ``2024-03-01`` as that day at the time of day the command runs: in the
    afternoon ``--since 2024-03-01`` left out the morning's commits and ``--until
    2024-03-02`` took in the next morning's."""
    monkeypatch.setenv("TZ", "UTC")
    repo = GitRepo(tmp_path / "repo")
    _commit_at(repo, 0, "2024-02-29T23:59:30+00:00")
    first = _commit_at(repo, 1, "2024-03-01T00:00:30+00:00")
    last = _commit_at(repo, 2, "2024-03-01T23:59:30+00:00")
    _commit_at(repo, 3, "2024-03-02T00:00:30+00:00")
    result = cli(
        "mine", "commits", str(repo.path), "--since", "2024-03-01", "--until", "2024-03-02",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["seen"] == 2
    conn = sqlite3.connect(tmp_path / "cli.db")
    try:
        assert {row[0] for row in conn.execute("SELECT sha FROM commits")} == {first, last}
    finally:
        conn.close()


def test_a_checkpoint_outside_its_window_walks_the_window_again(tmp_path: Path) -> None:
    """The walk skipped every commit looking for the checkpoint's, then recorded the
    branch as finished: nothing after it was ever mined (a cluster run walked again)."""
    repo = GitRepo(tmp_path / "repo")
    shas = [_commit_at(repo, n, f"2024-03-01T00:0{n}:00+00:00") for n in range(1, 7)]
    window = MineOptions(since="2024-03-01T00:03:30+00:00")
    db = tmp_path / "s.db"
    with open_store(db) as store:
        (first,) = mine_commits(store, [str(repo.path)], MineOptions(since=window.since, limit=1))
        assert first.stored == 1  # shas[3], the window's first
    conn = sqlite3.connect(db)
    with conn:  # as a run of a window that had moved would have left it
        conn.execute("UPDATE checkpoints SET last_key = ?", (shas[1],))
    conn.close()
    reporter = SilentReporter()
    with open_store(db) as store:
        (again,) = mine_commits(store, [str(repo.path)], window, reporter=reporter)
        stored = {row[0] for row in store._conn.execute("SELECT sha FROM commits")}
    assert any("outside the walked range" in p for p in reporter.problems)
    assert (again.seen, again.known, again.stored) == (3, 1, 2)
    assert stored == set(shas[3:])
