"""Function boundaries from tree-sitter, named the way lizard (PyDriller's parser) names them.

:func:`function_spans` parses one file's text and returns every function with a body:
its name, a signature key (``long_name``: two spans with the same key are the same
function), and the lines it covers, 1-based and inclusive. The lines follow lizard: a
function starts on the line of its name (not its return type, annotations or
decorators) and ends on its closing brace, or for Python on its last line of code.

Names follow lizard's conventions so that stored names do not change with the parser:

- Python: enclosing functions joined by dots (``outer.inner``); classes add nothing.
- Java: ``Class::method`` with the innermost enclosing class, ``(anonymous)`` for an
  anonymous class.
- C and C++: enclosing namespaces and classes, then the declarator's own qualified name
  (``ns::Foo<T>::bar``); operators spelled with lizard's tokens (``operator ==``,
  ``operator ( )``, ``operator const char *``).

C and C++ text is rewritten before parsing (:mod:`engines.commits.macros`: macros and a
few gaps of the grammar, same length, same lines). A version of a file is parsed
incrementally from an earlier one with one tree edit per run of changed paragraphs.
tree-sitter and its grammars are imported when a file is first parsed. Where the two
parsers disagree, and why, is listed in docs/mining.md.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Any

from engines.commits.languages import language_of
from engines.commits.macros import rewrite_each


@dataclass(frozen=True)
class Span:
    name: str
    long_name: str
    start: int
    end: int


_GRAMMARS = {"python": "python", "java": "java", "c": "c", "cpp": "cpp"}
_QUERIES = {
    "python": "(function_definition) @fn",
    "java": "[(method_declaration body: (block)) (constructor_declaration)] @fn",
    "c": "(function_definition) @fn",
    "cpp": "(function_definition) @fn",
}
_local = threading.local()

_SPACE = re.compile(r"\s+")
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def grammar_for(path: str) -> str | None:
    """The tree-sitter grammar for a path: C for ``.c``, C++ for the other C-family
    extensions (headers included), else the miner's language, if one is known."""
    language = language_of(path)
    if language == "cpp":
        return "c" if path.lower().endswith(".c") else "cpp"
    return language if language in _GRAMMARS else None


def _tools(grammar: str) -> tuple[Any, Any]:
    """A parser and the function query for ``grammar``, one per thread."""
    cache: dict[str, tuple[Any, Any]] | None = getattr(_local, "tools", None)
    if cache is None:
        cache = _local.tools = {}
    if grammar not in cache:
        import importlib

        import tree_sitter

        module = importlib.import_module(f"tree_sitter_{_GRAMMARS[grammar]}")
        language = tree_sitter.Language(module.language())
        query = tree_sitter.Query(language, _QUERIES[grammar])
        cache[grammar] = (tree_sitter.Parser(language), query)
    return cache[grammar]


@dataclass(frozen=True)
class Parsed:
    """One file's syntax tree, with the text it was parsed from."""

    grammar: str
    source: bytes  # what tree-sitter read (macros rewritten, see engines.commits.macros)
    tree: Any
    text: bytes  # the file as it is
    paragraphs: list[bytes] = field(default_factory=list)  # ``text`` cut at blank lines
    rewritten: list[bytes] = field(default_factory=list)  # ``source`` cut at blank lines


def parse(path: str, source: bytes, previous: Parsed | None = None) -> Parsed | None:
    """Parse ``source`` (the text of ``path``); None when no grammar fits the path.

    ``previous`` (an earlier version of the same file) makes the parse incremental:
    its tree is edited where the two texts differ and tree-sitter re-parses only there.
    """
    grammar = grammar_for(path)
    if grammar is None:
        return None
    parser, _ = _tools(grammar)
    text = source
    paragraphs = text.split(b"\n\n")
    if previous is None or previous.grammar != grammar or not previous.paragraphs:
        rewritten = rewrite_each(grammar, paragraphs)
        source = b"\n\n".join(rewritten)
        return Parsed(grammar, source, parser.parse(source), text, paragraphs, rewritten)
    runs = _changed_runs(previous.paragraphs, paragraphs)
    # only the changed paragraphs are rewritten; the others are the earlier version's
    rewritten = list(previous.rewritten)
    for oi, oj, ni, nj in reversed(runs):
        rewritten[oi:oj] = rewrite_each(grammar, paragraphs[ni:nj])
    source = b"\n\n".join(rewritten)
    old_tree = previous.tree.copy()
    _edit(old_tree, previous, text, paragraphs, runs)
    return Parsed(grammar, source, parser.parse(source, old_tree), text, paragraphs, rewritten)


