"""The miner's filters on real repositories: files, functions, languages, dates, branches."""

from __future__ import annotations

from collections import Counter

from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from store import Store
from tests import raw_sql
from tests.gitrepo import GitRepo, py_module


def stored_shas(store: Store) -> set[str]:
    return {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")}


def mine(store: Store, repo: GitRepo, **kw: object):  # type: ignore[no-untyped-def]
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(**kw))  # type: ignore[arg-type]
    assert summary.failed is None
    return summary


def test_single_file_single_function_commit_is_stored_with_all_fields(
    repo: GitRepo, store: Store
) -> None:
    repo.commit("init", {"lib.py": py_module("y += 1", "y += 2")})
    sha = repo.commit("Use a set for membership tests", {"lib.py": py_module("y += 1", "y *= 2")})
    summary = mine(store, repo)
    assert summary.stored == 1
    row = raw_sql.query(store, "SELECT * FROM commits")[0]
    assert row["sha"] == sha
    assert row["repo"] == str(repo.path.resolve())
    assert row["file"] == "lib.py"
    assert row["message"].startswith("Use a set for membership tests")
    assert row["author_date"].startswith("2024-03-01T00:02:00")
    assert "-    y += 2" in row["diff"] and "+    y *= 2" in row["diff"]
    assert row["functions"] == '["f1"]'
    assert row["code_before"] == "def f1(x):\n    y = x\n    y += 2\n    return y"
    assert row["code_after"] == "def f1(x):\n    y = x\n    y *= 2\n    return y"
    assert (row["added"], row["deleted"]) == (1, 1)
    assert row["model_input"].startswith("Use a set for membership tests\n\ndiff --git a/lib.py")
    item = raw_sql.query(store, "SELECT * FROM items")[0]
    assert (item["kind"], item["key"], item["language"]) == ("commit", sha, "python")


def test_max_files_counts_every_modified_file(repo: GitRepo, store: Store) -> None:
    init = repo.commit("init", {"a.py": py_module("y += 1"), "b.py": py_module("y += 1")})
    two = repo.commit("touch both", {"a.py": py_module("y += 3"), "b.py": py_module("y += 4")})
    with_doc = repo.commit("code and docs", {"a.py": py_module("y += 5"), "README.md": "hi\n"})
    summary = mine(store, repo)
    assert summary.stored == 0
    assert summary.filtered["too-many-files"] == 3
    summary = mine(store, repo, max_files=2)
    assert stored_shas(store) == {with_doc}
    assert summary.filtered["too-many-functions"] == 2  # init and "touch both": f0 in each file
    mine(store, repo, max_files=2, max_functions=2)
    assert stored_shas(store) == {init, two, with_doc}
    # the README is not source code: the stored diff covers only the source file
    row = raw_sql.query(store, "SELECT files FROM commits WHERE sha = ?", (with_doc,))[0]
    assert row["files"] == '["a.py"]'


def test_max_functions_uses_changed_methods(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2", "y += 3")})
    one = repo.commit("one", {"m.py": py_module("y += 10", "y += 2", "y += 3")})
    two = repo.commit("two", {"m.py": py_module("y += 11", "y += 12", "y += 3")})
    summary = mine(store, repo)
    assert stored_shas(store) == {one}
    assert summary.filtered == Counter({"too-many-functions": 2})  # init adds three
    mine(store, repo, max_functions=2)
    assert stored_shas(store) == {one, two}


def test_changes_outside_functions_are_filtered(repo: GitRepo, store: Store) -> None:
    init = repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("add a constant", {"m.py": "LIMIT = 3\n\n" + py_module("y += 1")})
    summary = mine(store, repo)
    assert summary.filtered["no-function"] == 1
    # creating a file with one function counts as changing that one function
    assert stored_shas(store) == {init}


def test_language_filter_by_extension(repo: GitRepo, store: Store) -> None:
    init_java = repo.commit(
        "init", {"A.java": "class A {\n  int f(int x) {\n    return x;\n  }\n}\n"}
    )
    java = repo.commit(
        "java", {"A.java": "class A {\n  int f(int x) {\n    return x + 1;\n  }\n}\n"}
    )
    init_cpp = repo.commit("init c++", {"k.cc": "int g(int x) {\n  return x;\n}\n"})
    cpp = repo.commit("c++", {"k.cc": "int g(int x) {\n  return x * 2;\n}\n"})
    repo.commit("docs", {"notes.txt": "hello\n"})
    summary = mine(store, repo, languages=frozenset({"python"}))
    assert summary.stored == 0 and summary.filtered["language"] == 5
    summary = mine(store, repo, languages=frozenset({"java", "cpp"}))
    assert stored_shas(store) == {init_java, java, init_cpp, cpp}
    langs = {r[0]: r[1] for r in raw_sql.query(store, "SELECT key, language FROM items")}
    assert langs == {init_java: "java", java: "java", init_cpp: "cpp", cpp: "cpp"}


def test_merges_are_skipped_and_only_the_branch_is_walked(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.git("checkout", "-q", "-b", "feature")
    feature = repo.commit("feature work", {"m.py": py_module("y += 1", "y += 20")})
    repo.git("checkout", "-q", "main")
    main_only = repo.commit("main work", {"m.py": py_module("y += 10", "y += 2")})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("side only", {"other.py": py_module("y -= 1")})
    side2 = repo.commit("side change", {"other.py": py_module("y -= 2")})
    repo.git("checkout", "-q", "main")
    summary = mine(store, repo)
    assert stored_shas(store) == {main_only}
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    summary = mine(store, repo, max_functions=2)  # a new scope: walks everything again
    shas = stored_shas(store)
    assert feature in shas and main_only in shas
    assert side not in shas and side2 not in shas
    merge_sha = repo.head()
    assert merge_sha not in shas
    assert summary.seen == 3  # init, feature, main work: never the merge
    mine(store, repo, branch="side")
    assert side2 in stored_shas(store)


def test_since_until_and_limit(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1")})
    shas = [repo.commit(f"change {i}", {"m.py": py_module(f"y += {i + 2}")}) for i in range(5)]
    # commits are one minute apart starting at 00:01 (init); shas[2] is at 00:04
    mine(store, repo, since="2024-03-01T00:03:30+00:00", until="2024-03-01T00:05:30+00:00")
    assert stored_shas(store) == {shas[2], shas[3]}
    summary = mine(store, repo, limit=2)
    assert summary.seen == 2


def test_limit_is_resumable(repo: GitRepo, store: Store) -> None:
    init = repo.commit("init", {"m.py": py_module("y += 1")})
    shas = [repo.commit(f"change {i}", {"m.py": py_module(f"y += {i + 2}")}) for i in range(4)]
    first = mine(store, repo, limit=3)
    assert stored_shas(store) == {init, *shas[:2]}
    second = mine(store, repo, limit=3)
    assert (first.seen, second.seen) == (3, 2)
    assert stored_shas(store) == {init, *shas}
