"""Reading LLVM IR modules with llvmlite: textual ``.ll`` and bitcode ``.bc``.

Each module is parsed in its own LLVM context (named struct types would otherwise pile
up in the global one and be renamed ``%struct.S.0``), verified, and printed back by
llvmlite's LLVM: that printout is what the structural hash and the statistics read,
so a ``.ll`` and a ``.bc`` of one module, or clang 14's typed pointers and today's
opaque ones, look alike. Whatever LLVM cannot read becomes an :class:`IRReadError`
with a short reason code and LLVM's own message, located in the file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import llvmlite.binding as llvm

from engines.ir.structural_hash import structural_hash
from engines.pathtext import path_text

IR_SUFFIXES = (".ll", ".bc")
BITCODE_MAGIC = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")  # raw bitcode, bitcode wrapper
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

# What a module's source_filename says about the language it was compiled from.
_LANGUAGES = {
    ".c": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".cp": "cpp",
    ".rs": "rust",
    ".swift": "swift",
    ".jl": "julia",
    ".f": "fortran",
    ".f90": "fortran",
    ".f95": "fortran",
    ".m": "objc",
    ".mm": "objcpp",
    ".cu": "cuda",
    ".cl": "opencl",
}
_TEXT_ERROR = re.compile(r"^<string>:(\d+):(\d+): error: (.*)$", re.MULTILINE)


class IRReadError(Exception):
    """A module LLVM could not read; ``reason`` is a short code for counting."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class LoadedModule:
    """One parsed, verified module.

    ``text`` and ``bitcode`` are what gets stored: the input as it came plus the other
    form written by llvmlite. ``printed`` is LLVM's printout of the parsed module.
    """

    input_format: str
    text: str
    bitcode: bytes
    printed: str
    source_file: str
    latin1_lines: tuple[int, ...] = ()  # lines whose comment had bytes read as Latin-1


def language_of_source(source_file: str, fallback: str = "unknown") -> str:
    """The language a module was compiled from, judged by its source file name."""
    suffix = PurePosixPath(source_file).suffix
    return _LANGUAGES.get(suffix) or _LANGUAGES.get(suffix.lower()) or fallback


def is_bitcode(data: bytes) -> bool:
    return data[:4] in BITCODE_MAGIC


def _text_error(message: str) -> str:
    match = _TEXT_ERROR.search(message)
    if match:
        line, column, text = match.groups()
        return f"line {line}, column {column}: {text}"
    return " ".join(message.replace("LLVM IR parsing error", "").split())


def _bitcode_error(message: str, data: bytes) -> str:
    detail = " ".join(message.replace("LLVM bitcode parsing error", "").split())
    if data[:4] == BITCODE_MAGIC[0] and len(data) % 4:
        return f"truncated bitcode ({len(data)} bytes, not a whole number of words): {detail}"
    return f"corrupt, truncated or too new for LLVM {_llvm_version()}: {detail}"


def _llvm_version() -> str:
    return ".".join(str(part) for part in llvm.llvm_version_info)


def _source_file(module: llvm.ModuleRef) -> str:
    """The module's ``source_filename``; bytes that are not UTF-8 written ``\\xNN``
    (llvmlite's own property raises on them)."""
    raw = llvm.ffi.lib.LLVMPY_GetModuleSourceFileName(module)
    return path_text(raw.decode("utf-8", "surrogateescape")) if raw else ""


def _comment_start(line: bytes) -> int | None:
    """Where a line's ``;`` comment starts, outside ``"..."`` (IR strings escape a quote
    as ``\\22``, so quotes simply alternate); None for a line without a comment."""
    quoted = False
    for at, byte in enumerate(line):
        if byte == 0x22:  # "
            quoted = not quoted
        elif byte == 0x3B and not quoted:  # ;
            return at
    return None