def _edit(
    tree: Any,
    previous: Parsed,
    text: bytes,
    paragraphs: list[bytes],
    runs: list[tuple[int, int, int, int]],
) -> None:
    """Tell ``tree`` (parsed from ``previous``) that the text is now ``text``: one edit
    per run of changed paragraphs (``runs``, from :func:`_changed_runs`), so that
    tree-sitter re-parses only those runs (one edit from the first difference to the
    last would re-parse everything between)."""
    old = previous.paragraphs
    old_at, new_at = _Positions(old, previous.text), _Positions(paragraphs, text)
    edits = []
    for oi, oj, ni, nj in runs:  # in order: rows counted once
        if oi == len(old) or ni == len(paragraphs):  # at the end: the paragraph before
            oi, ni = oi - 1, ni - 1  # too, so that both runs start on a paragraph
        start, row, _ = old_at[oi]
        new_start, new_row, _ = new_at[ni]
        old_end, old_end_row, old_end_column = old_at[oj]
        new_end, new_end_row, new_end_column = new_at[nj]
        edits.append(
            (
                start,
                old_end,
                start + new_end - new_start,
                (row, 0),
                (old_end_row, old_end_column),
                (row + new_end_row - new_row, new_end_column),
            )
        )
    for edit in reversed(edits):  # last first, so that earlier offsets still hold
        tree.edit(*edit)


class _Positions:
    """Where each paragraph of ``text`` starts (byte, row, column 0; paragraphs are joined
    by blank lines, two bytes and two rows), and at index ``len(paragraphs)`` where the
    text ends. Rows are counted only for the paragraphs asked about: an edit needs a
    handful of the thousands of paragraphs a large file has."""

    def __init__(self, paragraphs: list[bytes], text: bytes) -> None:
        self.paragraphs, self.text = paragraphs, text
        self.bytes = list(accumulate(map(len, paragraphs), initial=0))
        self._offsets = [0]  # offsets whose row is known, ascending, and those rows
        self._rows = [0]

    def __getitem__(self, k: int) -> tuple[int, int, int]:
        if k < len(self.paragraphs):
            offset = self.bytes[k] + 2 * k
            return offset, self._row(offset), 0
        text = self.text
        return len(text), self._row(len(text)), len(text) - text.rfind(b"\n") - 1

    def _row(self, offset: int) -> int:
        at = bisect_right(self._offsets, offset) - 1
        row = self._rows[at] + self.text.count(b"\n", self._offsets[at], offset)
        self._offsets.insert(at + 1, offset)
        self._rows.insert(at + 1, row)
        return row


def _changed_runs(old: list[bytes], new: list[bytes]) -> list[tuple[int, int, int, int]]:
    """The runs of paragraphs that differ, as ``(old_start, old_end, new_start,
    new_end)`` index ranges, in order: a patience diff (paragraphs that occur once on
    each side, in the same order, anchor the rest)."""
    n, m = len(old), len(new)
    lo = 0
    while lo < n and lo < m and old[lo] == new[lo]:
        lo += 1
    hi = 0
    while hi < n - lo and hi < m - lo and old[n - 1 - hi] == new[m - 1 - hi]:
        hi += 1
    once_old = _once(old, lo, n - hi)
    once_new = _once(new, lo, m - hi)
    pairs = [
        (once_old[part], k)
        for k, part in enumerate(new[lo : m - hi], lo)
        if once_new.get(part) == k and part in once_old
    ]
    anchors = [(lo - 1, lo - 1), *_increasing(pairs), (n - hi, m - hi)]
    runs = []
    for (a_old, a_new), (b_old, b_new) in pairwise(anchors):
        oi, oj, ni, nj = a_old + 1, b_old, a_new + 1, b_new
        while oi < oj and ni < nj and old[oi] == new[ni]:
            oi, ni = oi + 1, ni + 1
        while oi < oj and ni < nj and old[oj - 1] == new[nj - 1]:
            oj, nj = oj - 1, nj - 1
        if oi < oj or ni < nj:
            runs.append((oi, oj, ni, nj))
    return runs


