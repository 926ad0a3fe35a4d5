"""What a kernel isolated from its host program lacks, and the named reason a kernel is
refused.

When the plain build fails, the kernel is built again with, in order: the ``-D``
options its host passes (only names the kernel mentions and does not define itself),
the shim's entries it uses, and, round by round, a typed guess for each name the
compiler still reports: ``use of undeclared identifier 'X'`` gives ``#define X 16``,
``unknown type name 'T'`` gives ``typedef float T;`` (``floatN`` for a name ending in a
vector width, ``int`` for an index-like name), and a guessed scalar type used as a
vector moves to the next width. A missing header's ``#include`` line is dropped so the
same guesses can stand in for it. Before a type is guessed, its definition is looked
for in the kernel's source tree (:mod:`engines.kernels.typesearch`: a struct the host
prepends, an alias in a header); a type the kernel uses as a struct that is found
nowhere is not guessed, and the kernel is refused with a line naming it. Rounds are
bounded; a name the kernel declares itself, uses as a struct field or calls as a
function is never guessed, so a guess can only give a value to a name that had none.
Every assumption is recorded with its origin so an annotator sees what was assumed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engines.kernels.ctext import KEYWORDS, TYPE_WORDS, blank_comments_and_strings, identifiers
from engines.kernels.hostflags import HostDefine
from engines.kernels.shim import SHIM
from engines.kernels.typesearch import TypeDefinition, struct_use

MAX_ROUNDS = 6
MAX_GUESSES = 24
GUESSED_INT = "16"

_UNDECLARED = re.compile(r"use of undeclared identifier '(\w+)'")
_UNKNOWN_TYPE = re.compile(r"unknown type name '(\w+)'")
# clang names the type with its qualifiers and address space: 'const __global T' (aka
# 'const __global float')
_QUALIFIERS = r"(?:(?:const|volatile|restrict|__private|__global|__local|__constant|__generic) )*"
_NOT_VECTOR = re.compile(
    r"(?:member reference base type|vector component access on|subscripted value is not"
    rf"|cannot be used as|invalid operands)[^\n]*?'{_QUALIFIERS}(\w+)' \(aka '{_QUALIFIERS}(\w+)'\)"
)
_MISSING_HEADER = re.compile(r"'([^'\n]+)' file not found")
_INCLUDE_LINE = r'^[ \t]*#[ \t]*include[ \t]*["<]{}[">][^\n]*$'
_DEFINED = re.compile(
    r"#\s*define\s+(\w+)|\btypedef\b[^;{]*?(\w+)\s*;|\b(?:struct|enum|union)\s+(\w+)"
)
_STRUCT_NOT_FOUND = re.compile(r"type \w+ is used as a struct \(")
_VECTOR_SUFFIX = re.compile(r"(2|3|4|8|16)$")
_INDEX_LIKE = re.compile(r"int|idx|index|size|count|dim", re.IGNORECASE)
_VECTOR_TYPE = re.compile(r"^(?:u?char|u?short|u?int|u?long|float|double|half)(?:2|3|4|8|16)$")
_NOT_A_TYPE = frozenset({"return", "case", "else", "do", "goto", "sizeof", "typedef"})

# The named reasons a kernel is refused, in the order a message is tested for them.
REFUSAL_CLASSES = (
    "missing-header",
    "compiler-failure",
    "missing-function",
    "unknown-type",
    "undeclared-identifier",
    "syntax",
    "semantic",
    "lowering",
    "too-few-instructions",
)


@dataclass(frozen=True)
class Assumption:
    """One line added before a kernel so it builds: what, why, and where it came from."""

    name: str
    line: str
    origin: str  # "host" (a -D of the host program), "shim", "tree", "guess", "no-header"
    file: str | None = None  # where a definition found in the tree ("tree") came from

    def as_dict(self) -> dict[str, str]:
        found = {"name": self.name, "line": self.line, "origin": self.origin}
        if self.file is not None:
            found["file"] = self.file
        return found


@dataclass
class Resolution:
    ok: bool
    source: str
    message: str
    assumptions: list[Assumption] = field(default_factory=list)
    builds: int = 0
    missing_type: str | None = None  # a struct type the kernel uses, found nowhere

    def names(self) -> list[str]:
        return [a.name for a in self.assumptions if a.origin != "no-header"]

    def provenance(self) -> list[dict[str, str]]:
        return [a.as_dict() for a in self.assumptions]


def classify_refusal(verdict: str | None, message: str | None, source: str = "") -> str:
    """The named reason for a refused kernel, from its verdict and compiler message (and
    its source: an undeclared name the kernel calls is a missing function)."""
    if verdict == "too-few-instructions":
        return "too-few-instructions"
    text = message or ""
    if _STRUCT_NOT_FOUND.match(text):
        return "unknown-type"
    if _MISSING_HEADER.search(text):
        return "missing-header"
    if text.startswith("compiler ") or "compiler crash" in text or "compiler timeout" in text:
        return "compiler-failure"
    if "implicit declaration of function" in text or "undeclared function" in text:
        return "missing-function"
    if source and any(
        re.search(rf"\b{re.escape(name)}\s*\(", source) for name in _UNDECLARED.findall(text)
    ):
        return "missing-function"
    if _UNKNOWN_TYPE.search(text):
        return "unknown-type"
    if _UNDECLARED.search(text):
        return "undeclared-identifier"
    if text.startswith(("clang:", "llvmlite:")):
        return "lowering"
    if re.search(r":\s*expected\b|unterminated|extraneous|invalid token", text):
        return "syntax"
    return "semantic"


def _uses(source: str) -> tuple[set[str], set[str]]:
    """Identifiers the kernel mentions, and those it defines (macros, typedefs, tags)."""
    code = blank_comments_and_strings(source, keep_strings=False)
    defined = {n for m in _DEFINED.finditer(code) for n in m.groups() if n}
    return identifiers(code), defined


def _declared(code: str, name: str) -> bool:
    """``name`` declared by the kernel, used as a member, or called: never guess it."""
    n = re.escape(name)
    if re.search(rf"(?:\.|->)\s*{n}\b|\b{n}\s*\(", code):
        return True
    for m in re.finditer(rf"\b([A-Za-z_]\w*)(\s*\*[\s*]*|\s+){n}\s*[=;,\[)]", code):
        word, between = m.group(1), m.group(2)
        if word in _NOT_A_TYPE or (word in KEYWORDS and word not in TYPE_WORDS | {"const"}):
            continue
        # "T * name)" is a declaration only when T is a type: "A * name)" multiplies
        if "*" not in between or word in TYPE_WORDS or _VECTOR_TYPE.match(word):
            return True
    return False


def _type_candidates(name: str) -> list[str]:
    m = _VECTOR_SUFFIX.search(name)
    if m and len(name) > len(m.group(1)):
        return [f"float{m.group(1)}", "float"]
    if _INDEX_LIKE.search(name):
        return ["int", "float"]
    return ["float", "float4", "float2"]


def _line(name: str, type_name: str | None) -> str:
    return f"typedef {type_name} {name};" if type_name else f"#define {name} {GUESSED_INT}"


def _in_order(assumptions: Iterable[Assumption]) -> list[Assumption]:
    """The lines in the order they must come: macros and guessed types first, then the
    definitions found in the tree, the last found first (a definition found in a later
    round is one an earlier one needed: ``dim_t`` for ``KParam``'s fields)."""
    found = list(assumptions)
    tree = [a for a in found if a.origin == "tree"]
    return [*(a for a in found if a.origin != "tree"), *reversed(tree)]


def resolve_build(
    build: Callable[[str], tuple[bool, str]],
    source: str,
    first_message: str,
    host: dict[str, HostDefine] | None = None,
    max_rounds: int = MAX_ROUNDS,
    lookup: Callable[[str], TypeDefinition | None] | None = None,
) -> Resolution:
    """Build ``source`` again with what it lacks; ``first_message`` is the plain build's
    failure. Returns the source that built (assumptions prepended) or the last message.

    ``lookup`` finds an unknown type's definition in the kernel's source tree; it is
    tried before a guess. A type the kernel uses as a struct that it does not find is
    never guessed: the build stops there, and the message's first line says so
    (:attr:`Resolution.missing_type`)."""
    used, defined = _uses(source)
    code = blank_comments_and_strings(source, keep_strings=False)
    body = source
    chosen: dict[str, Assumption] = {}
    type_tries: dict[str, list[str]] = {}
    for d in (host or {}).values():
        if d.name in used and d.name not in defined and d.value is not None:
            chosen[d.name] = Assumption(d.name, f"#define {d.name} {d.value}", "host")
    for name in sorted(used & SHIM.keys()):
        if name not in defined and name not in chosen:
            chosen[name] = Assumption(name, SHIM[name], "shim")
    message = first_message
    builds = 0
    dropped: list[Assumption] = []
    changed = bool(chosen)  # the host's options and the shim, not tried yet
    for _ in range(max_rounds):
        for header in dict.fromkeys(_MISSING_HEADER.findall(message)):
            pattern = re.compile(_INCLUDE_LINE.format(re.escape(header)), re.MULTILINE)
            if pattern.search(body):
                body = pattern.sub(f"/* include {header}: not found */", body)
                dropped.append(Assumption(header, f'#include "{header}" dropped', "no-header"))
                changed = True
        for name in dict.fromkeys(_UNKNOWN_TYPE.findall(message)):
            if name in chosen or name in KEYWORDS or _declared(code, name):
                continue
            found = lookup(name) if lookup is not None else None
            if found is not None:
                chosen[name] = Assumption(name, found.text, "tree", found.file)
                changed = True
                continue
            use = struct_use(code, name)
            if use is not None:
                why = (
                    f"type {name} is used as a struct ({use}) and no definition of it was"
                    " found in the source tree; not guessed"
                )
                return Resolution(
                    False,
                    source,
                    f"{why}\n{message}",
                    [*chosen.values(), *dropped],
                    builds,
                    missing_type=why,
                )
            type_tries[name] = _type_candidates(name)
            chosen[name] = Assumption(name, _line(name, type_tries[name].pop(0)), "guess")
            changed = True
        for name in dict.fromkeys(_UNDECLARED.findall(message)):
            if name in chosen or name in KEYWORDS or _declared(code, name):
                continue
            chosen[name] = Assumption(name, _line(name, None), "guess")
            changed = True
        # one step per round, however many errors name the type
        for name in dict.fromkeys(name for name, _aka in _NOT_VECTOR.findall(message)):
            tries = type_tries.get(name)
            if tries and chosen[name].origin == "guess":
                chosen[name] = Assumption(name, _line(name, tries.pop(0)), "guess")
                changed = True
        if not changed or sum(a.origin == "guess" for a in chosen.values()) > MAX_GUESSES:
            break
        changed = False
        candidate = "".join(a.line + "\n" for a in _in_order(chosen.values())) + body
        ok, message = build(candidate)
        builds += 1
        if ok:
            return Resolution(True, candidate, "", [*_in_order(chosen.values()), *dropped], builds)
    return Resolution(False, source, message, [*chosen.values(), *dropped], builds)
