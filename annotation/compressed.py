"""An import file's bytes, plain or gzip-compressed (``items.jsonl.gz``, ``votes.csv.gz``,
what ``gzip`` and ``pandas.DataFrame.to_json(..., compression="gzip")`` write).

A compressed file is told by its first two bytes, not its name, and read as a stream: it
reads as the file it holds, and its format is told by the name without ``.gz``.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

GZIP_MAGIC = b"\x1f\x8b"

BROKEN_GZIP = (EOFError, gzip.BadGzipFile, zlib.error)
"""What reading a truncated or corrupt gzip stream raises."""


@contextmanager
def open_bytes(path: Path) -> Iterator[IO[bytes]]:
    """The file's bytes, uncompressed as they are read when it is gzip-compressed."""
    with path.open("rb") as raw:
        if raw.read(2) != GZIP_MAGIC:
            raw.seek(0)
            yield raw
            return
        raw.seek(0)
        with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
            yield unpacked


def data_suffix(path: Path) -> str:
    """The suffix that tells the file's format, lower case: ``.csv`` for ``a.csv.gz``."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return Path(path.stem).suffix.lower()
    return suffix


def broken_gzip(exc: BaseException) -> str:
    """One line for a gzip stream that stops being readable part way."""
    detail = str(exc).strip() or type(exc).__name__
    return f"not a whole gzip file ({detail}); compress it again, or give the uncompressed file"