def _once(parts: list[bytes], start: int, end: int) -> dict[bytes, int]:
    """Paragraphs found exactly once in ``parts[start:end]``, with their index."""
    seen: dict[bytes, int] = {}
    for k in range(start, end):
        seen[parts[k]] = -1 if parts[k] in seen else k
    return {part: k for part, k in seen.items() if k >= 0}


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (ordered by their second item) whose first items
    increase too."""
    tails: list[int] = []  # the smallest last first-item of an increasing run of each length
    ends: list[int] = []  # which pair ends that run
    before = [-1] * len(pairs)
    for k, (first, _) in enumerate(pairs):
        size = bisect_left(tails, first)
        if size == len(tails):
            tails.append(first)
            ends.append(k)
        else:
            tails[size], ends[size] = first, k
        before[k] = ends[size - 1] if size else -1
    chain = []
    k = ends[-1] if ends else -1
    while k >= 0:
        chain.append(pairs[k])
        k = before[k]
    return chain[::-1]


def spans_at(parsed: Parsed, lines: list[tuple[int, int]] | None = None) -> list[Span]:
    """The functions of ``parsed`` that overlap any of ``lines`` (1-based, inclusive
    ranges), in file order; every function when ``lines`` is None."""
    import tree_sitter

    _, query = _tools(parsed.grammar)
    found: dict[int, Any] = {}
    for first, last in lines if lines is not None else [(0, 0)]:
        cursor = tree_sitter.QueryCursor(query)
        if lines is not None:
            cursor.set_point_range((max(0, first - 1), 0), (last, 0))
        for node in cursor.captures(parsed.tree.root_node).get("fn", []):
            found.setdefault(node.start_byte, node)
    namer = _NAMERS[parsed.grammar]
    spans = []
    for _, node in sorted(found.items()):
        span = namer(node, parsed.text)
        if span is not None:
            spans.append(span)
    return spans


def function_spans(path: str, source: bytes) -> list[Span]:
    """Every function with a body in ``source`` (the text of ``path``), in file order."""
    parsed = parse(path, source)
    return spans_at(parsed) if parsed is not None else []


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


def _compact(text: str) -> str:
    return _SPACE.sub("", _COMMENT.sub("", text))


# Python ---------------------------------------------------------------------------


def _python(node: Any, text: bytes) -> Span | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    names = [_text(name_node)]
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            outer = parent.child_by_field_name("name")
            if outer is not None:
                names.append(_text(outer))
        parent = parent.parent
    name = ".".join(reversed(names))
    params = node.child_by_field_name("parameters")
    long_name = name + (_compact(_text(params)) if params is not None else "()")
    return Span(name, long_name, name_node.start_point[0] + 1, _last_code_line(node))


def _last_code_line(node: Any) -> int:
    """The last line of ``node`` holding code: trailing comments do not count."""
    while node.child_count:
        code = [c for c in node.children if c.type != "comment"]
        if not code:
            break
        node = code[-1]
    return node.end_point[0] + 1


# Java -----------------------------------------------------------------------------

_JAVA_CLASSES = {
    "class_declaration",
    "enum_declaration",
    "record_declaration",
    "interface_declaration",
    "annotation_type_declaration",
}


def _java(node: Any, text: bytes) -> Span | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    method = _text(name_node)
    scopes: list[str] = []
    path: list[str] = []  # scopes and enclosing methods: anonymous classes of two
    parent = node.parent  # methods are different classes
    while parent is not None:
        if parent.type in _JAVA_CLASSES:
            cls = parent.child_by_field_name("name")
            scopes.append(_text(cls) if cls is not None else "")
            path.append(scopes[-1])
        elif parent.type == "object_creation_expression":
            scopes.append("(anonymous)")
            path.append(scopes[-1])
        elif parent.type in ("method_declaration", "constructor_declaration"):
            outer = parent.child_by_field_name("name")
            path.append(_text(outer) if outer is not None else "")
        parent = parent.parent
    name = f"{scopes[0]}::{method}" if scopes else method
    params = node.child_by_field_name("parameters")
    signature = _compact(_text(params)) if params is not None else "()"
    long_name = "::".join([*reversed(path), method]) + signature
    return Span(name, long_name, name_node.start_point[0] + 1, node.end_point[0] + 1)


# C and C++ ------------------------------------------------------------------------

_DECLARATOR_WRAPPERS = {
    "pointer_declarator",
    "reference_declarator",
    "parenthesized_declarator",
    "attributed_declarator",
}
_CPP_SCOPES = {"class_specifier", "struct_specifier", "union_specifier"}


def _function_declarator(node: Any) -> tuple[Any, bytes, Any] | None:
    """A definition's name node, the name's text and its parameter list; a conversion
    operator (``operator bool()``, ``A::operator const char*()``) has no declarator of
    its own, so its name runs up to the parameters."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        if declarator.type == "operator_cast" or (
            declarator.type == "qualified_identifier" and _cast_of(declarator) is not None
        ):
            params = _cast_parameters(_cast_of(declarator))
            if params is None:
                return None
            return (
                declarator,
                node.text[
                    declarator.start_byte - node.start_byte : params.start_byte - node.start_byte
                ],
                params,
            )
        if declarator.type not in _DECLARATOR_WRAPPERS:
            return None
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None
        )
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    if name_node is None:
        return None
    return name_node, name_node.text, declarator.child_by_field_name("parameters")


