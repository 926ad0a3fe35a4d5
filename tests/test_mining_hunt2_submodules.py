"""A submodule checked out in a superproject is one repository: its checkout
(``super/X``, whose ``.git`` is a file) and its git folder (``super/.git/modules/X``)
are one source, named by the checkout. A ``git worktree`` keeps its own source."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from curator.mining import sources_to_mine
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.commits.sources import clean_spelling, source_key
from store import open_store
from tests.gitrepo import GitRepo


@pytest.fixture
def superproject(tmp_path: Path) -> GitRepo:
    """``super`` with the repository ``lib`` (three one-function commits) checked out
    as the submodule ``X``."""
    lib = GitRepo(tmp_path / "lib")
    for n in range(3):
        lib.commit(f"lib {n}", {"m.py": f"def f(x):\n    return x + {n}\n"})
    top = GitRepo(tmp_path / "super")
    top.commit("init", {"s.py": "def g(x):\n    return x\n"})
    top.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.path), "X")
    top.commit("add X", {})
    assert (top.path / "X" / ".git").is_file()
    assert (top.path / ".git" / "modules" / "X" / "HEAD").is_file()
    return top


def _sources(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT source, COUNT(*) FROM items GROUP BY source ORDER BY source"
        ).fetchall()
    finally:
        conn.close()


def test_a_submodule_checkout_and_its_git_folder_are_one_source(
    cli, superproject: GitRepo, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    checkout = superproject.path / "X"
    git_dir = superproject.path / ".git" / "modules" / "X"
    assert source_key(str(checkout)) == source_key(str(git_dir))
    result = cli("mine", "commits", str(checkout), str(git_dir), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # was: two sources, the second's three commits stored as a fork's duplicates
    assert [s["source"] for s in report["sources"]] == [str(checkout)]
    assert (report["stored"], report["duplicates"]) == (3, 0)
    assert f"{git_dir}: the same repository as {checkout}; skipped" in result.stderr
    assert _sources(tmp_path / "cli.db") == [(str(checkout), 3)]


def test_a_submodule_git_folder_is_mined_as_its_checkout(
    cli, superproject: GitRepo, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    checkout = superproject.path / "X"
    git_dir = superproject.path / ".git" / "modules" / "X"
    assert clean_spelling(str(git_dir)) == str(checkout)
    first = json.loads(cli("mine", "commits", str(git_dir), "--limit", "1", "--json").stdout)
    assert [s["source"] for s in first["sources"]] == [str(checkout)]
    second = json.loads(cli("mine", "commits", str(checkout), "--json").stdout)
    assert (second["seen"], second["stored"], second["duplicates"]) == (2, 2, 0)
    assert _sources(tmp_path / "cli.db") == [(str(checkout), 3)]


def test_a_store_holding_the_git_folder_resumes_under_it(
    superproject: GitRepo, tmp_path: Path
) -> None:
    """A store where an earlier version mined the git folder under its own name: the
    checkout, named now, is mined under that name and resumes its checkpoint."""
    git_dir = superproject.path / ".git" / "modules" / "X"
    with open_store(tmp_path / "s.db") as store:
        (summary,) = mine_commits(store, [str(git_dir)], MineOptions(limit=1))
        assert summary.source == str(git_dir)
        chosen = sources_to_mine(store, [str(superproject.path / "X")], [], MineOptions(), False)
    assert chosen.specs == [str(git_dir)]
    assert chosen.stored_as == [(str(superproject.path / "X"), str(git_dir))]


def test_a_deinitialised_submodule_keeps_its_git_folder_name(
    superproject: GitRepo,
) -> None:
    """Without a checkout (``git submodule deinit``) the git folder is named as given."""
    superproject.git("submodule", "deinit", "-q", "--force", "X")
    git_dir = superproject.path / ".git" / "modules" / "X"
    assert not (superproject.path / "X" / ".git").exists()
    assert clean_spelling(str(git_dir)) == str(git_dir)
    assert source_key(str(git_dir)) != source_key(str(superproject.path / "X"))


def test_a_worktree_stays_a_source_of_its_own(repo: GitRepo, tmp_path: Path) -> None:
    """A worktree has a HEAD of its own (the branch a run walks by default): it is not
    the main work tree's source, though both share one object store."""
    repo.commit("init", {"m.py": "def f(x):\n    return x\n"})
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    assert source_key(str(tmp_path / "wt")) != source_key(str(repo.path))
    assert source_key(str(repo.path / ".git")) == source_key(str(repo.path)) == str(repo.path)
    with open_store(tmp_path / "s.db") as store:
        chosen = sources_to_mine(
            store, [str(repo.path), str(tmp_path / "wt")], [], MineOptions(), False
        )
    assert chosen.specs == [str(repo.path), str(tmp_path / "wt")] and not chosen.repeated
