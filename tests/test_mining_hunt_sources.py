"""Sources that cannot be cloned: the one line says why, not only that git "Could not
read from remote repository"; and a clone a killed run abandoned is removed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from engines.commits.gitlog import last_line
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from store import Store
from tests.gitrepo import GitRepo, py_module


def test_a_url_that_names_no_repository_fails_saying_why(
    tmp_path: Path, repo: GitRepo, store: Store
) -> None:
    repo.commit("init", {"m.py": py_module("y += 1")})
    plain = tmp_path / "plain"
    plain.mkdir()
    summaries = mine_commits(
        store,
        [f"file://{tmp_path}/missing.git", f"file://{plain}", str(repo.path)],
        MineOptions(),
        clone_dir=tmp_path / "clones",
    )
    missing, not_repo, good = summaries
    # was: "cannot clone: fatal: Could not read from remote repository." for both
    assert missing.failed == (
        f"cannot clone: fatal: '{tmp_path}/missing.git' does not appear to be a git repository"
    )
    assert not_repo.failed == (
        f"cannot clone: fatal: '{plain}' does not appear to be a git repository"
    )
    assert good.failed is None and good.stored == 1


def test_ssh_failures_name_their_cause() -> None:
    # what git prints for git@host:owner/name.git when the host does not resolve
    stderr = (
        b"Cloning into bare repository 'x'...\n"
        b"ssh: Could not resolve hostname github.com: Name or service not known\n"
        b"fatal: Could not read from remote repository.\n\n"
        b"Please make sure you have the correct access rights\nand the repository exists.\n"
    )
    assert last_line(stderr) == (
        "ssh: Could not resolve hostname github.com: Name or service not known"
    )
    # any other error is still git's last error line
    assert last_line(b"warning: w\nfatal: bad object HEAD\n") == "fatal: bad object HEAD"
    assert last_line(b"fatal: Could not read from remote repository.\n") == (
        "fatal: Could not read from remote repository."
    )


def test_a_clone_abandoned_by_a_killed_run_is_removed_by_the_next_clone(
    tmp_path: Path, repo: GitRepo, store: Store
) -> None:
    # `curator mine commits URL` killed (SIGKILL) mid-clone left its temporary folder for
    # good: 128 MB for redis after a second, and one more for each killed run
    from engines.abandoned import host_name as _host

    repo.commit("init", {"m.py": py_module("y += 1")})
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process of this machine that has ended
    clones = tmp_path / "clones"
    long_ago = time.time() - 7200
    folders = {
        "abandoned": f".clone-{_host()}+{gone.pid}+a1",
        "still written": f".clone-{_host()}+{gone.pid}+b2",  # its git clone goes on alone
        "this process": f".clone-{_host()}+{os.getpid()}+c3",
        "another machine": f".clone-elsewhere+{gone.pid}+d4",
        "an earlier version": ".clone-e5f6g7h8",
    }
    for what, name in folders.items():
        pack = clones / name / "repo" / "objects" / "pack"
        pack.mkdir(parents=True)
        (pack / "tmp_pack_1").write_bytes(b"x")
        if what != "still written":
            for path in [pack / "tmp_pack_1", *(pack / "tmp_pack_1").parents]:
                if path == clones:
                    break
                os.utime(path, (long_ago, long_ago))
    (summary,) = mine_commits(store, [f"file://{repo.path}"], MineOptions(), clone_dir=clones)
    assert summary.failed is None and summary.stored == 1
    left = {p.name for p in clones.glob(".clone-*")}
    assert left == {name for what, name in folders.items() if what != "abandoned"}
