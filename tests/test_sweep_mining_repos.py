"""Hostile but real repositories through ``curator mine commits``: SHA-256 object
format, messages and paths that are not UTF-8, empty and odd-HEAD repositories,
submodules, merges, symlinks, renames, binaries, shallow clones, worktrees and ``.git``
files; one repository under two spellings; and a missing ``--branch`` named in the
summary. Every repository is built once for the module with git itself."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from curator.mining import sources_to_mine
from engines.commits.options import MineOptions
from engines.commits.sources import clean_spelling, source_key
from engines.commits.task import ChunkTask, mine_chunk
from store import open_store
from tests.gitrepo import BASE_ENV, GitRepo, py_module

LATIN1_NAME = b"caf\xe9.py"


def _git(path: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, **BASE_ENV}
    return subprocess.run(
        ["git", "-C", str(path), "-c", "commit.gpgsign=false", *args],
        check=True,
        capture_output=True,
        env=env,
        input=input,
    ).stdout.decode("utf-8", "replace")


def _sha256(root: Path) -> GitRepo:
    path = root / "sha256"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main", "--object-format=sha256")
    repo = GitRepo(path)
    repo.commit("init", {"m.py": py_module("s += 1")})
    repo.commit("Speed up the loop", {"m.py": py_module("s += 2")})
    return repo


def _latin1(root: Path) -> GitRepo:
    """A Latin-1 message declared as such, a raw non-UTF-8 message, a non-UTF-8 path."""
    repo = GitRepo(root / "latin1")
    repo.commit("init", {"m.py": py_module("l += 1")})
    (repo.path / "m.py").write_text(py_module("l += 2"))
    _git(repo.path, "add", "-A")
    message = root / "latin1-message"
    message.write_bytes(b"Faster caf\xe9 loop\n")
    _git(repo.path, "-c", "i18n.commitEncoding=latin1", "commit", "-q", "-F", str(message))
    repo.commit(b"Optimize the \xff\xfe loop", {"m.py": py_module("l += 3")})
    (repo.path / os.fsdecode(LATIN1_NAME)).write_text(py_module("c += 1"))
    _git(repo.path, "add", "-A")
    _git(repo.path, "commit", "-q", "-m", "add cafe")
    (repo.path / os.fsdecode(LATIN1_NAME)).write_text(py_module("c += 7"))
    _git(repo.path, "commit", "-q", "-am", "Faster cafe")
    return repo


def _other_head(root: Path) -> GitRepo:
    """HEAD names ``main``, which has no commits; ``dev`` has two."""
    repo = GitRepo(root / "other-head", branch="dev")
    repo.commit("init", {"m.py": py_module("d += 1")})
    repo.commit("Speed up dev", {"m.py": py_module("d += 2")})
    repo.git("symbolic-ref", "HEAD", "refs/heads/main")
    return repo


def _shapes(root: Path, sub: GitRepo) -> GitRepo:
    """A submodule (at a path that looks like Python) bumped on its own, a merge, an
    octopus merge, symlinks, a rename with changes, a binary file and a 0-byte file,
    each in its own commit."""
    repo = GitRepo(root / "shapes")
    repo.commit("init", {"m.py": py_module("y += 1"), "n.py": py_module("z = 1", "z = 2")})
    first, second = sub.git("rev-list", "-2", "HEAD").split()[::-1]
    (repo.path / "sub.py").mkdir()  # a submodule not checked out: git add leaves it be
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},sub.py")
    (repo.path / ".gitmodules").write_text(
        f'[submodule "sub"]\n\tpath = sub.py\n\turl = {sub.path}\n'
    )
    repo.commit("Add a submodule", {})
    repo.git("update-index", "--cacheinfo", f"160000,{second},sub.py")
    repo.commit("Bump the submodule, faster", {})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("Speed up n on the side", {"n.py": py_module("z = 5", "z = 2")})
    repo.git("checkout", "-q", "main")
    repo.commit("Speed up m", {"m.py": py_module("y += 2")})
    repo.git("merge", "-q", "--no-edit", "side")
    for name in ("o1", "o2"):
        repo.git("checkout", "-q", "-b", name, "main")
        repo.commit(f"note {name}", {f"{name}.txt": name})
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-edit", "o1", "o2")
    os.symlink("m.py", repo.path / "link.py")
    repo.commit("Link", {})
    (repo.path / "link.py").unlink()
    os.symlink("n.py", repo.path / "link.py")
    repo.commit("Relink", {})
    repo.git("mv", "n.py", "n2.py")
    repo.commit("Rename and speed up", {"n2.py": py_module("z = 9", "z = 2")})
    repo.commit("Binary", {"blob.bin": b"\0\1\2" * 50})
    repo.commit("Faster binary", {"blob.bin": b"\0\3\2" * 50})
    repo.commit("Zero bytes", {"zero.py": ""})
    repo.commit("Fill zero, faster", {"zero.py": py_module("y += 4")})
    assert repo.git("ls-tree", "main", "sub.py").split()[:3] == ["160000", "commit", second]
    return repo


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    sha256 = _sha256(root)
    latin1 = _latin1(root)
    empty = GitRepo(root / "empty")
    other = _other_head(root)
    shapes = _shapes(root, latin1)
    shallow = root / "shallow"
    _git(root, "clone", "-q", "--depth", "3", f"file://{shapes.path}", str(shallow))
    worktree = root / "worktree"
    shapes.git("worktree", "add", "-q", str(worktree), "-b", "wt")
    separate = root / "separate"
    _git(
        root,
        "init",
        "-q",
        "-b",
        "main",
        f"--separate-git-dir={root / 'elsewhere.git'}",
        str(separate),
    )
    sep = GitRepo(separate)
    sep.commit("init", {"m.py": py_module("e += 1")})
    sep.commit("Faster separate", {"m.py": py_module("e += 2")})
    latin1_branch = GitRepo(root / "latin1-branch", branch=os.fsdecode(b"caf\xe9"))
    latin1_branch.commit("init", {"m.py": py_module("b += 1")})
    latin1_branch.commit("Faster on a Latin-1 branch", {"m.py": py_module("b += 2")})
    return {
        "sha256": sha256.path,
        "latin1": latin1.path,
        "empty": empty.path,
        "other": other.path,
        "shapes": shapes.path,
        "shallow": shallow,
        "worktree": worktree,
        "separate": separate,
        "latin1-branch": latin1_branch.path,
        "git-file": separate / ".git",
    }


def _mine(cli: Any, *args: str) -> tuple[int, dict[str, Any], str]:  # type: ignore[no-untyped-def]
    result = cli("mine", "commits", *args, "--json")
    return result.exit_code, json.loads(result.stdout), result.stderr


def _stored(source: Path | str) -> list[tuple[str, str, str, str, str]]:
    """(sha, branch, message, file, diff) of each stored commit of ``source``, in the
    order mined."""
    with sqlite3.connect(os.environ["CURATOR_DB"]) as conn:
        return conn.execute(
            "SELECT sha, branch, message, file, diff FROM commits WHERE repo = ? ORDER BY item_id",
            (str(source),),
        ).fetchall()


def _by_source(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["source"]: s for s in report["sources"]}


def test_every_hostile_repository_in_one_run(cli, repos: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    """All of them in one command: the two that cannot be mined fail with one line
    naming them, every other one is mined and stored as git has it."""
    code, report, stderr = _mine(cli, *[str(p) for p in repos.values()])
    assert code == 1
    sources = _by_source(report)
    assert [s["source"] for s in report["sources"]] == [str(p) for p in repos.values()]
    assert report["failed"] == {"git": 2, "not-a-repository": 1}
    assert report["errors"] == [
        f"{repos['empty']}: repository has no commits",
        f"{repos['other']}: HEAD names main, which has no commits;"
        " branches with commits: dev (choose one with --branch)",
        f"{repos['git-file']}: a .git file (it points git elsewhere):"
        f" name its work tree {repos['separate']}",
    ]
    for name in ("empty", "other", "git-file"):
        (line,) = [ln for ln in stderr.splitlines() if f"{repos[name]}:" in ln]
        assert line.startswith("error: ")
    assert "Traceback" not in stderr

    # SHA-256: the root commit (its "no parent" is 64 zeros) is read, not an error
    sha256 = _stored(repos["sha256"])
    assert [(len(r[0]), r[2]) for r in sha256] == [(64, "init"), (64, "Speed up the loop")]
    assert sources[str(repos["sha256"])]["filtered"] == {}

    # Latin-1: declared encoding decoded; raw bytes replaced with a warning; a path
    # that is not UTF-8 kept with an escape (not U+FFFD) and a warning
    latin1 = _stored(repos["latin1"])
    assert [r[2] for r in latin1] == [
        "init",
        "Faster caf\u00e9 loop",
        "Optimize the \ufffd\ufffd loop",
        "add cafe",
        "Faster cafe",
    ]
    assert [r[3] for r in latin1[-2:]] == ["caf\\xe9.py"] * 2
    assert "+++ b/caf\\xe9.py" in latin1[-1][4]
    assert f"{repos['latin1']}@{latin1[2][0][:12]}: message is not valid UTF-8" in stderr
    assert f"{repos['latin1']}@{latin1[-1][0][:12]}: a file path is not valid UTF-8" in stderr

    # merges skipped, submodule/symlink/binary/0-byte commits filtered, a rename with
    # an edit stored with its rename, the filled 0-byte file stored
    shapes = _stored(repos["shapes"])
    assert [r[2] for r in shapes] == [
        "Speed up n on the side",
        "Speed up m",
        "Rename and speed up",
        "Fill zero, faster",
    ]
    assert "diff --git a/n.py b/n2.py" in shapes[2][4] and shapes[2][3] == "n2.py"
    assert sources[str(repos["shapes"])]["seen"] == 14  # 16 commits less 2 merges
    # the submodule at sub.py is not code: its bump has no function, and no "error"
    # (its object, a commit of another repository, was read as a missing blob)
    assert "error" not in sources[str(repos["shapes"])]["filtered"]
    assert "cannot read commit" not in stderr

    # a shallow clone walks what it has; its boundary commit is no diff against nothing
    shallow = sources[str(repos["shallow"])]
    assert shallow["seen"] == 3 and shallow["stored"] == 0
    assert shallow["duplicates"] == 1  # "Fill zero, faster", stored from shapes
    # was "no-function" or "too-many-files": git shows it as a root, its tree all added
    assert shallow["filtered"].get("shallow-boundary") == 1, shallow["filtered"]

    # a worktree is mined (its own branch), its commits recognised as shapes'
    worktree = sources[str(repos["worktree"])]
    assert (worktree["branch"], worktree["seen"], worktree["duplicates"]) == ("wt", 14, 4)

    # a work tree whose .git is a file pointing elsewhere
    assert [r[2] for r in _stored(repos["separate"])] == ["init", "Faster separate"]

    # HEAD names a branch that is not UTF-8: walked as HEAD (this stopped the whole run)
    latin1_branch = _stored(repos["latin1-branch"])
    assert [(r[1], r[2]) for r in latin1_branch] == [
        ("HEAD", "init"),
        ("HEAD", "Faster on a Latin-1 branch"),
    ]


def test_spellings_of_one_url_share_one_key() -> None:
    key = "https://github.com/a/b"
    for spelling in ("https://github.com/a/b/", "HTTPS://GitHub.com/a/b.git", key + ".git/"):
        assert source_key(spelling) == key
    assert source_key("git@GitHub.com:a/b.git") == "git@github.com:a/b"
    assert source_key("https://github.com/a/B") != key  # a path's case is the host's to judge
    assert clean_spelling("HTTPS://User@GitHub.com/a/b.git/") == "https://User@github.com/a/b.git"


def test_a_store_holding_an_old_spelling_resumes_under_it(tmp_path: Path) -> None:
    """A URL stored as an earlier version spelled it (``.git``, capitals) is mined under
    that spelling when a run names it otherwise, so its checkpoint resumes."""
    from store.commits import save_checkpoint
    from store.records import Checkpoint

    with open_store(tmp_path / "old.db") as store:
        save_checkpoint(store, Checkpoint("commit", "https://Host/a/b.git", "main", "abc", {}))
        chosen = sources_to_mine(
            store, ["https://host/a/b/", "https://host/c/d/"], [], MineOptions(), False
        )
    assert chosen.specs == ["https://Host/a/b.git", "https://host/c/d"]
    assert chosen.stored_as == [("https://host/a/b/", "https://Host/a/b.git")]


def test_a_second_spelling_resumes_the_first(cli, repos: dict[str, Path], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``file://REPO/`` then ``REPO`` then ``REPO/.git``: one source, and each run goes
    on where the last one stopped (it walked the whole history again, as a new source,
    and stored nothing but duplicates)."""
    bare = tmp_path / "spell.git"
    _git(tmp_path, "clone", "-q", "--bare", str(repos["sha256"]), str(bare))
    code, first, _ = _mine(cli, f"file://{bare}/", "--limit", "1")
    assert code == 0 and first["sources"][0]["source"] == f"file://{bare}"
    code, second, stderr = _mine(cli, str(bare))
    assert code == 0
    assert second["sources"][0]["source"] == f"file://{bare}"
    assert (second["seen"], second["duplicates"], second["stored"]) == (1, 0, 1)
    assert f"{bare}: the store holds this repository as file://{bare}; mining that" in stderr
    code, third, _ = _mine(cli, f"{bare}/", f"file://{bare}")
    assert code == 0 and third["seen"] == 0 and len(third["sources"]) == 1


def test_a_work_tree_and_its_git_folder_are_one_source(
    cli, repos: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(repos["sha256"].parent)
    result = cli("mine", "commits", "./sha256/.git", "sha256", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [s["source"] for s in report["sources"]] == [str(repos["sha256"])]
    assert "sha256: the same repository as" in result.stderr


def test_a_missing_branch_is_named_by_the_cluster_task(repos: dict[str, Path]) -> None:
    """The task a Dask worker runs carries the branch it lacks back to the driver, so
    the summary names it without the run patching it in afterwards."""
    task = ChunkTask(str(repos["sha256"]), MineOptions(branch="nope"), budget=10)
    result = mine_chunk(task)
    assert (result.reason, result.branch) == ("no-branch", "nope")
    assert result.failed == "branch 'nope' not found"


def test_a_missing_branch_is_named_in_process(cli, repos: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    code, report, _ = _mine(cli, str(repos["sha256"]), "--branch", "nope")
    assert code == 1
    assert report["sources"][0]["branch"] == "nope" and report["failed"] == {"no-branch": 1}
