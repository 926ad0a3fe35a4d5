"""Writing a release's files: one canonical JSON encoding, hashing while writing,
deterministic gzip, and the temporary directory that becomes the release by a rename.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, Any


def encode_line(record: dict[str, Any]) -> bytes:
    """The one encoding every release uses: sorted keys, no spaces, UTF-8, newline."""
    return (
        json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
    ).encode("utf-8")


def encode_document(data: Any) -> bytes:
    """Pretty JSON for the manifest and schemas, with a stable key order."""
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


class HashingWriter:
    """A binary sink that counts and hashes what passes through to the real file."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.sha256 = hashlib.sha256()
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.bytes += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


class RecordFile:
    """A JSONL file being written, plain or gzip (no name, time 0: same bytes each run)."""

    def __init__(self, path: Path, compress: bool) -> None:
        self.path = path
        self.records = 0
        self._raw = path.open("wb")
        self._hashing = HashingWriter(self._raw)
        self._sink: Any = (
            gzip.GzipFile(filename="", mode="wb", fileobj=self._hashing, mtime=0, compresslevel=6)
            if compress
            else self._hashing
        )

    def write(self, line: bytes) -> None:
        self._sink.write(line)
        self.records += 1

    def close(self) -> tuple[str, int]:
        """Finish the file (flushed to disk) and return its sha256 and size."""
        if self._sink is not self._hashing:
            self._sink.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        return self._hashing.sha256.hexdigest(), self._hashing.bytes

    def abandon(self) -> None:
        self._raw.close()


def write_document(path: Path, data: bytes) -> tuple[str, int]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return hashlib.sha256(data).hexdigest(), len(data)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def open_lines(path: Path) -> IO[bytes] | closing[Iterator[bytes]]:
    """A release data file opened for reading lines, decompressed when it is gzip; a
    Parquet file gives each row as its canonical JSON line."""
    if path.name.endswith(".parquet"):
        from curator.releases.parquet import parquet_lines

        return closing(parquet_lines(path))
    return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")


class ReleaseExistsError(FileExistsError):
    """The target release is there already and ``--force`` was not given."""


PARTIAL = ".partial-"
OLD = ".old-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dead_owner(path: Path) -> bool:
    pid = path.name.rsplit("-", 1)[-1]
    return pid.isdecimal() and int(pid) != os.getpid() and not _pid_alive(int(pid))


def clear_stale_partials(target: Path) -> list[Path]:
    """Tidy what killed exports of this release left behind: temporary folders are
    removed; a replaced release whose successor never arrived is put back."""
    removed = []
    for path in target.parent.glob(f".{target.name}{OLD}*"):
        if _dead_owner(path):
            if target.exists():
                _remove(path)
                removed.append(path)
            else:
                os.replace(path, target)
    for path in target.parent.glob(f".{target.name}{PARTIAL}*"):
        if _dead_owner(path):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _holds(folder: Path, path: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (symbolic links resolved)."""
    folder, path = folder.resolve(), path.resolve()
    return path == folder or folder in path.parents


def refuse_unsafe_replace(target: Path, keep: Sequence[Path] = ()) -> None:
    """Raise ReleaseExistsError when ``--force`` must not replace ``target``: it holds one
    of ``keep`` (the open database, say), or it is a folder with files but no
    ``manifest.json``, so not a release that Curator wrote."""
    for path in keep:
        if _holds(target, path):
            raise ReleaseExistsError(f"{target} holds {path}; it is never replaced")
    if (target.exists() or target.is_symlink()) and not target.is_dir():
        raise ReleaseExistsError(
            f"{target} is a file, not a release; --force replaces only releases: move it"
            " away or choose another version"
        )
    if target.is_dir() and not (target / "manifest.json").is_file() and any(target.iterdir()):
        raise ReleaseExistsError(
            f"{target} is a folder but not a release (no manifest.json); --force replaces"
            " only releases: move it away or choose another version"
        )


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def staged_directory(target: Path, force: bool, keep: Sequence[Path] = ()) -> Iterator[Path]:
    """A temporary directory beside ``target`` that replaces it only if the block ends
    normally; on any error it is removed and ``target`` is left as it was. With
    ``force`` an existing release is replaced, never a folder that is not one or that
    holds a path of ``keep``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_stale_partials(target)
    if target.exists() and not force:
        raise ReleaseExistsError(f"{target} already exists (use --force to replace it)")
    if target.exists():
        refuse_unsafe_replace(target, keep)
    staging = target.parent / f".{target.name}{PARTIAL}{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        _fsync_dir(staging)
        if target.exists():
            if not force:
                raise ReleaseExistsError(f"{target} appeared while exporting; left as it is")
            refuse_unsafe_replace(target, keep)
            old = target.parent / f".{target.name}{OLD}{os.getpid()}"
            os.replace(target, old)
            try:
                os.replace(staging, target)
            except BaseException:
                os.replace(old, target)
                raise
            _remove(old)
        else:
            os.replace(staging, target)
        _fsync_dir(target.parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
