"""A source mined more than once: ``curator stats`` counts what it has stored over every
walk, and a run reads the store's checkpoints once."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from curator.mining import CommitRun, run_in_process, sources_to_mine
from engines.commits.options import MineOptions
from engines.reporting import SilentReporter
from store import open_store
from tests.gitrepo import GitRepo


def _history(repo: GitRepo, commits: int) -> list[str]:
    """``commits`` commits, each adding a file with one function of its own."""
    return [
        repo.commit(f"add g{n}", {f"f{n}.py": f"def g{n}(x):\n    return x + {n}\n"})
        for n in range(commits)
    ]


def _stored_from(db: Path, source: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM items WHERE source = ?", (str(source),))
        return int(count[0])
    finally:
        conn.close()


def test_stats_counts_what_a_source_stored_over_every_walk(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A walk that starts over (history rewritten after a run) recognises the commits an
    earlier walk stored as duplicates of them; stats said ``stored 0`` for a source
    holding seven commits."""
    repo = GitRepo(tmp_path / "repo")
    _history(repo, 7)
    assert cli("mine", "commits", str(repo.path), "--limit", "3").exit_code == 0
    assert cli("mine", "commits", str(repo.path)).exit_code == 0
    # every commit gets a new sha: the checkpoint is no longer on the branch
    repo.git(
        "rebase",
        "-q",
        "--root",
        "--force-rebase",
        env={"GIT_COMMITTER_DATE": "2025-01-01T00:00:00+00:00"},
    )
    rerun = cli("mine", "commits", str(repo.path), "--json")
    assert rerun.exit_code == 0
    assert "no longer on main" in rerun.stderr
    assert (json.loads(rerun.stdout)["stored"], json.loads(rerun.stdout)["duplicates"]) == (0, 7)

    data = json.loads(cli("stats", "--json").stdout)
    mining = data["mining"][f"commit:{repo.path}"]
    assert mining["stored"] == 7 == data["by_source"][str(repo.path)]
    assert (mining["stored_by_walk"], mining["duplicates"], mining["seen"]) == (0, 7, 7)
    table = cli("stats").stdout.partition("Mining runs")[2]
    row = next(line for line in table.splitlines() if str(repo.path) in line)
    assert [cell.strip() for cell in row.split("│")[2:6]] == ["7", "0", "7", "7"]


def test_stats_counts_the_commits_of_every_window(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two windows of one history (two scopes): the later window's walk knows only its
    own commits, stats counts the source's."""
    repo = GitRepo(tmp_path / "repo")
    _history(repo, 6)  # one commit a minute from 2024-03-01T00:01
    early = cli("mine", "commits", str(repo.path), "--until", "2024-03-01T00:03:30+00:00")
    late = cli("mine", "commits", str(repo.path), "--since", "2024-03-01T00:03:30+00:00")
    assert early.exit_code == late.exit_code == 0
    data = json.loads(cli("stats", "--json").stdout)
    mining = data["mining"][f"commit:{repo.path}"]
    assert mining["stored"] == 6 == _stored_from(tmp_path / "cli.db", repo.path)
    assert mining["stored_by_walk"] == 3  # the latest window's


def test_a_run_reads_the_checkpoints_once(tmp_path: Path) -> None:
    """Choosing the sources (the spellings the store holds, the listed sources an earlier
    run finished) and resuming each read the whole checkpoints table, once more per
    source: one read now, handed along."""
    repos = []
    for name in ("a", "b", "c"):
        repo = GitRepo(tmp_path / name)
        _history(repo, 2)
        repos.append(str(repo.path))
    options = MineOptions(limit=1)
    with open_store(tmp_path / "s.db") as store:
        first = sources_to_mine(store, [], repos, options, refresh=False)
        run_in_process(store, CommitRun(first.specs, options), SilentReporter())
        reads: list[str] = []
        store._conn.set_trace_callback(
            lambda sql: reads.append(sql) if "FROM checkpoints" in sql else None
        )
        chosen = sources_to_mine(store, [repos[0]], repos[1:], MineOptions(), refresh=False)
        assert len(reads) == 1, reads  # was 2: the spellings, then the finished sources
        run = CommitRun(chosen.specs, MineOptions(), checkpoints=chosen.checkpoints)
        summaries, _ = run_in_process(store, run, SilentReporter())
        store._conn.set_trace_callback(None)
    assert len(reads) == 1, reads  # none per source
    # resumed from the checkpoints read then: each source walks its second commit only
    assert [(s.seen, s.resumed_after is not None) for s in summaries] == [(1, True)] * 3


def test_a_window_without_commits_is_finished(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A listed repository whose window holds no commit was never recorded as walked
    in process (a cluster run recorded it): each rerun of the list walked it again,
    and stats did not list it."""
    repo = GitRepo(tmp_path / "repo")
    _history(repo, 2)
    listing = tmp_path / "repos.csv"
    listing.write_text(f"{repo.path},10,Python\n")
    window = ("--repos-file", str(listing), "--since", "2030-01-01", "--json")
    first = cli("mine", "commits", *window)
    assert first.exit_code == 0 and json.loads(first.stdout)["seen"] == 0
    again = json.loads(cli("mine", "commits", *window).stdout)
    assert (again["skipped_finished"], again["sources"]) == (1, [])
    mining = json.loads(cli("stats", "--json").stdout)["mining"][f"commit:{repo.path}"]
    assert (mining["seen"], mining["finished"], mining["stored"]) == (0, True, 0)
    # the branch gains a commit in the window: the named source walks it
    repo.git(
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "later",
        env={
            "GIT_AUTHOR_DATE": "2031-01-01T00:00:00+00:00",
            "GIT_COMMITTER_DATE": "2031-01-01T00:00:00+00:00",
        },
    )
    named = json.loads(
        cli("mine", "commits", str(repo.path), "--since", "2030-01-01", "--json").stdout
    )
    assert (named["seen"], named["filtered"]) == (1, {"no-files": 1})
