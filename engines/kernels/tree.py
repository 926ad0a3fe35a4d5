"""A source's files as one tree: every path it holds, read on demand, and the header
search a kernel's ``#include`` gets in it (the including file's folder and its parents,
the tree's include-like folders, ``-I`` folders the host passes, then the file's name
anywhere in the tree, nearest first)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from engines.pathtext import path_text

INCLUDE_FOLDERS = frozenset({"include", "includes", "inc", "common", "headers", "util", "utils"})
MAX_TEXT_BYTES = 2 * 1024 * 1024


@dataclass
class SourceTree:
    """Relative POSIX paths of a source's files, with a reader for each."""

    readers: dict[str, Callable[[], bytes]]
    include_dirs: list[str] = field(default_factory=list)
    outside: frozenset[str] = frozenset()  # links that lead out of the tree: never read
    _by_name: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _texts: dict[str, str | None] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for rel in sorted(self.readers.keys() | self.outside):
            self._by_name.setdefault(posixpath.basename(rel), []).append(rel)
        dirs = {posixpath.dirname(rel) for rel in self.readers}
        found = [d for d in dirs if posixpath.basename(d).lower() in INCLUDE_FOLDERS]
        self.include_dirs = [*self.include_dirs, *sorted(found, key=lambda d: (d.count("/"), d))]

    @classmethod
    def from_directory(cls, root: Path, paths: Iterable[Path] | None = None) -> SourceTree:
        """Every file under ``root`` (dot-folders skipped), or only ``paths``; a link to
        a file outside ``root`` is listed in :attr:`outside`, not read."""
        readers: dict[str, Callable[[], bytes]] = {}
        outside: set[str] = set()
        top = root.resolve()
        for path in paths if paths is not None else root.rglob("*"):
            rel = path.relative_to(root)
            if any(part.startswith(".") for part in rel.parts) or not path.is_file():
                continue
            if is_inside(path, top):
                readers[path_text(rel.as_posix())] = path.read_bytes
            else:
                outside.add(path_text(rel.as_posix()))
        return cls(readers, outside=frozenset(outside))

    def text(self, rel: str) -> str | None:
        """The file's text (Latin-1 when not UTF-8); None when unreadable or too big."""
        if rel not in self._texts:
            try:
                data = self.readers[rel]()
            except (OSError, KeyError, Exception):  # a git read error is no header either
                self._texts[rel] = None
                return None
            if len(data) > MAX_TEXT_BYTES or b"\0" in data:
                self._texts[rel] = None
            else:
                try:
                    self._texts[rel] = data.decode("utf-8")
                except UnicodeDecodeError:
                    self._texts[rel] = data.decode("latin-1")
        return self._texts[rel]

    def resolve(self, name: str, including: str, extra_dirs: Iterable[str] = ()) -> str | None:
        """The path ``#include "name"`` in file ``including`` stands for, or None (a path
        in :attr:`outside` when the file found is a link out of the tree)."""
        name = name.strip().replace("\\", "/")
        if not name or name.startswith("/"):
            return None
        folder = posixpath.dirname(including)
        cur = folder
        while True:
            hit = self._existing(posixpath.join(cur, name))
            if hit:
                return hit
            if not cur:
                break
            cur = posixpath.dirname(cur)
        for base in [*extra_dirs, *self.include_dirs]:
            hit = self._existing(posixpath.join(base, name))
            if hit:
                return hit
        matches = [
            rel
            for rel in self._by_name.get(posixpath.basename(name), [])
            if rel == name or rel.endswith("/" + name)
        ]
        if not matches:
            return None
        return max(matches, key=lambda rel: (shared_depth(rel, folder), -rel.count("/"), rel))

    def _existing(self, joined: str) -> str | None:
        rel = posixpath.normpath(joined)
        if rel.startswith("../") or rel == "..":
            return None
        return rel if rel in self.readers or rel in self.outside else None


def is_inside(path: Path, top: Path) -> bool:
    """Whether ``path``, links followed, is ``top`` (already resolved) or under it."""
    try:
        path.resolve().relative_to(top)
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def shared_depth(rel: str, folder: str) -> int:
    """How many leading folders the file ``rel`` shares with ``folder`` (both relative
    to the tree's root, ``""`` the root itself)."""
    a = posixpath.dirname(rel).split("/") if posixpath.dirname(rel) else []
    b = folder.split("/") if folder else []
    depth = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        depth += 1
    return depth
