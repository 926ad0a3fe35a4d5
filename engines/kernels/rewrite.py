"""The code rewriter (CLgen section 4.1): normalises a kernel without changing what it does.

1. clang's preprocessor strips comments, expands and drops macros and conditional
   compilation (OpenCL's own macros, such as ``CLK_LOCAL_MEM_FENCE``, stay as written);
2. variables are renamed a, b, c, ..., aa, ab... and functions A, B, C... in order of
   appearance; only names the kernel declares itself are renamed (clang's AST says
   which), so built-ins, types and struct fields keep theirs;
3. one formatting style: K&R braces, four-space indent, one statement per line,
   spaces around binary operators, ``type* name`` pointers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engines.kernels.compile import clang_path, opencl_version_define, run_clang
from engines.kernels.ctext import KEYWORDS, TYPE_WORDS

_TOKEN = re.compile(
    r"(?P<ws>\s+)"
    r"|(?P<pp>^[ \t]*#[^\n]*)"
    r"|(?P<num>0[xX][0-9a-fA-F.]+(?:[pP][-+]?\d+)?\w*|(?:\d+\.?\d*|\.\d+)(?:[eEpP][+-]?\d+)?[a-zA-Z]*)"
    r"|(?P<id>[A-Za-z_]\w*)"
    r'|(?P<str>"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\')'
    r"|(?P<op>>>=|<<=|\.\.\.|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|##|[^\s\w])",
    re.MULTILINE,
)
_VECTOR_TYPE = re.compile(r"^(?:u?char|u?short|u?int|u?long|float|double|half)(?:2|3|4|8|16)$")
_CONTROL = frozenset({"if", "for", "while", "switch", "return", "sizeof", "case", "do", "else"})
_DECL_KINDS = {"FunctionDecl": "function", "VarDecl": "variable", "ParmVarDecl": "variable"}


class RewriteError(Exception):
    """clang could not preprocess or parse the kernel."""


@dataclass(frozen=True)
class Rewritten:
    source: str
    renames: dict[str, str]
    kernel_names: dict[str, str]  # original kernel name -> new name


def _clang(args: list[str], source: str) -> str:
    proc = run_clang(
        [clang_path(), "-x", "cl", "-cl-std=CL1.2", opencl_version_define("CL1.2"), *args, "-"],
        source,
    )
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr)
        raise RewriteError(first.replace("<stdin>", "kernel.cl").strip()[:300])
    return proc.stdout


def preprocess(source: str) -> str:
    """Comments, macros and conditional compilation gone; OpenCL's macros untouched."""
    return _clang(["-cl-no-stdinc", "-Dinline=inline", "-E", "-P"], source)


def declared_names(source: str) -> tuple[list[str], list[str], set[str]]:
    """Names ``source`` itself declares: functions, variables, and kernel functions."""
    dump = _clang(
        [
            "-Xclang",
            "-finclude-default-header",
            "-Xclang",
            "-fdeclare-opencl-builtins",
            "-fsyntax-only",
            "-w",
            "-Xclang",
            "-ast-dump=json",
        ],
        source,
    )
    tree = json.loads(dump)
    functions: list[str] = []
    variables: list[str] = []
    kernels: set[str] = set()
    in_main = False

    def walk(node: dict[str, Any]) -> None:
        kind = _DECL_KINDS.get(node.get("kind", ""))
        name = node.get("name")
        if kind and name and not node.get("isImplicit"):
            (functions if kind == "function" else variables).append(name)
            if kind == "function" and any(
                a.get("kind") == "OpenCLKernelAttr" for a in node.get("inner", [])
            ):
                kernels.add(name)
        for child in node.get("inner", []):
            walk(child)

    for node in tree.get("inner", []):
        loc = node.get("loc", {})
        file = (loc.get("expansionLoc") or loc).get("file")
        if file is not None:
            in_main = file == "<stdin>"
        if in_main:
            walk(node)
    return functions, variables, kernels


def tokens(source: str) -> Iterator[tuple[str, str]]:
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "op"
        if kind != "ws":
            yield kind, m.group(0)


def _names(alphabet: str) -> Iterator[str]:
    for size in itertools.count(1):
        for combo in itertools.product(alphabet, repeat=size):
            yield "".join(combo)


def rename(toks: list[tuple[str, str]], functions: set[str], variables: set[str]) -> dict[str, str]:
    """Old -> new names, in order of first appearance; never a name already in use."""
    taken = {text for kind, text in toks if kind == "id"} - functions - variables
    taken |= KEYWORDS
    fresh_functions = (n for n in _names(string.ascii_uppercase) if n not in taken)
    fresh_variables = (n for n in _names(string.ascii_lowercase) if n not in taken)
    mapping: dict[str, str] = {}
    for index, (_kind, text) in enumerate(toks):
        if _renamable(toks, index) and text not in mapping:
            if text in functions:
                mapping[text] = next(fresh_functions)
            elif text in variables:
                mapping[text] = next(fresh_variables)
    return mapping


def _renamable(toks: list[tuple[str, str]], index: int) -> bool:
    """An identifier that may name a variable or function: not a member after ``.`` or
    ``->``, and not a field declared inside a struct or union body."""
    kind, _text = toks[index]
    if kind != "id" or (index and toks[index - 1][1] in (".", "->")):
        return False
    depth = 0
    for back in range(index - 1, -1, -1):
        text = toks[back][1]
        if text == "}":
            depth += 1
        elif text == "{":
            if depth == 0:
                before = [t for _, t in toks[max(back - 2, 0) : back]]
                return not ({"struct", "union"} & set(before))
            depth -= 1
    return True


