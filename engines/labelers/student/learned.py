"""What a perf prior already learned: digests of its training examples' messages.

A prior ships, beside its weights, a file of digests (``perf_prior.learned``: one hex
digest per line, sorted) of the commit message of every example it learned from. By
default (``curator train --prior-examples skip``) a student that starts from the prior
leaves those examples out of its fine-tuning: the prior has learned them already, and
read again they pull it back toward their own source. They still serve for choosing the
threshold and as the replay sample.

The digest is SHA-256 of the message with its whitespace collapsed (so an import that
rewraps lines or trims the trailing newline still matches), cut to 16 hex digits. It
reads the message alone: the same message from another project counts as learned.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from engines.files import write_text_atomically

DIGEST_CHARS = 16
CHOICES = ("skip", "train")


def message_digest(message: str) -> str:
    """The digest of one commit message (see the module docstring)."""
    normal = " ".join(message.split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def write_learned(path: Path, digests: Iterable[str]) -> int:
    """Write ``digests`` sorted and unique to ``path`` atomically; return how many."""
    unique = sorted(set(digests))
    for digest in unique:
        _check(digest, str(path))
    write_text_atomically(path, "".join(f"{d}\n" for d in unique))
    return len(unique)


def read_learned(path: Path) -> frozenset[str]:
    """The digests in ``path``; ValueError naming the file and line of a bad one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a list of learned digests ({exc})") from exc
    digests = set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text:
            digests.add(_check(text, f"{path}:{number}"))
    return frozenset(digests)


def _check(digest: str, where: str) -> str:
    if len(digest) != DIGEST_CHARS or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"{where}: {digest[:40]!r} is not a {DIGEST_CHARS}-digit hex digest")
    return digest
