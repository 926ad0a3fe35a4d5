"""A lexer for LLVM textual IR as LLVM prints it, and the module's top-level layout.

LLVM's printer writes one top-level entity per line (globals, declarations, type and
metadata definitions, attribute groups) except function definitions, which run from
``define ... {`` to a line holding ``}``. Inside a body, block labels start at column 0,
instructions are indented by two spaces and their continuation lines (switch cases,
``to label ... unwind label ...``, landingpad clauses) by more. The structural hash and
the statistics both read the module through this lexer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_NAME = r'(?:"[^"]*"|[-\w$.\\]+)'
# One alternation, no groups, so ``findall`` returns plain strings.
_TOKEN = re.compile(
    r";.*"  # comment (dropped by callers)
    r'|c?"[^"]*"'  # string constant or quoted name part
    rf"|[@%$!]{_NAME}?"  # global, local or type, comdat, metadata (bare "!" before "{")
    r"|#\w+"  # attribute group reference or debug record
    r"|-?\d+\.\d+e[-+]\d+"  # decimal floating point constant as LLVM prints it
    r"|[-\w.$]+"  # keyword, type, integer, hex float, identifier-like word
    r"|\S"  # punctuation
)
# The same tokens, each match swallowing the whitespace and comments before it, so that
# ``subn`` counts them without building a list of strings.
_COUNTED = re.compile(
    r"(?:\s|;[^\n]*+)*+"  # possessive: a comment is never given back to the tokens
    r'(?:c?"[^"]*"'
    rf"|[@%$!]{_NAME}?"
    r"|#\w+"
    r"|-?\d+\.\d+e[-+]\d+"
    r"|[-\w.$]+"
    r"|[^\s;])"
)
_LABEL = re.compile(rf"^({_NAME}):")

# Every instruction keyword LLVM prints (LLVM 22); terminators first.
_TERMINATOR_WORDS = """ret br switch indirectbr invoke resume unreachable cleanupret catchret
catchswitch callbr"""
_OTHER_WORDS = """fneg add fadd sub fsub mul fmul udiv sdiv fdiv urem srem frem shl lshr ashr
and or xor alloca load store getelementptr fence cmpxchg atomicrmw trunc zext sext fptrunc
fpext fptoui fptosi uitofp sitofp ptrtoint ptrtoaddr inttoptr bitcast addrspacecast
cleanuppad catchpad icmp fcmp phi call select va_arg extractelement insertelement
shufflevector extractvalue insertvalue landingpad freeze"""
TERMINATORS = frozenset(_TERMINATOR_WORDS.split())
OPCODES = TERMINATORS | frozenset(_OTHER_WORDS.split())
_INSTRUCTION = re.compile(rf"  (?:%{_NAME}\s*=\s*)?(?:(?:tail|musttail|notail)\s+)?([a-z_]+)")


def tokens(line: str) -> list[str]:
    """The tokens of one line, comments included (they start with ``;``)."""
    return _TOKEN.findall(line)


def count_tokens(text: str) -> int:
    """Lexical tokens of a module's text, comments excluded: the corpus token count."""
    # a sentinel token at the end, so that no comment is left without a token after it
    return _COUNTED.subn("", text + "\n.")[1] - 1


@dataclass
class Entity:
    """One top-level piece of a printed module.

    ``kind`` is one of ``header`` (source_filename, target, module asm), ``type``,
    ``comdat``, ``global`` (variable, alias or ifunc definition), ``external`` (a global
    variable declared, not defined), ``define``, ``declare``, ``attributes``,
    ``metadata`` or ``other``; ``name`` is the symbol it defines, if any.
    """

    kind: str
    name: str | None
    lines: list[str] = field(default_factory=list)


def _defined_name(line: str) -> str | None:
    match = re.match(rf"[@%$]{_NAME}", line)
    return match.group(0) if match else None


def _function_name(line: str) -> str | None:
    for token in _TOKEN.findall(line):
        if token[0] == "@":
            return token
    return None


def _global_kind(line: str) -> str:
    """``external`` for a declared global variable, ``global`` for a definition."""
    head = line.split("=", 1)[1] if "=" in line else line
    words = head.split()
    for word in words:
        if word in ("external", "extern_weak"):
            return "external"
        if word in ("global", "constant", "alias", "ifunc"):
            return "global"
    return "global"


def entities(text: str) -> Iterator[Entity]:
    """Split LLVM-printed module text into its top-level entities, in order."""
    body: Entity | None = None
    for line in text.splitlines():
        if body is not None:
            body.lines.append(line)
            if line.startswith("}"):
                yield body
                body = None
            continue
        if not line or line[0] == ";":
            continue
        if line.startswith("define "):
            body = Entity("define", _function_name(line), [line])
            if line.rstrip().endswith("}"):  # a body on one line (hand-written input)
                yield body
                body = None
        elif line.startswith("declare "):
            yield Entity("declare", _function_name(line), [line])
        elif line[0] == "@":
            yield Entity(_global_kind(line), _defined_name(line), [line])
        elif line[0] == "%":
            yield Entity("type", _defined_name(line), [line])
        elif line[0] == "$":
            yield Entity("comdat", _defined_name(line), [line])
        elif line[0] == "!":
            yield Entity("metadata", None, [line])
        elif line.startswith("attributes "):
            yield Entity("attributes", None, [line])
        elif line.startswith(("source_filename", "target ", "module asm")):
            yield Entity("header", None, [line])
        else:
            yield Entity("other", None, [line])
    if body is not None:
        yield body


def label_of(line: str) -> str | None:
    """The block label a body line defines (``7:`` or ``entry:``), as a ``%`` name."""
    if not line or line[0] in " \t}":
        return None
    match = _LABEL.match(line)
    return "%" + match.group(1) if match else None


def opcode_of(line: str) -> str | None:
    """The opcode of a body line that starts an instruction, else None."""
    if not line.startswith("  ") or line[2:3] in (" ", "]", "#", ""):
        return None
    match = _INSTRUCTION.match(line)
    if match is None:
        return None
    return match.group(1) if match.group(1) in OPCODES else None
