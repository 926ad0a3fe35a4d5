"""The lizard extraction reads commits through our git streams, as the default one does
(SHA-256 repositories, symlinks and submodule pointers, paths that are not UTF-8), and
the clone cache is keyed by the source, not by the URL's spelling.

Every repository is a real one made with git in a temporary folder."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import subprocess
from pathlib import Path

from engines.commits.miner import Filtered, Mined, Outcome, mine_repository
from engines.commits.options import MineOptions
from engines.commits.sources import _cache_path, resolve_source
from tests.gitrepo import BASE_ENV, GitRepo, py_module

LATIN1_NAME = b"caf\xe9.py"
WIDE = {"max_files": 5, "max_functions": 5}  # so that commits with pointers are looked at


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
        env={**os.environ, **BASE_ENV},
    ).stdout.decode("utf-8", "replace")


def _both(path: Path) -> tuple[list[Outcome], list[Outcome]]:
    """Every outcome of ``main`` by the default path and by the lizard path."""
    found = [
        list(mine_repository(path, "repo", "main", MineOptions(**WIDE, boundaries=b), workers=1))
        for b in ("tree-sitter", "lizard")
    ]
    return found[0], found[1]


def _same(fast: list[Outcome], reference: list[Outcome]) -> list[Mined]:
    """Assert both paths give the same outcomes, rows field by field; the mined ones."""
    assert [(type(o).__name__, o.sha) for o in fast] == [
        (type(o).__name__, o.sha) for o in reference
    ]
    for a, b in zip(fast, reference, strict=True):
        if isinstance(a, Mined) and isinstance(b, Mined):
            assert dataclasses.asdict(a.row) == dataclasses.asdict(b.row)
            assert a.warnings == b.warnings
        else:
            assert a == b
    return [o for o in fast if isinstance(o, Mined)]


def test_a_sha256_repository_is_mined_alike_by_both_paths(tmp_path: Path) -> None:
    path = tmp_path / "sha256"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main", "--object-format=sha256")
    repo = GitRepo(path)
    repo.commit("init", {"m.py": py_module("s += 1", "s += 2")})
    sha = repo.commit("Speed up the loop", {"m.py": py_module("s += 3", "s += 2")})
    gone = repo.commit("Drop the file", {"m.py": None})
    config = (path / ".git" / "config").read_bytes()
    fast, reference = _both(path)
    assert (path / ".git" / "config").read_bytes() == config  # PyDriller's Git wrote there
    mined = _same(fast, reference)
    assert [(m.sha, m.row.functions) for m in mined[1:]] == [(sha, ["f0"]), (gone, ["f0", "f1"])]
    assert len(sha) == 64
    assert mined[2].row.code_after == "\n"  # both functions deleted: no code after


def test_symlinks_and_submodule_pointers_are_not_code_on_either_path(tmp_path: Path) -> None:
    sub = GitRepo(tmp_path / "sub")
    first = sub.commit("one", {"x.py": py_module("a = 1")})
    second = sub.commit("two", {"x.py": py_module("a = 2")})
    repo = GitRepo(tmp_path / "shapes")
    repo.commit("init", {"m.py": py_module("y += 1"), "n.py": py_module("z = 1")})
    (repo.path / "sub.py").mkdir()  # a submodule not checked out, at a path like code
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},sub.py")
    (repo.path / "link.py").symlink_to("m.py")
    with_pointers = repo.commit(
        "Speed up m, add a link and a submodule", {"m.py": py_module("y += 2")}
    )
    repo.git("update-index", "--cacheinfo", f"160000,{second},sub.py")
    (repo.path / "link.py").unlink()
    (repo.path / "link.py").symlink_to("n.py")
    moved = repo.commit("Speed up n, relink, bump", {"n.py": py_module("z = 2")})
    (repo.path / "link.py").unlink()
    (repo.path / "link.py").symlink_to("m.py")
    only = repo.commit("Relink only", {})
    repo.git("update-index", "--cacheinfo", f"160000,{first},sub.py")
    bump = repo.commit("Bump only", {})
    fast, reference = _both(repo.path)
    mined = _same(fast, reference)
    assert [(m.sha, m.row.files) for m in mined[1:]] == [
        (with_pointers, ["m.py"]),
        (moved, ["n.py"]),
    ]
    for m in mined:
        assert "link.py" not in m.row.diff and "sub.py" not in m.row.diff
    dropped = {o.sha: o for o in fast if not isinstance(o, Mined)}
    assert dropped[only] == Filtered(only, "no-function")  # not "error", not mined
    assert dropped[bump] == Filtered(bump, "no-function")


def test_a_path_that_is_not_utf8_is_stored_alike_with_a_warning(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "latin1")
    repo.commit("init", {"m.py": py_module("l += 1")})
    name = os.fsdecode(LATIN1_NAME)
    (repo.path / name).write_text(py_module("c += 1", "c += 2"))
    _git(repo.path, "add", "-A")
    _git(repo.path, "commit", "-q", "-m", "add cafe")
    (repo.path / name).write_text(py_module("c += 7", "c += 2"))
    _git(repo.path, "commit", "-q", "-am", "Faster cafe")
    fast, reference = _both(repo.path)
    (kept,) = _same(fast, reference)[-1:]
    assert kept.row.files == ["caf\\xe9.py"] and kept.row.functions == ["f0"]
    assert "+++ b/caf\\xe9.py" in kept.row.diff
    assert kept.warnings == ("a file path is not valid UTF-8; stored with \\xNN escapes",)


def _served(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A work repository and a bare copy of it, the one a ``file://`` URL serves."""
    work = GitRepo(tmp_path / "work")
    work.commit("init", {"m.py": py_module("y += 1")})
    bare = tmp_path / "served" / "b.git"
    _git(tmp_path, "clone", "-q", "--bare", str(work.path), str(bare))
    return work, bare