def _cast_of(node: Any) -> Any | None:
    while node is not None and node.type == "qualified_identifier":
        node = node.child_by_field_name("name")
    return node if node is not None and node.type == "operator_cast" else None


def _cast_parameters(cast: Any) -> Any | None:
    declarator = cast.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "abstract_function_declarator":
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None
        )
    return declarator.child_by_field_name("parameters") if declarator is not None else None


# lizard's tokens: an operator's name is its tokens joined by spaces (``operator ( )``,
# ``operator "" _a``, ``operator const char *``); ``<<`` is two tokens, ``<<=`` one
_TOKEN = re.compile(
    r'\w+|"(?:\\.|[^"\\])*"|::|<<=|>>=|\|\||&&|==|!=|<=|>=|->|\+\+|--|\+=|-=|\^=|&=|\|=|\S'
)


def _c_name(raw: bytes) -> str:
    text = " ".join(_COMMENT.sub("", raw.decode("utf-8", "replace")).split())
    head, sep, op = text.partition("operator")
    if sep and (not op or not (op[0].isalnum() or op[0] == "_")):
        return f"{head.replace(' ', '')}operator {' '.join(_TOKEN.findall(op))}"
    return _last_word(text).replace(" ", "")


def _last_word(text: str) -> str:
    """``HWY_ATTR Vec<T> name`` (a macro tree-sitter could not expand) gives ``name``;
    spaces inside template arguments do not split."""
    depth, cut = 0, 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0 and text[i - 1 : i] != ":" and text[i + 1 : i + 2] != ":":
            cut = i + 1
    return text[cut:]


def _c_family(node: Any, text: bytes) -> Span | None:
    body = node.child_by_field_name("body")
    if body is None or body.type not in ("compound_statement", "try_statement"):
        return None  # "= default", "= delete", "= 0": nothing to change
    parts = _function_declarator(node)
    if parts is None:
        return None
    name_node, name_text, params = parts
    own = _c_name(name_text)
    scopes: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in ("function_definition", "lambda_expression"):
            return None  # a local class's method: lizard counts only the enclosing function
        if parent.type == "namespace_definition" or parent.type in _CPP_SCOPES:
            scope = parent.child_by_field_name("name")
            if scope is not None:
                if scope.type == "template_type":
                    scope = scope.child_by_field_name("name") or scope
                scopes.append(_compact(_text(scope)))
        parent = parent.parent
    name = "::".join([*reversed(scopes), own])
    # the parameters as written, macros included (``(unsigned x FMT_BUILTIN)``): adding
    # one changes the signature, as it does for lizard
    raw = text[params.start_byte : params.end_byte] if params is not None else b"()"
    signature = _compact(raw.decode("utf-8", "replace"))
    if signature == "(void)":
        signature = "()"
    if params is not None and params.parent is not None:  # ``() const``, ``() &&``: overloads
        signature += "".join(
            _text(q)
            for q in params.parent.children
            if q.type in ("type_qualifier", "ref_qualifier")
        )
    return Span(name, name + signature, name_node.start_point[0] + 1, node.end_point[0] + 1)


_NAMERS = {"python": _python, "java": _java, "c": _c_family, "cpp": _c_family}
