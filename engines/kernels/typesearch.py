"""A type an isolated kernel names but never defines, looked up in its source tree.

Real kernels often use a type their host program defines elsewhere: ArrayFire's host
prepends ``kernel/KParam.hpp`` (``typedef struct KParam_t {...} KParam;``) to every
kernel it builds, and the kernels pass it by value. A guessed ``typedef float KParam;``
cannot stand for a struct, so before guessing, the tree is searched for the type's
definition: the headers the kernel includes first, then the files nearest the kernel
(the longest shared folder prefix), device code and headers only.

What is found:

- a struct or union, ``typedef struct TAG {...} NAME;``, ``struct NAME {...};`` (C++
  style, used without ``struct``: it becomes ``typedef struct NAME {...} NAME;``), or
  ``typedef struct TAG NAME;`` with ``struct TAG {...}`` defined in the same file; one
  holding C++ (methods, ``::``, references) outside ``#ifndef __OPENCL_VERSION__`` or
  ``#ifdef __cplusplus`` is the host's own and is skipped;
- a scalar or vector alias, ``typedef long long dim_t;``, with the host's C types read
  as OpenCL C's (``long long`` is ``long``, ``unsigned int`` is ``uint``, ``int64_t`` is
  ``long``); an alias to anything else (a template, a class) is not a definition the
  device can read, and is skipped.

A type the kernel uses as a struct (``p.dims``: a member that is no vector component)
and that is not found is never guessed; :func:`struct_use` names the use.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from engines.kernels.ctext import blank_comments_and_strings
from engines.kernels.tree import SourceTree, shared_depth

SEARCHED_SUFFIXES = (
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".cl",
    ".clh",
    ".ocl",
    ".opencl",
    ".cuh",
    ".inc",
    ".inl",
)
MAX_DEFINITION_CHARS = 20_000

_AGGREGATE = re.compile(
    r"\b(typedef\s+)?(struct|union)\b\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?(\w+)?\s*\{"
)
_ALIAS = re.compile(r"\btypedef\s+([A-Za-z_][\w\s]*?)\s+([A-Za-z_]\w*)\s*;")
_TAG_ALIAS = re.compile(r"\btypedef\s+(struct|union)\s+(\w+)\s+([A-Za-z_]\w*)\s*;")
_DECLARATOR = re.compile(r"^\s*([A-Za-z_]\w*)\s*$")
_SWIZZLE = re.compile(r"^(?:[xyzw]{1,4}|[rgba]{1,4}|[sS][0-9a-fA-F]{1,16}|lo|hi|even|odd)$")
_QUALIFIER = (
    r"(?:const|volatile|restrict|__restrict|__global|global|__local|local|__constant"
    r"|constant|__private|private)"
)

# Host C types as OpenCL C reads them; the value is the OpenCL scalar.
_HOST_SCALARS = {
    "char": "char",
    "signed char": "char",
    "unsigned char": "uchar",
    "uchar": "uchar",
    "short": "short",
    "short int": "short",
    "signed short": "short",
    "unsigned short": "ushort",
    "unsigned short int": "ushort",
    "ushort": "ushort",
    "int": "int",
    "signed": "int",
    "signed int": "int",
    "unsigned": "uint",
    "unsigned int": "uint",
    "uint": "uint",
    "long": "long",
    "long int": "long",
    "long long": "long",
    "long long int": "long",
    "signed long long": "long",
    "unsigned long": "ulong",
    "unsigned long int": "ulong",
    "unsigned long long": "ulong",
    "unsigned long long int": "ulong",
    "ulong": "ulong",
    "float": "float",
    "double": "double",
    "half": "half",
    "size_t": "size_t",
    "ptrdiff_t": "ptrdiff_t",
    "intptr_t": "intptr_t",
    "uintptr_t": "uintptr_t",
    "int8_t": "char",
    "uint8_t": "uchar",
    "int16_t": "short",
    "uint16_t": "ushort",
    "int32_t": "int",
    "uint32_t": "uint",
    "int64_t": "long",
    "uint64_t": "ulong",
}
_VECTOR = re.compile(r"^(?:u?char|u?short|u?int|u?long|float|double|half)(?:2|3|4|8|16)$")


@dataclass(frozen=True)
class TypeDefinition:
    """The lines that define ``name`` for the device, and the file they came from."""

    name: str
    text: str
    file: str


def _brace_pairs(code: str) -> dict[int, int]:
    """For each ``{``, the index just past the ``}`` that closes it (one pass: a header
    with thousands of structs costs its length, not its length per struct)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.end()
    return pairs


def _statement_end(code: str, start: int) -> int | None:
    end = code.find(";", start)
    if end < 0 or "{" in code[start:end] or end - start > 400:
        return None
    return end + 1


_HOST_ONLY = re.compile(
    r"^\s*#\s*(?:ifndef\s+__OPENCL_VERSION__|ifdef\s+__cplusplus"
    r"|if\s+!\s*defined\s*\(?\s*__OPENCL_VERSION__|if\s+defined\s*\(?\s*__cplusplus)\b"
)
_OPENS = re.compile(r"^\s*#\s*if")
_ELSE = re.compile(r"^\s*#\s*(?:else|elif)\b")
_ENDS = re.compile(r"^\s*#\s*endif\b")
_NOT_C = re.compile(
    r"::|\boperator\b|\btemplate\b|\b(?:public|private|protected)\s*:|\bvirtual\b|&"
    r"|\bstatic\b|\bclass\b"
)


