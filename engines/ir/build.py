"""``--build``: compile each C/C++ translation unit of a source tree to unoptimized IR.

ComPile collects IR straight after the frontend, before any LLVM pass has run. With
clang that is ``-emit-llvm -c`` plus ``-Xclang -disable-llvm-passes`` (no pass runs
whatever ``-O`` level the flags ask for) and ``-Xclang -disable-O0-optnone`` (at
``-O0`` clang would otherwise mark every function ``optnone``, which makes the IR
useless to optimize later). Bitcode goes to stdout (``-o -``) so the recorded command
is exactly the one that ran, with no temporary path in it. Commands run in the source
tree's folder with the file named relative to it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

C_SUFFIXES = {".c": "c"}
CXX_SUFFIXES = {".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".C": "cpp"}
DEFAULT_FLAGS = ("-O0",)
COMPILE_TIMEOUT_S = 300.0
_FRONTEND_ONLY = ("-Xclang", "-disable-llvm-passes", "-Xclang", "-disable-O0-optnone")


class CompileError(Exception):
    """A translation unit clang could not compile; ``reason`` is a short code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class CompilerNotFound(Exception):
    """The compiler named by ``--cc`` is not on PATH."""


def language_of_unit(path: Path) -> str | None:
    """``c`` or ``cpp`` for a translation unit, None for anything else (headers too)."""
    suffix = path.suffix
    if suffix in CXX_SUFFIXES:  # ".C" is C++, ".c" is C
        return CXX_SUFFIXES[suffix]
    lower = suffix.lower()
    return C_SUFFIXES.get(lower) or CXX_SUFFIXES.get(lower)


def find_translation_units(src_dir: Path) -> Iterator[Path]:
    """C and C++ sources below ``src_dir`` (absolute, sorted), hidden folders skipped."""
    for root, dirs, files in os.walk(src_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if language_of_unit(path) is not None:
                yield path


def parse_flags(flags: str) -> tuple[str, ...]:
    """``--flags`` as a shell would split them; ValueError on unbalanced quotes."""
    return tuple(shlex.split(flags))


def resolve_compiler(cc: str) -> str:
    """The compiler's path, or :class:`CompilerNotFound`."""
    found = shutil.which(cc)
    if found is None:
        raise CompilerNotFound(f"compiler {cc!r} not found on PATH")
    return found


def tree_includes(src_dir: Path) -> tuple[str, ...]:
    """Include paths every unit of a tree gets after ``--flags``: the tree's root (real
    projects write ``#include "re2/re2.h"`` from there) and its ``include/`` folder,
    named relative to the root, where the commands run."""
    return ("-I.", "-Iinclude") if (src_dir / "include").is_dir() else ("-I.",)


def compile_command(
    cc: str, flags: Sequence[str], relative_source: str, includes: Sequence[str] = ()
) -> list[str]:
    """The exact argv that compiles one translation unit to bitcode on stdout. A file
    named like an option (``-ofoo.c``, ``-fsyntax-only.c``) is named ``./-ofoo.c``: the
    compiler reads it as a file, never as an option a tree chose for it."""
    if relative_source.startswith("-"):
        relative_source = "./" + relative_source
    return [
        cc, *flags, *includes, "-emit-llvm", "-c", *_FRONTEND_ONLY, "-o", "-", relative_source
    ]  # fmt: skip


def command_text(argv: Sequence[str]) -> str:
    """The command as one shell-quoted line, as it is kept in provenance."""
    return shlex.join(argv)


def _first_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if "error:" in line:
            return line.strip()
    return lines[0].strip() if lines else "no message"


def compile_unit(argv: Sequence[str], cwd: Path, timeout_s: float = COMPILE_TIMEOUT_S) -> bytes:
    """Run one compile command; the bitcode it wrote, or :class:`CompileError`."""
    try:
        proc = subprocess.run(
            list(argv), cwd=cwd, capture_output=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise CompileError("compile-timeout", f"no result after {timeout_s:g} s") from None
    except OSError as exc:
        raise CompileError("compile-error", f"{argv[0]}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", "replace")
        raise CompileError("compile-error", f"exit {proc.returncode}: {_first_error(stderr)}")
    if not proc.stdout:
        raise CompileError("compile-error", "the compiler wrote no bitcode")
    return proc.stdout
