"""Dedup: the same function change or the same diff is stored once and linked."""

from __future__ import annotations

from pathlib import Path

from engines.commits.hashing import diff_hash, function_md5
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from store import Store
from tests import raw_sql
from tests.gitrepo import GitRepo, py_module


def test_same_change_in_two_repositories_is_stored_once(tmp_path: Path, store: Store) -> None:
    first, second = GitRepo(tmp_path / "one"), GitRepo(tmp_path / "two")
    for r in (first, second):
        r.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    original = first.commit("faster", {"m.py": py_module("y += 1", "y <<= 1")})
    copy = second.commit("copied fix", {"m.py": py_module("y += 1", "y <<= 1")})
    one, two = mine_commits(store, [str(first.path), str(second.path)], MineOptions())
    assert (one.stored, two.stored, two.duplicates) == (1, 0, 1)
    (dup,) = raw_sql.query(store, "SELECT * FROM duplicates")
    original_id = raw_sql.scalar(store, "SELECT id FROM items WHERE key = ?", (original,))
    assert (dup["key"], dup["original_item_id"], dup["matched_on"]) == (
        copy,
        original_id,
        "function_md5",
    )
    assert dup["source"] == str(second.path.resolve())


def test_same_diff_in_another_file_is_a_diff_duplicate(repo: GitRepo, store: Store) -> None:
    body = "    x = 1\n    y = 2\n    z = 3\n    w = 4\n"
    repo.commit("init", {"a.py": "def a():\n" + body, "b.py": "def b():\n" + body})
    repo.commit("edit a", {"a.py": "def a():\n" + body.replace("w = 4", "w = 5")})
    repo.commit("edit b", {"b.py": "def b():\n" + body.replace("w = 4", "w = 5")})
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions())
    assert summary.stored == 1 and summary.duplicates == 1
    assert raw_sql.scalar(store, "SELECT matched_on FROM duplicates") == "diff_hash"


def test_rerun_stores_nothing_twice(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    for i in range(3):
        repo.commit(f"c{i}", {"m.py": py_module("y += 1", f"y += {i + 10}")})
    mine_commits(store, [str(repo.path)], MineOptions())
    # a different scope walks the history again; known commits are recognised by sha
    (again,) = mine_commits(store, [str(repo.path)], MineOptions(token_budget=64))
    assert again.stored == 0 and again.known == 3
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM commits") == 3
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM duplicates") == 0


def test_hashes_ignore_names_and_positions_but_not_content() -> None:
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    moved = diff.replace("x.py", "y.py").replace("-1,2 +1,2", "-40,2 +40,2")
    assert diff_hash(diff) == diff_hash(moved)
    assert diff_hash(diff) != diff_hash(diff.replace("+c", "+d"))
    assert diff_hash(diff) != diff_hash(diff.replace(" a\n", " z\n"))
    assert function_md5("a", "b") != function_md5("ab", "")
    assert function_md5("a", "b") == function_md5("a", "b")
