"""The build options a host program gives its kernels: ``-D`` and ``-I`` read from the
string literals of host sources (what ``clBuildProgram`` receives) and from build files
(Makefiles, CMake). A kernel file gets the options of the host and build files in its
own folder, then in its parent folder; a kernel embedded in a host file gets that
file's own options first."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from engines.kernels.tree import SourceTree

HOST_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")
BUILD_NAMES = ("makefile", "gnumakefile", "cmakelists.txt")
BUILD_SUFFIXES = (".mk", ".cmake", ".make")

_STRING = re.compile(r'"((?:\\.|[^"\\\n])*)"')
_DEFINE = re.compile(r"(?<![\w-])-D\s*([A-Za-z_]\w*)(=?)((?:\\.|[^\s\"'\\])*)")
_INCLUDE_DIR = re.compile(r"(?<![\w-])-I\s*((?:\\.|[^\s\"'\\])+)")
_LITERAL = re.compile(r"^(?:[-+]?[\w.]+[fFuUlL]*|\([^()]*\)|[A-Za-z_]\w*)$")


@dataclass(frozen=True)
class HostDefine:
    """One ``-D``: its value (None when the host computes it at run time) and origin."""

    name: str
    value: str | None
    file: str


@dataclass
class HostFlags:
    """The options that apply to one kernel file, in priority order."""

    defines: dict[str, HostDefine] = field(default_factory=dict)
    include_dirs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def provenance(self) -> dict[str, object]:
        return {
            "defines": {d.name: d.value for d in self.defines.values()},
            "include_dirs": list(self.include_dirs),
            "files": list(self.files),
        }


def is_build_file(rel: str) -> bool:
    base = posixpath.basename(rel).lower()
    return base in BUILD_NAMES or base.startswith("makefile") or base.endswith(BUILD_SUFFIXES)


def _value(eq: str, raw: str) -> str | None:
    if not eq:
        return "1"
    raw = raw.strip().strip("'").replace('\\"', '"')
    if not raw or "%" in raw or "$" in raw or not _LITERAL.match(raw):
        return None  # filled in by the host at run time (a format, a variable, a concatenation)
    return raw


def scan_text(text: str, rel: str, build_file: bool) -> tuple[list[HostDefine], list[str]]:
    """The ``-D`` and ``-I`` options in one file: in its string literals for host code,
    anywhere for build files. ``-I`` folders come back relative to the tree's root."""
    pieces = [text] if build_file else [m.group(1) for m in _STRING.finditer(text)]
    defines: list[HostDefine] = []
    dirs: list[str] = []
    folder = posixpath.dirname(rel)
    for piece in pieces:
        for m in _DEFINE.finditer(piece):
            defines.append(HostDefine(m.group(1), _value(m.group(2), m.group(3)), rel))
        for m in _INCLUDE_DIR.finditer(piece):
            raw = m.group(1).strip("'\"")
            if raw.startswith(("/", "$", "%")) or "$(" in raw:
                continue
            joined = posixpath.normpath(posixpath.join(folder, raw))
            if not joined.startswith(".."):
                dirs.append("" if joined == "." else joined)
    return defines, dirs


class HostFlagIndex:
    """Host and build files of a tree, scanned once each, looked up per kernel file."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self._by_folder: dict[str, list[str]] = {}
        for rel in sorted(tree.readers):
            build = is_build_file(rel)
            if build or rel.lower().endswith(HOST_SOURCES):
                self._by_folder.setdefault(posixpath.dirname(rel), []).append(rel)
        self._scanned: dict[str, tuple[list[HostDefine], list[str]]] = {}

    def _scan(self, rel: str) -> tuple[list[HostDefine], list[str]]:
        if rel not in self._scanned:
            text = self.tree.text(rel)
            self._scanned[rel] = (
                ([], []) if text is None else scan_text(text, rel, is_build_file(rel))
            )
        return self._scanned[rel]

    def flags_for(self, kernel_file: str) -> HostFlags:
        """The options for ``kernel_file``: its own (when it is a host file), then its
        folder's host sources before build files, then its parent folder's."""
        folder = posixpath.dirname(kernel_file)
        order: list[str] = []
        if kernel_file.lower().endswith(HOST_SOURCES):
            order.append(kernel_file)
        for f in (folder, posixpath.dirname(folder) if folder else None):
            if f is None:
                continue
            files = self._by_folder.get(f, [])
            order += sorted(files, key=lambda r: (is_build_file(r), r))
            if not folder:
                break
        flags = HostFlags()
        for rel in dict.fromkeys(order):
            defines, dirs = self._scan(rel)
            if defines or dirs:
                flags.files.append(rel)
            for d in defines:
                known = flags.defines.get(d.name)
                if known is None or (known.value is None and d.value is not None):
                    flags.defines[d.name] = d
            for d in dirs:
                if d not in flags.include_dirs:
                    flags.include_dirs.append(d)
        return flags
