"""A headless run never waits on a prompt: git's own are off, and ssh runs in batch mode
(a host key to confirm or a passphrase fails the clone with one line instead of hanging)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engines.commits.sources import SourceError, resolve_source


def _fake_ssh(folder: Path) -> Path:
    """An ``ssh`` on PATH that records how it was called and refuses, as a host that asks
    for a passphrase would in batch mode."""
    folder.mkdir()
    script = folder / "ssh"
    record = folder / "called"
    script.write_text(f'#!/bin/sh\necho "$@" > {record}\necho "Permission denied" >&2\nexit 255\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return record


def test_ssh_runs_in_batch_mode_unless_the_user_chose_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _fake_ssh(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_SSH", raising=False)
    with pytest.raises(SourceError, match="Permission denied"):
        resolve_source("git@example.invalid:team/repo.git", tmp_path / "clones")
    assert "BatchMode=yes" in record.read_text()

    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o ConnectTimeout=3")
    with pytest.raises(SourceError):
        resolve_source("git@example.invalid:team/other.git", tmp_path / "clones")
    called = record.read_text()
    assert "ConnectTimeout=3" in called and "BatchMode" not in called