def _device_readable(definition: str) -> bool:
    """Whether the device can read ``definition``: once the parts kept from it
    (``#ifndef __OPENCL_VERSION__``, ``#ifdef __cplusplus``) are left out, no C++ and no
    member function remains (a host struct with methods would break the build a guess
    let through)."""
    kept, skipping, depth = [], False, 0
    for line in definition.splitlines():
        if skipping:
            if _OPENS.match(line):
                depth += 1
            elif _ENDS.match(line):
                if depth == 0:
                    skipping = False
                else:
                    depth -= 1
            elif _ELSE.match(line) and depth == 0:
                skipping = False
            continue
        if _HOST_ONLY.match(line):
            skipping, depth = True, 0
            continue
        kept.append(line)
    code = "\n".join(kept)
    code = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", code, flags=re.S)
    return not _NOT_C.search(code) and "(" not in code


def _definitions(text: str) -> dict[str, str]:
    """Every definition in one file's text, by the name the device would use, the
    first one of each name (an ``#if`` may hold several)."""
    code = blank_comments_and_strings(text, keep_strings=False)
    found: dict[str, str] = {}
    bodies: dict[str, str] = {}  # struct TAG -> "struct TAG {...}"
    pairs = _brace_pairs(code)
    for m in _AGGREGATE.finditer(code):
        close = pairs.get(m.end() - 1)
        if close is None or close - m.start() > MAX_DEFINITION_CHARS:
            continue
        end = _statement_end(code, close)
        if end is None:
            continue
        typedef, kind, tag = m.group(1), m.group(2), m.group(3)
        body = text[m.start() + (len(typedef) if typedef else 0) : close]
        if not _device_readable(blank_comments_and_strings(body, keep_strings=False)):
            continue
        tail = code[close : end - 1]
        if tag:
            bodies.setdefault(f"{kind} {tag}", body)
        if typedef:
            names = [d.group(1) for d in map(_DECLARATOR.match, tail.split(",")) if d]
            for name in names:
                found.setdefault(name, text[m.start() : end])
        elif tag and not tail.strip():
            # C++ style: used without the keyword, so the device needs the alias too
            found.setdefault(tag, f"typedef {body} {tag};")
    for m in _TAG_ALIAS.finditer(code):
        body = bodies.get(f"{m.group(1)} {m.group(2)}")
        if body is not None:
            found.setdefault(m.group(3), f"typedef {body} {m.group(3)};")
    for m in _ALIAS.finditer(code):
        words = " ".join(w for w in m.group(1).split() if w not in ("const", "volatile"))
        device = _HOST_SCALARS.get(words) or (words if _VECTOR.match(words) else None)
        if device is not None and device != m.group(2):
            found.setdefault(m.group(2), f"typedef {device} {m.group(2)};")
    return found


class TypeIndex:
    """The definitions in a tree's headers and device files, read once, on the first
    lookup."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self._by_name: dict[str, list[tuple[str, str]]] | None = None

    def _index(self) -> dict[str, list[tuple[str, str]]]:
        if self._by_name is None:
            self._by_name = {}
            for rel in sorted(self.tree.readers):
                if not rel.lower().endswith(SEARCHED_SUFFIXES):
                    continue
                text = self.tree.text(rel)
                if text is None or ("struct" not in text and "typedef" not in text):
                    continue
                for name, definition in _definitions(text).items():
                    self._by_name.setdefault(name, []).append((rel, definition))
        return self._by_name

    def find(
        self, name: str, kernel_file: str, includes: tuple[str, ...] = ()
    ) -> TypeDefinition | None:
        """The definition of ``name`` nearest the kernel: in a header it includes first,
        then the file sharing the longest folder prefix with it (shallower, then by
        path, on a tie)."""
        found = self._index().get(name)
        if not found:
            return None
        folder = posixpath.dirname(kernel_file)
        included = set(includes)
        rel, text = min(
            found,
            key=lambda hit: (
                hit[0] not in included,
                -shared_depth(hit[0], folder),
                hit[0].count("/"),
                hit[0],
            ),
        )
        return TypeDefinition(name, text, rel)


def _top_level(code: str) -> list[str]:
    """``code`` cut into its top-level declarations and function definitions, so that
    a name is read in the function that declares it."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
            if depth == 0:
                pieces.append(code[start : i + 1])
                start = i + 1
        elif ch == ";" and depth == 0:
            pieces.append(code[start : i + 1])
            start = i + 1
    pieces.append(code[start:])
    return pieces


def struct_use(code: str, name: str) -> str | None:
    """A use of type ``name`` as a struct in ``code`` (comments blanked): in one
    function, a variable declared with it whose member other than a vector component is
    read, as ``out.dims``; None when there is none."""
    n = re.escape(name)
    declaration = re.compile(
        rf"\b{n}\b(?:\s+{_QUALIFIER}\b)*\s*(?:\*\s*(?:{_QUALIFIER}\s+)*)*([A-Za-z_]\w*)\s*[,;=)\[]"
    )
    for piece in _top_level(code):
        for var in dict.fromkeys(m.group(1) for m in declaration.finditer(piece)):
            v = re.escape(var)
            others = {
                m.group(1)
                for m in re.finditer(rf"\b([A-Za-z_]\w*)\s*[*\s]\s*\b{v}\s*[,;=)\[]", piece)
            } - {name, "return", "case", "goto", "sizeof", "else", "do"}
            if any(not re.fullmatch(_QUALIFIER, word) for word in others):
                continue  # declared with another type too: which one a use reads is unclear
            for use in re.finditer(rf"\b{v}\s*(?:\[[^\]\n]*\]\s*)*(\.|->)\s*([A-Za-z_]\w*)", piece):
                if use.group(1) == "->" or not _SWIZZLE.match(use.group(2)):
                    return f"{var}{use.group(1)}{use.group(2)}"
    return None
