"""Writing files so a reader never sees half of one: a temporary file beside the target,
then a rename (a link is written through; a pipe, a device or an open descriptor such as
``/dev/stdout`` is written into). Shared by the engines' own outputs and the CLI's
reports."""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO


@functools.cache
def _new_file_mode() -> int:
    """The mode ``open()`` gives a new file under this process's umask (read once: the
    umask can only be read by setting it)."""
    current = os.umask(0o022)
    os.umask(current)
    return 0o666 & ~current


@contextmanager
def staged_file(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` (folders created) for the block to write; moved
    into place when the block ends, removed (``path`` untouched) when it raises. For
    writers that take a path (safetensors, pickle). The file gets the mode of the one it
    replaces, else the umask's, not the temporary file's private 0600.

    ``path`` is taken the way a user means it: a symbolic link is written through (the
    file it names is replaced, the link kept), and a FIFO, a terminal or a device is
    written into once the block ends, since a rename would put a regular file in its
    place. A name of an open descriptor of this process
    (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``) is written into that descriptor,
    after what the process printed there: resolving it would name a pipe that cannot be
    opened again, or put a new file in place of the one the shell redirected into."""
    descriptor = _descriptor_of(path)
    if descriptor is not None:
        with _streamed_into(path.name, _descriptor_sink(descriptor)) as temp:
            yield temp
        return
    if path.is_symlink():
        path = path.resolve()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if mode is not None and not stat.S_ISREG(mode):
        with _streamed_into(path.name, lambda: path.open("wb")) as temp:
            yield temp
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(temp)
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = _new_file_mode()
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def is_stream(path: Path) -> bool:
    """Whether :func:`staged_file` writes into ``path`` rather than putting a file in its
    place: an open descriptor of this process (``/dev/stdout``), a FIFO, a terminal or a
    device. Nothing can be written beside such a target."""
    if _descriptor_of(path) is not None:
        return True
    try:
        mode = path.resolve().stat().st_mode
    except (OSError, RuntimeError):  # no such file, or a link loop
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


_DESCRIPTOR_FOLDERS = re.compile(r"^/(?:proc/(?:self|\d+)/fd|dev/fd)$")
_MAX_HOPS = 8


def _descriptor_of(path: Path) -> int | None:
    """The descriptor number ``path`` names, following its links: ``/dev/stdout`` is
    ``/proc/self/fd/1``; None for any other path."""
    current = Path(os.path.abspath(path))
    for _ in range(_MAX_HOPS):
        if _DESCRIPTOR_FOLDERS.match(str(current.parent)) and current.name.isdecimal():
            if str(current.parent).startswith("/proc/") and current.parent.parent.name not in (
                "self",
                str(os.getpid()),
            ):
                return None  # another process's descriptor: not ours to write into
            return int(current.name)
        if not current.is_symlink():
            return None
        current = Path(os.path.abspath(current.parent / os.readlink(current)))
    return None


@contextmanager
def _streamed_into(name: str, sink: Callable[[], BinaryIO]) -> Iterator[Path]:
    """A private temporary file whose bytes are copied into what ``sink`` opens (a pipe,
    a device, an open descriptor: never renamed over) when the block ends."""
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(temp)
        with open(temp, "rb") as source, sink() as target:
            shutil.copyfileobj(source, target)
    finally:
        Path(temp).unlink(missing_ok=True)


def _descriptor_sink(descriptor: int) -> Callable[[], BinaryIO]:
    """Opens ``descriptor`` for writing after what this process printed to it."""

    def sink() -> BinaryIO:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        return open(descriptor, "wb", closefd=False)

    return sink


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` (folders created), then move
    it into place; on any failure the temporary file is removed and ``path`` untouched."""
    with staged_file(path) as temp:
        temp.write_text(text, encoding="utf-8")


def update_json_atomically(path: Path, meta: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """``meta`` with ``fields`` added or replaced, written to ``path`` atomically (a
    model's metadata file: a crash leaves the old one or the new one, never half)."""
    updated = {**meta, **fields}
    write_text_atomically(path, json.dumps(updated, indent=2, sort_keys=True))
    return updated
