"""Which languages the miner knows, recognised by file extension.

Add a language with :func:`register_language`; the CLI's ``--lang`` accepts any
registered name or alias.
"""

from __future__ import annotations

_EXTENSIONS: dict[str, str] = {}
_ALIASES: dict[str, str] = {}


def register_language(
    name: str, extensions: list[str], aliases: tuple[str, ...] | list[str] = ()
) -> None:
    """Map each extension (with its dot, any case) and alias to ``name``."""
    for ext in extensions:
        _EXTENSIONS[ext.lower()] = name
    _ALIASES[name] = name
    for alias in aliases:
        _ALIASES[alias.lower()] = name


register_language("python", [".py"], ("py",))
# C++ also covers the files a header includes for its templates' bodies (``.ipp``,
# ``.inl``, ``.tpp``, ``.txx``) and CUDA (``.cu``, ``.cuh``), which tree-sitter's C++
# grammar reads well enough to find its kernels and functions (docs/mining.md)
register_language(
    "cpp",
    [
        ".c",
        ".cc",
        ".cpp",
        ".cxx",
        ".h",
        ".hpp",
        ".hh",
        ".hxx",
        ".ipp",
        ".inl",
        ".tpp",
        ".txx",
        ".cu",
        ".cuh",
    ],
    ("c++", "c", "cxx"),
)
register_language("java", [".java"])


def known_languages() -> list[str]:
    return sorted(set(_EXTENSIONS.values()))


def language_of(path: str) -> str | None:
    """The language of a repository path, or None if its extension is not registered."""
    return _EXTENSIONS.get(suffix(path).lower())


def suffix(path: str) -> str:
    """``PurePosixPath(path).suffix`` for a path as git writes it (``a/b.c`` ->
    ``.c``; none for ``.hidden`` or ``name.``), without building a path object: the
    miner asks it of every file of every commit."""
    name = path.rstrip("/").rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def parse_languages(spec: str | None) -> frozenset[str]:
    """Parse ``python,cpp,java`` (aliases allowed); empty means every known language."""
    if not spec:
        return frozenset(known_languages())
    chosen = set()
    for raw in spec.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if name not in _ALIASES:
            raise ValueError(
                f"unknown language {raw.strip()!r}; known: {', '.join(known_languages())}"
            )
        chosen.add(_ALIASES[name])
    return frozenset(chosen)
