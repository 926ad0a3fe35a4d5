"""Scraping OpenCL device code: ``.cl`` files and kernel strings embedded in C/C++ host
files, local ``#include``\\ s inlined, then one candidate per ``__kernel`` function with
only the helper functions, typedefs, macros and globals it needs (CLgen section 4.1)."""

from __future__ import annotations

import bisect
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engines.kernels.ctext import (
    IDENT,
    KEYWORDS,
    PREPROCESSOR_WORDS,
    blank_comments_and_strings,
    identifiers,
)
from engines.kernels.tree import SourceTree
from engines.pathtext import path_text

DEVICE_SUFFIXES = frozenset({".cl", ".ocl", ".clh", ".opencl"})
# device code wrapped in a C++ raw string, for a host to #include into a string
# (CLBlast's ``.opencl`` files: ``R"(`` ... ``)"``)
_RAW_OPEN = re.compile(r'R"[^()\\ \n]{0,16}\(')
HOST_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl"})
MAX_INCLUDE_DEPTH = 8

_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>'
    # a computed include, hashcat's M2S(INCLUDE_PATH/inc_vendor.h): the header it names
    r"|[A-Za-z_]\w*[ \t]*\([ \t]*(?:[A-Za-z_]\w*[ \t]*/[ \t]*)?([\w./-]+\.\w+)[ \t]*\))"
    r"[^\n]*$",
    re.MULTILINE,
)
_KERNEL_MARK = re.compile(r"\b(?:__kernel|kernel)\b")
_PP_NAME = re.compile(r"#\s*(\w+)\s*(\w*)")
_CONDITIONAL = {"if", "ifdef", "ifndef", "elif", "else", "endif"}
_BRACE = re.compile(r"[{}]")


@dataclass(frozen=True)
class Candidate:
    """One ``__kernel`` function with what it needs, ready for the rejection filter."""

    name: str
    source: str
    file: str
    origin: str  # "cl" or "embedded"
    line: int
    includes: tuple[str, ...] = ()


