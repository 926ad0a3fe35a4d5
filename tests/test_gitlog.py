"""``git log --numstat`` read straight from real repositories; branches; languages."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from engines.commits.gitlog import (
    CommitStat,
    CommitWindow,
    FileStat,
    GitError,
    count_commits,
    iter_commit_stats,
    list_commits,
    resolve_branch,
)
from engines.commits.languages import known_languages, language_of, parse_languages, suffix
from tests.gitrepo import GitRepo


def stats_of(repo: GitRepo, rev: str = "main", **kw: str | bool | None) -> list[CommitStat]:
    out = list(iter_commit_stats(repo.path, rev, **kw))
    assert all(isinstance(s, CommitStat) for s in out)
    return out  # type: ignore[return-value]


def lines(n: int, word: str = "line") -> str:
    return "".join(f"{word} {i}\n" for i in range(n))


# --------------------------------------------------------------------------- numstat


def test_numstat_counts_added_and_deleted_lines(repo: GitRepo) -> None:
    first = repo.commit("init", {"a.py": lines(10), "b.txt": lines(3)})
    new = lines(10).replace("line 2\n", "two\n").replace("line 7\n", "")
    second = repo.commit("edit", {"a.py": new + "extra\n", "b.txt": None})
    s1, s2 = stats_of(repo)
    assert (s1.sha, s2.sha) == (first, second)
    assert s1.files == (FileStat("a.py", 10, 0), FileStat("b.txt", 3, 0))
    # "line 2" replaced (1+1), "line 7" deleted (0+1), "extra" added (1+0); b.txt removed
    assert s2.files == (FileStat("a.py", 2, 2), FileStat("b.txt", 0, 3))
    assert s2.lines_changed == 7
    assert s1.author_date == "2024-03-01T00:01:00+00:00"


def test_binary_files_have_no_line_counts(repo: GitRepo) -> None:
    repo.commit("blob", {"data.bin": bytes(range(256)) * 4, "a.py": "x = 1\n"})
    (stat,) = stats_of(repo)
    by_path = {f.path: f for f in stat.files}
    assert by_path["data.bin"].binary
    assert (by_path["data.bin"].added, by_path["data.bin"].deleted) == (None, None)
    assert not by_path["a.py"].binary
    assert stat.lines_changed == 1  # binary files count for nothing


def test_a_rename_with_a_small_edit_is_one_file_with_its_old_path(repo: GitRepo) -> None:
    body = lines(40)
    repo.commit("init", {"old/name.py": body})
    repo.git("mv", "old/name.py", "new name.py")
    repo.commit("move", {"new name.py": body.replace("line 5\n", "line five\n")})
    _, moved = stats_of(repo)
    assert moved.files == (FileStat("new name.py", 1, 1, old_path="old/name.py"),)


def test_renames_among_other_files_keep_the_parse_in_step(repo: GitRepo) -> None:
    body = lines(30)
    repo.commit("init", {"a.py": body, "z.py": "z\n"})
    repo.git("mv", "a.py", "b.py")
    repo.commit("move and edit", {"m.py": "m\n", "z.py": "z\nz\n"})
    after = repo.commit("later", {"b.py": body + "tail\n"})
    _, moved, later = stats_of(repo)
    assert sorted(moved.files, key=lambda f: f.path) == [
        FileStat("b.py", 0, 0, old_path="a.py"),
        FileStat("m.py", 1, 0),
        FileStat("z.py", 1, 0),
    ]
    assert later.sha == after and later.files == (FileStat("b.py", 1, 0),)


@pytest.mark.parametrize(
    "name",
    ["with space.py", "ünïcødé/日本.py", "tab\there.py", "new\nline.py", "\nleading.py"],
    ids=["space", "unicode", "tab", "newline", "leading-newline"],
)
def test_odd_file_names_survive(repo: GitRepo, name: str) -> None:
    repo.commit("init", {name: "a\n"})
    repo.commit("edit", {name: "a\nb\n"})
    renamed = name.replace(".py", " (moved).py")
    repo.git("mv", name, renamed)
    repo.commit("move", {})
    added, edited, moved = stats_of(repo)
    assert added.files == (FileStat(name, 1, 0),)
    assert edited.files == (FileStat(name, 1, 0),)
    assert moved.files == (FileStat(renamed, 0, 0, old_path=name),)


def test_empty_commits_and_merges(repo: GitRepo) -> None:
    base = repo.commit("init", {"a.py": "a\n"})
    empty = repo.commit("nothing", {})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("side", {"s.py": "s\n"})
    repo.git("checkout", "-q", "main")
    main = repo.commit("main", {"a.py": "a\nb\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge", "side")
    stats = stats_of(repo)
    assert {s.sha for s in stats} == {base, empty, side, main}  # never the merge
    assert next(s for s in stats if s.sha == empty).files == ()


def test_after_resumes_past_the_given_sha(repo: GitRepo) -> None:
    shas = [repo.commit(f"c{i}", {"a.py": lines(i + 1)}) for i in range(5)]
    for i, sha in enumerate(shas):
        assert [s.sha for s in stats_of(repo, after=sha)] == shas[i + 1 :]
    assert [s.sha for s in stats_of(repo, after=None)] == shas


def test_since_and_until(repo: GitRepo) -> None:
    # GitRepo commits are one minute apart from 00:01; the i-th is at 00:0{i+1}
    shas = [repo.commit(f"c{i}", {"a.py": lines(i + 1)}) for i in range(6)]
    since, until = "2024-03-01T00:02:30+00:00", "2024-03-01T00:05:30+00:00"
    window = stats_of(repo, since=since, until=until)
    assert [s.sha for s in window] == shas[2:5]
    assert [s.sha for s in stats_of(repo, since=since)] == shas[2:]
    assert [s.sha for s in stats_of(repo, until=until)] == shas[:5]
    assert list_commits(repo.path, "main", since, until) == shas[2:5]
    assert count_commits(repo.path, "main", since, until) == 3


# --------------------------------------------------------------------------- branches


def test_resolve_branch_default_and_explicit(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r", branch="trunk")
    repo.commit("init", {"a.py": "a\n"})
    repo.git("branch", "feature")
    assert resolve_branch(repo.path, None) == "trunk"
    assert resolve_branch(repo.path, "feature") == "feature"


def test_resolve_branch_finds_a_remote_tracking_branch(tmp_path: Path) -> None:
    upstream = GitRepo(tmp_path / "up")
    upstream.commit("init", {"a.py": "a\n"})
    upstream.git("branch", "release")
    clone = tmp_path / "clone"
    upstream.git("clone", "-q", str(upstream.path), str(clone))
    assert resolve_branch(clone, "release") == "origin/release"


def test_resolve_branch_missing_branch(repo: GitRepo) -> None:
    repo.commit("init", {"a.py": "a\n"})
    with pytest.raises(GitError, match=r"^branch 'x' not found$"):
        resolve_branch(repo.path, "x")


def test_resolve_branch_in_an_empty_repository(repo: GitRepo) -> None:
    with pytest.raises(GitError, match=r"^repository has no commits$"):
        resolve_branch(repo.path, None)
    with pytest.raises(GitError, match=r"^branch 'main' not found$"):
        resolve_branch(repo.path, "main")


def test_list_and_count_agree_and_exclude_merges(repo: GitRepo) -> None:
    init = repo.commit("init", {"a.py": "a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    feature = [repo.commit(f"f{i}", {"f.py": lines(i + 1)}) for i in range(3)]
    repo.git("checkout", "-q", "main")
    main = [repo.commit(f"m{i}", {"a.py": lines(i + 2)}) for i in range(2)]
    repo.git("merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    merge = repo.head()
    listed = list_commits(repo.path, "main")
    assert merge not in listed
    assert set(listed) == {init, *feature, *main}
    assert listed[0] == init  # oldest first
    assert count_commits(repo.path, "main") == len(listed)
    assert list_commits(repo.path, "feature") == [init, *feature]
    assert count_commits(repo.path, "feature") == len(feature) + 1
    assert [s.sha for s in stats_of(repo)] == listed


# --------------------------------------------------------------------------- languages


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"),
        ("pkg/mod/deep.PY", "python"),
        ("src/k.cc", "cpp"),
        ("include/x.hpp", "cpp"),
        ("legacy.c", "cpp"),
        ("include/x.H", "cpp"),
        ("src/Main.java", "java"),
        ("README.md", None),
        ("Makefile", None),
        ("archive.py.orig", None),
        ("dir.py/notes.txt", None),
    ],
)
def test_language_of(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_a_suffix_is_the_one_pathlib_gives() -> None:
    names = ["a.py", ".py", "a.", "a..py", "a.b.c", ".hidden", "x/.bashrc", "dir.py/file"]
    names += ["dir.py/", "a/b/c.cc", "é/ü.java", "no_ext", "x.tar.gz", "..", "a/..b"]
    for path in names:
        assert suffix(path) == PurePosixPath(path).suffix, path


def test_parse_languages_accepts_names_and_aliases() -> None:
    everything = frozenset(known_languages())
    assert {"python", "cpp", "java"} <= everything
    assert parse_languages(None) == everything
    assert parse_languages("") == everything
    assert parse_languages("c++") == {"cpp"}
    assert parse_languages("C, cxx") == {"cpp"}
    assert parse_languages(" PY ,java,,") == {"python", "java"}
    assert parse_languages("python,cpp,java") == everything


@pytest.mark.parametrize("spec", ["cobol", "python,cobol", "c#"])
def test_parse_languages_rejects_unknown_names_listing_the_known_ones(spec: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_languages(spec)
    message = str(info.value)
    bad = next(s.strip() for s in spec.split(",") if s.strip() != "python")
    assert repr(bad) in message
    for name in known_languages():
        assert name in message


# --------------------------------------------------------------------------- windows


def test_a_window_reads_exactly_its_slice_of_the_history_with_merges(repo: GitRepo) -> None:
    """Slices pinned to a tip cover the walk once, in order, even across a merge."""
    repo.commit("init", {"a.py": lines(3)})
    for n in range(4):
        repo.commit(f"main {n}", {"a.py": lines(3 + n)})
    repo.git("checkout", "-q", "-b", "side", "HEAD~2")
    for n in range(3):
        repo.commit(f"side {n}", {f"s{n}.py": lines(n + 1)})
    repo.git("checkout", "-q", "main")
    repo.commit("main 4", {"a.py": lines(9)})
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    repo.commit("main 5", {"a.py": lines(10)})
    tip = repo.head()
    whole = [s.sha for s in stats_of(repo)]
    assert whole == list_commits(repo.path, "main") and len(whole) == 10
    for size in (1, 3, 4, 10, 15):
        walked: list[str] = []
        for start in range(0, len(whole), size):
            window = CommitWindow(tip, start, min(size, len(whole) - start), len(whole))
            walked += [s.sha for s in iter_commit_stats(repo.path, "ignored", window=window)]
        assert walked == whole, size
    since = stats_of(repo, since="2024-03-01T00:08:00+00:00")
    window = CommitWindow(tip, 1, 2, len(since))
    got = iter_commit_stats(repo.path, "main", since="2024-03-01T00:08:00+00:00", window=window)
    assert [s.sha for s in got] == [s.sha for s in since[1:3]]


def test_the_walk_without_counts_names_the_same_files(repo: GitRepo) -> None:
    """``counts=False`` (``git log --raw``): the numstat walk's files, paths and renames,
    with no line counts and no binary verdict (the patch gives those later)."""
    body = lines(40)
    repo.commit("init", {"old/name.py": body, "data.bin": bytes(range(256)) * 4})
    repo.git("mv", "old/name.py", "tab\there.py")
    repo.commit("move", {"tab\there.py": body.replace("line 5\n", "five\n"), "z.txt": "z\n"})
    repo.commit("drop", {"data.bin": None, "ünï.py": "u\n"})
    counted, raw = stats_of(repo), stats_of(repo, counts=False)
    assert [s.sha for s in raw] == [s.sha for s in counted]
    for fast, full in zip(raw, counted, strict=True):
        assert not fast.counted and full.counted
        assert sorted((f.path, f.old_path) for f in fast.files) == sorted(
            (f.path, f.old_path) for f in full.files
        )
        assert all(f.added is None and not f.binary for f in fast.files)
    assert any(f.binary for f in counted[0].files)