def _head(path: Path) -> str:
    return _git(path, "rev-parse", "refs/heads/main").strip()


def test_three_spellings_of_one_url_share_one_clone(tmp_path: Path) -> None:
    work, bare = _served(tmp_path)
    clones = tmp_path / "clones"
    spellings = [f"file://{bare}", f"file://{bare}/", f"file://{bare.parent}/./{bare.name}"]
    first = resolve_source(spellings[0], clones)
    (first.path / "marker").write_text("the first clone")
    newer = work.commit("two", {"m.py": py_module("y += 2")})
    work.git("push", "-q", str(bare), "main")
    later = [resolve_source(spelling, clones) for spelling in spellings[1:]]
    assert [r.path for r in later] == [first.path, first.path]
    assert [r.source for r in later] == spellings[1:]  # each still stored as spelled
    assert (first.path / "marker").read_text() == "the first clone"  # fetched, not recloned
    assert _head(first.path) == newer
    assert [p.name for p in clones.iterdir()] == [first.path.name]


def test_spellings_of_a_remote_url_name_one_cache_folder(tmp_path: Path) -> None:
    base = "https://github.com/a/b"
    spellings = [base, base + ".git", base + "/", "HTTPS://GitHub.com/a/b.git/"]
    assert len({_cache_path(s, tmp_path) for s in spellings}) == 1
    # the spelling that is its own key keeps the folder earlier versions gave it
    digest = hashlib.sha1(base.encode(), usedforsecurity=False).hexdigest()[:10]
    assert _cache_path(base + ".git", tmp_path) == tmp_path / f"b-{digest}"


def test_a_clone_cached_under_an_old_spelling_is_moved_not_cloned_again(tmp_path: Path) -> None:
    work, bare = _served(tmp_path)
    clones = tmp_path / "clones"
    clones.mkdir()
    old_url = f"file://{bare}/"
    # earlier versions named the folder after the URL as spelled, not after its key
    digest = hashlib.sha1(old_url.encode(), usedforsecurity=False).hexdigest()[:10]
    old = clones / f"b.git-{digest}"
    _git(tmp_path, "clone", "-q", "--bare", old_url, str(old))
    (old / "marker").write_text("cached long ago")
    (clones / f"b.git-{'0' * 10}").mkdir()  # named alike, not a clone: left alone
    newer = work.commit("two", {"m.py": py_module("y += 2")})
    work.git("push", "-q", str(bare), "main")
    found = resolve_source(f"file://{bare}", clones)
    assert found.path != old and not old.exists()
    assert (found.path / "marker").read_text() == "cached long ago"
    assert _head(found.path) == newer  # the moved clone was fetched
    assert sorted(p.name for p in clones.iterdir()) == sorted(
        [found.path.name, f"b.git-{'0' * 10}"]
    )
    for spelling in (old_url, f"file://{bare.parent}/./{bare.name}"):
        assert resolve_source(spelling, clones, fetch=False).path == found.path