@dataclass
class ScrapeResult:
    candidates: list[Candidate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Chunk:
    text: str
    kind: str  # "pp-define", "pp-cond", "pp-other", "function", "kernel", "decl"
    defines: set[str]
    uses: set[str]
    line: int
    name: str | None = None


def is_candidate_file(path: Path) -> bool:
    return path.suffix.lower() in DEVICE_SUFFIXES | HOST_SUFFIXES


def decode_source(data: bytes) -> tuple[str, str | None]:
    """Text of a source file and a warning when it was not valid UTF-8."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("latin-1"), f"not valid UTF-8 (byte {exc.start}); read as Latin-1"


Resolver = Callable[[str, str], "tuple[str, str] | None"]


class OutsideTree(Exception):
    """An ``#include`` that a resolver found outside the source tree (a link out of it)."""


def directory_resolver(root: Path) -> Resolver:
    """Headers next to the including file or under ``root`` (keys are paths); one that
    is only there through a link out of ``root`` raises :class:`OutsideTree`."""
    top = root.resolve()

    def resolve(name: str, including: str) -> tuple[str, str] | None:
        for base in (Path(including).parent, root):
            target = (base / name).resolve()
            if target.is_file():
                if not target.is_relative_to(top):
                    raise OutsideTree(name)
                try:
                    body, _ = decode_source(target.read_bytes())
                except OSError:
                    return None
                return str(target), body
        return None

    return resolve


def tree_resolver(tree: SourceTree, extra_dirs: Sequence[str] = ()) -> Resolver:
    """Headers anywhere in ``tree`` (:meth:`SourceTree.resolve`; keys are relative paths);
    a link out of the tree raises :class:`OutsideTree`."""

    def resolve(name: str, including: str) -> tuple[str, str] | None:
        rel = tree.resolve(name, including, extra_dirs)
        if rel is None:
            return None
        if rel in tree.outside:
            raise OutsideTree(name)
        text = tree.text(rel)
        return None if text is None else (rel, text)

    return resolve


def _comment(text: str) -> str:
    return "/* " + text.replace("*/", "* /") + " */"


def _leaves_tree(name: str, including: str, root: Path) -> bool:
    """Whether ``name``, included from ``including`` (a path under ``root``, or relative
    to it), is absolute or climbs out of ``root``."""
    target = name.strip().replace("\\", "/")
    if target.startswith("/") or re.match(r"[A-Za-z]:", target):
        return True
    folder = Path(including).parent
    if folder.is_absolute():
        try:
            folder = folder.resolve().relative_to(root.resolve())
        except (ValueError, OSError):
            folder = Path()
    joined = posixpath.normpath(posixpath.join(folder.as_posix(), target))
    return joined == ".." or joined.startswith("../")


def _climbs(name: str) -> bool:
    """Whether ``name`` starts above its folder (a compiler would look outside the tree)."""
    target = posixpath.normpath(name.strip().replace("\\", "/"))
    return target == ".." or target.startswith("../")


def _shown(key: str, root: Path) -> str:
    """A header's key as stored and shown: relative to ``root`` when it is an absolute
    path (:func:`engines.pathtext.path_text`)."""
    try:
        return path_text(str(Path(key).relative_to(root)) if Path(key).is_absolute() else key)
    except ValueError:
        return path_text(key)


def inline_includes(
    text: str,
    directory: Path,
    root: Path,
    seen: tuple[str, ...] = (),
    depth: int = 0,
    resolver: Resolver | None = None,
    including: str | None = None,
    refused: list[tuple[str | None, str]] | None = None,
) -> tuple[str, list[str]]:
    """Replace ``#include "x"`` (and ``<x>`` when the tree has it) by the file's text;
    headers not found stay as written. Returns the names inlined. Without a
    ``resolver`` a header is looked for next to the including file and under ``root``.

    An include naming a file outside the tree (an absolute path, one that climbs out of
    ``root``, a link out of it) is never read: it becomes a comment, and ``(header it
    is in or None, name)`` goes to ``refused``. One not found that starts with ``..``
    becomes a comment too, so that no compiler looks for it outside the tree."""
    resolve = resolver or directory_resolver(root)
    here = including if including is not None else str(directory / "_")
    inlined: list[str] = []
    refusals = refused if refused is not None else []

    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        try:
            found = resolve(name, here)
        except OutsideTree:
            found, outside = None, True
        else:
            outside = found is None and _leaves_tree(name, here, root)
        if outside:
            refusals.append((None if depth == 0 else _shown(here, root), name))
            return _comment(f"include {name} refused: outside the source tree")
        if found is None:
            return _comment(f"include {name}: not found") if _climbs(name) else m.group(0)
        key, body = found
        if key in seen or depth >= MAX_INCLUDE_DEPTH:
            return _comment(f"include {name} skipped: cycle or too deep")
        inner, more = inline_includes(
            body, directory, root, (*seen, key), depth + 1, resolve, key, refusals
        )
        inlined.append(_shown(key, root))
        inlined.extend(more)
        return inner

    return _INCLUDE.sub(repl, text), inlined


def _unescape(body: str) -> str:
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
    return re.sub(r"\\(.)", lambda m: simple.get(m.group(1), m.group(1)), body, flags=re.DOTALL)


def embedded_strings(text: str) -> list[tuple[str, int]]:
    """Kernel strings in a host file: adjacent string literals joined (C++ raw strings
    too), kept when they hold a ``__kernel``. Returns (device code, line) pairs."""
    pattern = re.compile(
        r'R"([^()\\ \n]{0,16})\((.*?)(?:\)\1"|\Z)'  # raw string (unterminated: to the end)
        r'|"((?:\\.|[^"\\\n])*)"'  # ordinary string
        r"|//[^\n]*|/\*.*?(?:\*/|\Z)"  # comments (skipped)
        r"|'(?:\\.|[^'\\\n])*'",  # char literal (skipped)
        re.DOTALL,
    )
    groups: list[tuple[list[str], int]] = []
    last_end = -1
    line, counted = 1, 0  # the line at offset ``counted``, counted as the scan goes
    for m in pattern.finditer(text):
        if m.group(0).startswith(("//", "/*", "'")):
            continue
        piece = m.group(2) if m.group(2) is not None else _unescape(m.group(3) or "")
        between = text[last_end : m.start()] if last_end >= 0 else None
        if between is not None and not blank_comments_and_strings(between).strip():
            groups[-1][0].append(piece)
        else:
            line += text.count("\n", counted, m.start())
            counted = m.start()
            groups.append(([piece], line))
        last_end = m.end()
    found = []
    for pieces, line in groups:
        code = "".join(pieces)
        if _KERNEL_MARK.search(code) and "(" in code and "{" in code:
            found.append((code, line))
    return found


def _split(code: str) -> tuple[list[_Chunk], int | None]:
    """Top-level chunks: preprocessor lines, function definitions, other declarations;
    and the offset of a ``{`` never closed (the last chunk runs to the end), or None."""
    blank = blank_comments_and_strings(code)
    chunks: list[_Chunk] = []
    i, n = 0, len(code)
    start = None
    depth = paren = 0
    opened = 0
    body_is_function = False
    newlines = [m.start() for m in re.finditer("\n", code)]

    def line_of(offset: int) -> int:
        return bisect.bisect_left(newlines, offset) + 1

    def emit(end: int) -> None:
        nonlocal start, body_is_function
        assert start is not None
        text = code[start:end].strip()
        if text:
            chunks.append(_decl_chunk(text, blank[start:end], line_of(start)))
        start = None
        body_is_function = False

    while i < n:
        c = blank[i]
        if start is None:
            if c.isspace() or c == ";":
                i += 1
                continue
            if c == "#":
                j = i
                while True:
                    e = blank.find("\n", j)
                    e = n if e < 0 else e
                    if blank[j:e].rstrip().endswith("\\") and e < n:
                        j = e + 1
                        continue
                    break
                chunks.append(_pp_chunk(code[i:e], blank[i:e], line_of(i)))
                i = e
                continue
            start = i
        if c == "(":
            paren += 1
        elif c == ")":
            paren = max(paren - 1, 0)
        elif c == "{":
            if depth == 0:
                opened = i
                if paren == 0:
                    before = blank[start:i].rstrip()
                    body_is_function = before.endswith(")")
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0 and paren == 0 and body_is_function:
                emit(i + 1)
        elif c == ";" and depth == 0 and paren == 0:
            emit(i + 1)
        i += 1
    unclosed = opened if depth > 0 else None
    if start is not None:
        emit(n)
    return chunks, unclosed


def _pp_chunk(text: str, blank: str, line: int) -> _Chunk:
    m = _PP_NAME.match(blank.strip())
    directive = m.group(1) if m else ""
    if directive == "define" and m and m.group(2):
        name = m.group(2)
        rest = blank.strip()[m.end() :]
        return _Chunk(text, "pp-define", {name}, identifiers(rest) - {name}, line, name)
    if directive in _CONDITIONAL:
        return _Chunk(text, "pp-cond", set(), set(), line)
    uses = identifiers(blank) if directive == "undef" else set()
    return _Chunk(text, "pp-other", set(), uses, line)


def _decl_chunk(text: str, blank: str, line: int) -> _Chunk:
    flat = blank.strip()
    uses = identifiers(flat) - (KEYWORDS | PREPROCESSOR_WORDS)
    head = flat.split("{", 1)[0]
    if flat.endswith("}") and "(" in head:
        before_paren = head.split("(", 1)[0]
        # __attribute__((...)) may come first; the name is the last identifier before
        # the parameter list
        names = IDENT.findall(re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", head).split("(")[0])
        name = names[-1] if names else None
        words = set(IDENT.findall(before_paren)) | set(IDENT.findall(head))
        kind = "kernel" if {"__kernel", "kernel"} & words else "function"
        defines = {name} if name else set()
        return _Chunk(text, kind, defines, uses - defines, line, name)
    defines: set[str] = set()
    depth0 = _outside_braces(flat)
    tag = re.match(r"(?:typedef\s+)?(?:struct|union|enum)\s+(\w+)", flat)
    if tag:
        defines.add(tag.group(1))
    if re.match(r"(?:typedef\s+)?enum\b", flat) and "{" in flat:
        body = flat[flat.index("{") + 1 : flat.rfind("}")]
        defines.update(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)", body))
    if flat.startswith("typedef"):
        found = IDENT.findall(depth0.rstrip(";"))
        if found:
            defines.add(found[-1])
    else:
        top = re.sub(r"\([^()]*\)", "()", depth0)
        for part in top.rstrip(";").split(","):
            part = part.split("=", 1)[0].split("[", 1)[0]
            found = IDENT.findall(part.replace("()", " "))
            if found:
                defines.add(found[-1])
    defines -= KEYWORDS | PREPROCESSOR_WORDS
    return _Chunk(text, "decl", defines, uses - defines, line, None)


def _outside_braces(text: str) -> str:
    """``text`` with each ``{...}`` block a space, nested ones included; a ``{`` never
    closed hides the rest, a ``}`` never opened is dropped."""
    parts: list[str] = []
    depth = 0
    last = 0
    for m in _BRACE.finditer(text):
        if depth == 0:
            parts.append(text[last : m.start()])
        if m.group() == "{":
            if depth == 0:
                parts.append(" ")
            depth += 1
        elif depth > 0:
            depth -= 1
        last = m.end()
    if depth == 0:
        parts.append(text[last:])
    return "".join(parts)


def _unclosed_warning(code: str, at: int, last: _Chunk, file: str, offset: int | None) -> str:
    """The one-line warning for the ``{`` at ``at`` that is never closed (in ``last``,
    the chunk that runs to the end), naming the kernel whose body it opens; its line
    (plus ``offset``) unless ``offset`` is None."""
    where = file if offset is None else f"{file}:{code.count(chr(10), 0, at) + 1 + offset}"
    head = blank_comments_and_strings(last.text).split("{", 1)[0]
    if _KERNEL_MARK.search(head) and "(" in head:
        names = IDENT.findall(head.split("(", 1)[0])
        if names:
            return f"{where}: kernel {names[-1]}{_SKIPPED_UNCLOSED}"
    return f"{where}: '{{' never closed; nothing after it is read as a kernel"


_SKIPPED_UNCLOSED = " skipped: its '{' is never closed"


_OBJECT_MACRO = re.compile(r"#\s*define\s+([A-Za-z_]\w*)\b(?!\()(.*)", re.S)


def _mark_macro_kernels(chunks: list[_Chunk]) -> None:
    """Functions qualified by a macro that stands for ``__kernel`` (hashcat's
    ``#define KERNEL_FQ __kernel``, then ``KERNEL_FQ void m00000_mxx(...)``) are kernels
    too; a macro naming such a macro counts as well."""
    bodies = {}
    for chunk in chunks:
        m = _OBJECT_MACRO.match(blank_comments_and_strings(chunk.text).strip())
        if chunk.kind == "pp-define" and m:
            bodies.setdefault(m.group(1), set()).update(IDENT.findall(m.group(2)))
    qualifiers: set[str] = set()
    marks = {"__kernel", "kernel"}
    for _ in range(4):
        more = {name for name, words in bodies.items() if words & (marks | qualifiers)}
        if more <= qualifiers:
            break
        qualifiers |= more
    if not qualifiers:
        return
    for chunk in chunks:
        if chunk.kind != "function":
            continue
        head = blank_comments_and_strings(chunk.text).split("{", 1)[0].split("(", 1)[0]
        if set(IDENT.findall(head)) & qualifiers:
            chunk.kind = "kernel"


def split_kernels(
    code: str,
    file: str,
    origin: str,
    line_offset: int = 0,
    warnings: list[str] | None = None,
    warning_offset: int | None = 0,
) -> list[Candidate]:
    """One candidate per ``__kernel`` function of ``code``, with the chunks it needs; a
    ``{`` never closed adds a line to ``warnings`` when given (with its line number plus
    ``warning_offset``, unless that is None)."""
    chunks, unclosed = _split(code)
    _mark_macro_kernels(chunks)
    if unclosed is not None and warnings is not None and chunks:
        warnings.append(_unclosed_warning(code, unclosed, chunks[-1], file, warning_offset))
    providers: dict[str, list[int]] = {}
    for index, chunk in enumerate(chunks):
        for name in chunk.defines:
            providers.setdefault(name, []).append(index)
    # every candidate takes the conditionals, and the other directives it may need
    conditionals = [j for j, c in enumerate(chunks) if c.kind == "pp-cond"]
    directives_of = [_conditional_lines(c) for c in chunks]
    groups = _conditional_groups(directives_of)
    chunk_of = {d[0]: j for j, found in enumerate(directives_of) for d in found}
    # every candidate takes the conditional lines: a chunk whose directives' groups lie
    # wholly in them needs no check
    checked = [
        any(
            chunks[chunk_of[other]].kind != "pp-cond"
            for d in found
            for other in groups.get(d[0], (d[0],))
        )
        for found in directives_of
    ]
    directives = [(j, c.uses) for j, c in enumerate(chunks) if c.kind == "pp-other"]
    candidates = []
    # the chunk holding a '{' never closed runs to the end of the text: no kernel, even
    # when the text happens to end in a '}' that closes an inner block
    cut = len(chunks) - 1 if unclosed is not None else None
    for index, chunk in enumerate(chunks):
        if chunk.kind != "kernel" or not chunk.name or index == cut:
            continue
        keep = {index}
        todo = list(chunk.uses)
        seen: set[str] = set()
        while todo:
            ident = todo.pop()
            if ident in seen:
                continue
            seen.add(ident)
            for j in providers.get(ident, ()):
                if j not in keep and (chunks[j].kind != "kernel" or j < index):
                    keep.add(j)
                    todo.extend(chunks[j].uses)
        keep.update(conditionals)
        keep.update(j for j, uses in directives if not uses or uses & seen)
        parts = [
            _without(chunks[j].text, directives_of[j], groups, chunk_of, keep)
            if checked[j]
            else chunks[j].text
            for j in sorted(keep)
        ]
        candidates.append(
            Candidate(chunk.name, "\n".join(parts) + "\n", file, origin, chunk.line + line_offset)
        )
    return candidates


_DIRECTIVE_LINE = re.compile(r"^[ \t]*#[ \t]*(\w+)(?:[^\n]*\\\n)*[^\n]*\n?", re.MULTILINE)


_Directive = tuple[int, str, int, int]  # line in the text split, directive, start, end


def _conditional_lines(chunk: _Chunk) -> list[_Directive]:
    """The conditional directives in ``chunk``, each with its line and its span."""
    if "#" not in chunk.text:
        return []
    blank = blank_comments_and_strings(chunk.text)
    return [
        (chunk.line + blank.count("\n", 0, m.start()), m.group(1), m.start(), m.end())
        for m in _DIRECTIVE_LINE.finditer(blank)
        if m.group(1) in _CONDITIONAL
    ]


def _conditional_groups(directives: list[list[_Directive]]) -> dict[int, tuple[int, ...]]:
    """For the line of each conditional directive, the lines of its whole group: the
    ``#if``, its ``#elif``/``#else`` and its ``#endif``, matched over the whole text."""
    groups: dict[int, tuple[int, ...]] = {}
    stack: list[list[int]] = []
    for line, word, _, _ in sorted(d for chunk in directives for d in chunk):
        if word.startswith("if"):
            stack.append([line])
        elif stack:
            stack[-1].append(line)
            if word == "endif":
                group = tuple(stack.pop())
                groups.update(dict.fromkeys(group, group))
    for open_group in stack:  # an #if the text never closes stays as written
        group = tuple(open_group)
        groups.update(dict.fromkeys(group, group))
    return groups


def _without(
    text: str,
    directives: list[_Directive],
    groups: dict[int, tuple[int, ...]],
    chunk_of: dict[int, int],
    keep: set[int],
) -> str:
    """A chunk's ``text`` without the conditional directives whose group is not wholly in
    the candidate (``keep``, chunk indices): a kernel written ``#if X __kernel #else
    __kernel __attribute__((...)) #endif void k()`` holds its ``#else`` and ``#endif``,
    while its ``#if`` is a line of its own that every kernel of the file takes, and never
    closes in the others."""
    for line, _, start, end in reversed(directives):
        if not all(chunk_of[other] in keep for other in groups.get(line, (line,))):
            text = text[:start] + text[end:]
    return text


def _raw_wrapped(text: str) -> bool:
    """Whether the code of ``text`` (after comments and blanks) opens a C++ raw string;
    scanned once, not by a regex that backtracks over long runs of blanks."""
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return False
            i = end + 2
        else:
            break
    return _RAW_OPEN.match(text, i) is not None


def scrape_text(
    text: str, file: str, path: Path, root: Path, resolver: Resolver | None = None
) -> ScrapeResult:
    """Candidates from the text of one file (``path`` locates its local includes;
    ``resolver``, when given, finds them anywhere in the source's tree)."""
    result = ScrapeResult()
    suffix = path.suffix.lower()
    if suffix in DEVICE_SUFFIXES:
        blocks = embedded_strings(text) if _raw_wrapped(text) else [(text, 1)]
        origin = "cl"
    else:
        blocks = embedded_strings(text)
        origin = "embedded"
    including = file if resolver is not None else None
    unclosed = False  # a kernel skipped for its '{' never closed has its own warning
    for code, line in blocks:
        refused: list[tuple[str | None, str]] = []
        inlined, includes = inline_includes(
            code, path.parent, root, (), 0, resolver, including, refused
        )
        for header, name in dict.fromkeys(refused):
            via = f" (in {header})" if header else ""
            result.warnings.append(
                f'{file}: #include "{name}"{via} refused: outside the source tree'
            )
        # with headers inlined, a line of the text is not a line of the file
        where = None if includes else line - 1
        warned = len(result.warnings)
        for cand in split_kernels(inlined, file, origin, line - 1, result.warnings, where):
            result.candidates.append(
                Candidate(cand.name, cand.source, file, origin, cand.line, tuple(includes))
            )
        unclosed = unclosed or any(w.endswith(_SKIPPED_UNCLOSED) for w in result.warnings[warned:])
    if suffix in DEVICE_SUFFIXES and not result.candidates and not unclosed:
        result.warnings.append(f"{file}: no __kernel functions found")
    return result


def candidate_keys(candidates: list[Candidate]) -> list[str]:
    """``file::name``, with ``#2``, ``#3``... for later kernels of the same name in a file."""
    seen: Counter[tuple[str, str]] = Counter()
    keys = []
    for cand in candidates:
        seen[(cand.file, cand.name)] += 1
        count = seen[(cand.file, cand.name)]
        keys.append(f"{cand.file}::{cand.name}" + (f"#{count}" if count > 1 else ""))
    return keys