def decode_ir_text(data: bytes) -> tuple[str, tuple[int, ...]]:
    """Textual IR as a ``str`` that is valid UTF-8, and the lines it had to recode.

    LLVM takes any bytes in a comment, so a comment's bytes that are not UTF-8 (a
    Latin-1 author name, say) are read as Latin-1, each one on its own: the text depends
    on the bytes alone, and the module LLVM parses is the same. Such a byte anywhere
    else (a name, a string constant) is an :class:`IRReadError` naming its line, and so
    is a NUL byte anywhere: LLVM gets the text as a C string and would silently read
    only what comes before it (three binary bytes made an empty module).
    """
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        column = nul - data.rfind(b"\n", 0, nul)
        raise IRReadError(
            "not-text", f"line {line}, column {column}: a NUL byte (binary data, not IR?)"
        )
    try:
        return data.decode("utf-8"), ()
    except UnicodeDecodeError:
        pass
    lines: list[str] = []
    recoded: list[int] = []
    for number, line in enumerate(data.split(b"\n"), 1):
        try:
            lines.append(line.decode("utf-8"))
            continue
        except UnicodeDecodeError as exc:
            bad = exc.start
        comment = _comment_start(line)
        if comment is None or bad < comment:
            raise IRReadError(
                "not-text",
                f"line {number}, column {bad + 1}: byte 0x{line[bad]:02X} is not UTF-8"
                " (only a comment may hold such bytes; not IR?)",
            )
        escaped = line[comment:].decode("utf-8", "surrogateescape")
        tail = "".join(chr(ord(c) - 0xDC00) if "\udc80" <= c <= "\udcff" else c for c in escaped)
        lines.append(line[:comment].decode("utf-8") + tail)
        recoded.append(number)
    return "\n".join(lines), tuple(recoded)


def load_module(data: bytes, input_format: str | None = None) -> LoadedModule:
    """Parse, verify and print one module given as bytes (format sniffed if not given)."""
    if not data:
        raise IRReadError("empty", "empty file")
    fmt = input_format or ("bc" if is_bitcode(data) else "ll")
    latin1_lines: tuple[int, ...] = ()
    context = llvm.create_context()
    module = None
    try:
        if fmt == "bc":
            if not is_bitcode(data):
                raise IRReadError("bitcode-error", "not LLVM bitcode (no BC signature)")
            try:
                module = llvm.parse_bitcode(data, context=context)
            except RuntimeError as exc:
                raise IRReadError("bitcode-error", _bitcode_error(str(exc), data)) from None
            text = None
        else:
            text, latin1_lines = decode_ir_text(data)
            try:
                module = llvm.parse_assembly(text, context=context)
            except RuntimeError as exc:
                message = _text_error(str(exc))
                if text.startswith("\ufeff"):
                    message += " (the file starts with a byte-order mark, which LLVM does not read)"
                raise IRReadError("parse-error", message) from None
        try:
            module.verify()
        except RuntimeError as exc:
            raise IRReadError("invalid", "verifier: " + " ".join(str(exc).split())) from None
        printed = str(module)
        return LoadedModule(
            input_format=fmt,
            text=printed if text is None else text,
            bitcode=data if fmt == "bc" else module.as_bitcode(),
            printed=printed,
            source_file=_source_file(module),
            latin1_lines=latin1_lines,
        )
    finally:
        if module is not None:
            module.close()
        context.close()


def stored_text_hash(text: str) -> str:
    """The structural hash of a stored module's IR text, as ingest computes it today
    (``curator mine ir --rehash``); raises :class:`IRReadError` when it does not parse."""
    loaded = load_module(text.encode("utf-8", "surrogatepass"), "ll")
    return structural_hash(loaded.printed)


def read_input(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """A file's bytes, or an :class:`IRReadError` when it cannot or should not be read."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise IRReadError("too-large", f"{size:,} bytes is over the {max_bytes:,} limit")
        return path.read_bytes()
    except OSError as exc:
        raise IRReadError("unreadable", exc.strerror or str(exc)) from None


def input_format_of(path: Path) -> str | None:
    """``ll`` or ``bc`` by suffix; None for other names (then sniffed from the bytes)."""
    suffix = path.suffix.lower()
    return suffix[1:] if suffix in IR_SUFFIXES else None


def find_ir_files(folder: Path) -> Iterator[Path]:
    """``.ll`` and ``.bc`` files below ``folder``, sorted, hidden folders skipped."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(IR_SUFFIXES):
                yield Path(root) / name


def expand_paths(paths: Iterable[Path]) -> tuple[list[tuple[Path, Path]], list[Path]]:
    """Each IR file named or found in a folder (absolute, once) with the folder it came
    from (the project fallback), and the paths that do not exist."""
    found: list[tuple[Path, Path]] = []
    missing: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        absolute = path.absolute()
        if absolute.is_dir():
            candidates: Iterable[Path] = find_ir_files(absolute)
            base = absolute
        elif absolute.exists():
            candidates = [absolute]
            base = absolute.parent
        else:
            missing.append(path)
            continue
        for candidate in candidates:
            if candidate not in seen:
                seen.add(candidate)
                found.append((candidate, base))
    return found, missing