def _is_type(text: str, types: set[str]) -> bool:
    return text in TYPE_WORDS or text in types or bool(_VECTOR_TYPE.match(text))


def format_tokens(toks: list[tuple[str, str]], types: set[str]) -> str:
    """Lay the tokens out in the one house style."""
    out: list[str] = []
    indent = paren = 0
    braces: list[str] = []  # "block" or "init" for each open brace
    line_start = True
    prev_kind, prev, prev_unary = "", "", False

    def newline() -> None:
        nonlocal line_start
        if not line_start:
            out.append("\n")
        line_start = True

    def emit(text: str, space_before: bool) -> None:
        nonlocal line_start
        if line_start:
            out.append("    " * indent)
        elif space_before:
            out.append(" ")
        out.append(text)
        line_start = False

    for index, (kind, text) in enumerate(toks):
        nxt = toks[index + 1][1] if index + 1 < len(toks) else ""
        operand_before = (
            prev_kind in ("id", "num", "str") and prev not in KEYWORDS and not _is_type(prev, types)
        ) or prev in (")", "]")
        after_open = prev in ("(", "[") or (prev == "{" and bool(braces) and braces[-1] == "init")
        unary = False
        if kind == "pp":
            newline()
            out.append(text.strip() + "\n")
        elif text == "{":
            if prev in ("=", ",", "{", "(", "return") or (braces and braces[-1] == "init"):
                braces.append("init")
                emit("{", not after_open)
            else:
                braces.append("block")
                emit("{", True)
                indent += 1
                newline()
        elif text == "}":
            if (braces.pop() if braces else "block") == "init":
                emit("}", False)
            else:
                indent = max(indent - 1, 0)
                newline()
                emit("}", False)
                if nxt not in ("else", ";", ",", "while") and not _typedef_tail(toks, index):
                    newline()
        elif text == ";":
            emit(";", False)
            if paren == 0:
                newline()
        elif text == ",":
            emit(",", False)
        elif text in ("(", "["):
            space = prev in _CONTROL or (
                prev_kind == "op"
                and not prev_unary
                and prev not in ("(", "[", ")", "]", ".", "->", "++", "--")
            )
            emit(text, space and not after_open)
            paren += text == "("
        elif text in (")", "]"):
            emit(text, False)
            paren = max(paren - (text == ")"), 0)
        elif text in (".", "->"):
            emit(text, False)
        elif text in ("++", "--"):
            if operand_before:
                emit(text, False)
            else:
                emit(text, not (prev_unary or after_open))
                unary = True
        elif text in ("!", "~") or (text in ("*", "&", "-", "+") and not operand_before):
            if text == "*" and _is_type(prev, types):
                emit("*", False)  # a pointer declarator: float* a
            else:
                emit(text, not (prev_unary or after_open))
                unary = True
        elif text == ":" and _in_case(toks, index):
            emit(":", False)
            newline()
        elif kind == "op":
            emit(text, True)
        else:
            emit(text, not (prev_unary or after_open or prev in (".", "->")))
        prev_kind, prev, prev_unary = kind, text, unary
    newline()
    return "".join(out).strip() + "\n"


def _in_case(toks: list[tuple[str, str]], index: int) -> bool:
    for back in range(index - 1, max(index - 8, -1), -1):
        text = toks[back][1]
        if text in ("case", "default"):
            return True
        if text in (";", "{", "}", "?"):
            return False
    return False


def _typedef_tail(toks: list[tuple[str, str]], index: int) -> bool:
    """Is this ``}`` closing a struct body whose declarators follow (``} name;``)?"""
    depth = 0
    for back in range(index, -1, -1):
        text = toks[back][1]
        if text == "}":
            depth += 1
        elif text == "{":
            depth -= 1
            if depth == 0:
                before = [t for _, t in toks[max(back - 3, 0) : back]]
                return bool({"struct", "union", "enum"} & set(before))
    return False


def rewrite(source: str) -> Rewritten:
    """The normalised form of a kernel source that compiles (raises RewriteError)."""
    flat = preprocess(source)
    functions, variables, kernels = declared_names(flat)
    toks = list(tokens(flat))
    mapping = rename(toks, set(functions), set(variables) - set(functions))
    types = {t for k, t in toks if k == "id" and t not in mapping} - KEYWORDS
    types = {t for t in types if _declared_type(flat, t)}
    renamed: list[tuple[str, str]] = []
    for index, (kind, text) in enumerate(toks):
        if _renamable(toks, index):
            text = mapping.get(text, text)
        renamed.append((kind, text))
    return Rewritten(
        format_tokens(renamed, types),
        mapping,
        {k: mapping.get(k, k) for k in kernels},
    )


def _declared_type(flat: str, name: str) -> bool:
    return bool(re.search(rf"\btypedef\b[^;]*\b{re.escape(name)}\s*;", flat))


def source_hash(text: str) -> str:
    """The dedup key: SHA-256 of the text with all whitespace runs collapsed."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8", "surrogatepass")).hexdigest()
