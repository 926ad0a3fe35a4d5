"""A run killed with SIGKILL restarts where it stopped and ends with a clean run's rows."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests import raw_sql
from tests.gitrepo import GitRepo

TABLES = {
    "items": "SELECT kind, key, source, path, language, dedup_hash FROM items ORDER BY key",
    "commits": "SELECT sha, file, functions, code_before, code_after, diff_hash FROM commits"
    " ORDER BY sha",
    "predictions": "SELECT i.key, p.labeler, p.label, p.details FROM predictions p"
    " JOIN items i ON i.id = p.item_id ORDER BY i.key, p.labeler",
    "duplicates": "SELECT key, matched_on FROM duplicates ORDER BY key",
}


def build_history(repo: GitRepo, commits: int) -> None:
    """A Python module of 8 functions; each commit edits one (some edits repeat, as dups)."""
    bodies = [f"y += {i}" for i in range(8)]

    def render() -> str:
        return "\n\n".join(
            f"def f{i}(x):\n    y = x\n    {b}\n    return y\n" for i, b in enumerate(bodies)
        )

    repo.commit("init", {"m.py": render()})
    last: tuple[int, str, str] = (0, bodies[0], bodies[0])
    for n in range(commits):
        if n % 10 == 8:  # revert the previous change ...
            slot, old, new = last
            bodies[slot] = old
        elif n % 10 == 9:  # ... and make it again: the same function pair, a duplicate
            slot, old, new = last
            bodies[slot] = new
        else:
            slot = n % 8
            last = (slot, bodies[slot], f"y = y * {n} + {slot}")
            bodies[slot] = last[2]
        repo.commit(f"change {n}: tune f{slot}", {"m.py": render()})


def snapshot(db: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in TABLES.items()}
    finally:
        conn.close()


def mine_cmd(repo: Path, db: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "curator",
        "mine",
        "commits",
        str(repo),
        "--db",
        str(db),
        "--batch-size",
        "5",
    ]


def test_sigkill_then_rerun_equals_clean_run(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    # long enough that the run is still storing when it is killed, even on a loaded machine
    build_history(repo, 400)
    env = {**os.environ, "COLUMNS": "120"}

    clean_db = tmp_path / "clean.db"
    subprocess.run(mine_cmd(repo.path, clean_db), check=True, env=env, capture_output=True)
    clean = snapshot(clean_db)
    assert len(clean["items"]) > 100 and clean["duplicates"]

    killed_db = tmp_path / "killed.db"
    proc = subprocess.Popen(
        mine_cmd(repo.path, killed_db),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
        if killed_db.exists():
            try:
                conn = sqlite3.connect(killed_db, timeout=1)
                stored = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
                conn.close()
            except sqlite3.OperationalError:
                continue
            if stored >= 20:
                break
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = snapshot(killed_db)
    assert 20 <= len(partial["items"]) < len(clean["items"])

    subprocess.run(mine_cmd(repo.path, killed_db), check=True, env=env, capture_output=True)
    assert snapshot(killed_db) == clean


def test_rewritten_history_walks_again_without_duplicates(tmp_path: Path) -> None:
    from engines.commits.options import MineOptions
    from engines.commits.pipeline import SilentReporter, mine_commits
    from store import open_store
    from tests.gitrepo import py_module

    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    kept = repo.commit("kept", {"m.py": py_module("y += 1", "y += 3")})
    repo.commit("dropped later", {"m.py": py_module("y += 1", "y += 4")})
    with open_store(tmp_path / "s.db") as store:
        mine_commits(store, [str(repo.path)], MineOptions())
        repo.git("reset", "-q", "--hard", kept)
        new = repo.commit("replacement", {"m.py": py_module("y += 1", "y += 5")})
        reporter = SilentReporter()
        (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
        assert any("no longer on main" in p for p in reporter.problems)
        assert (summary.stored, summary.known) == (1, 1)  # "kept" is recognised, not redone
        shas = {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")}
        assert new in shas and kept in shas
