"""Atomic writes (engines.files): a reader sees the old file or the new one, the mode is
kept, a link is written through, and a pipe is written into rather than replaced."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from engines.files import is_stream, staged_file, write_text_atomically


def test_a_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(0o640)
    write_text_atomically(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_a_failing_writer_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(RuntimeError), staged_file(path) as temp:
        temp.write_text("half")
        raise RuntimeError("writer failed")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_link_is_written_through_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "eval.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    write_text_atomically(link, "new")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text() == "new"


def test_a_fifo_is_written_into_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:
            got.append(stream.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    write_text_atomically(fifo, "through the pipe\n")
    reader.join(timeout=30)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        write_text_atomically(tmp_path, "x")


def test_is_stream_names_what_is_written_into_rather_than_replaced(tmp_path: Path) -> None:
    fifo, regular = tmp_path / "fifo", tmp_path / "plain.json"
    os.mkfifo(fifo)
    regular.write_text("{}")
    (tmp_path / "link").symlink_to(fifo)
    assert is_stream(fifo) and is_stream(tmp_path / "link")
    assert is_stream(Path("/dev/null")) and is_stream(Path("/dev/stdout"))
    assert not is_stream(regular) and not is_stream(tmp_path / "missing.json")
    assert not is_stream(tmp_path)  # a folder is refused elsewhere, not written into
