"""Temporary folders named after the machine and process that made them, and the
removal of those a killed process left behind.

A process killed outright (SIGKILL, out of memory) cannot remove its temporary folder,
which then stays for good: a clone cut off after a second (128 MB of redis), a training
run's staged weights (90 MB of MiniLM). Naming each folder ``.TAG-HOST+PID+...`` lets a
later run of any process on the same machine tell an abandoned folder from one still
in use: HOST is this machine, PID is no process, and nothing in it changed for a while.
Folders of other machines sharing the parent folder are left alone, and so are those of
live processes."""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def host_name() -> str:
    """This machine's name as a folder name may hold it (no ``+``, which ends it)."""
    return _SLUG.sub("-", socket.gethostname())[:60] or "host"


def owned_folder(parent: Path, tag: str) -> Path:
    """A new empty folder ``parent/.TAG-HOST+PID+XXXX`` of this process."""
    return Path(tempfile.mkdtemp(prefix=f".{tag}-{host_name()}+{os.getpid()}+", dir=parent))


def remove_abandoned(parent: Path, tag: str, quiet_s: float) -> list[Path]:
    """Delete the ``.TAG-HOST+PID+...`` folders of ``parent`` that this machine's
    processes left: PID is no process and nothing in the folder changed for ``quiet_s``
    seconds (a child such as ``git clone`` may go on alone after its parent died).
    Returns what was removed."""
    prefix = f".{tag}-{host_name()}+"
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(prefix)]
    except OSError:
        return []
    quiet_since = time.time() - quiet_s
    removed = []
    for entry in entries:
        pid = entry.name[len(prefix) :].partition("+")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        if quiet_s <= 0 or _last_change(Path(entry.path)) < quiet_since:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _last_change(folder: Path) -> float:
    """When anything in ``folder`` last changed (now, if it cannot be read)."""
    try:
        latest = folder.stat().st_mtime
        for root, dirs, files in os.walk(folder):
            for name in (*dirs, *files):
                latest = max(latest, os.lstat(os.path.join(root, name)).st_mtime)
    except OSError:
        return time.time()
    return latest


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process; a pid out of range
        return True
    return True
