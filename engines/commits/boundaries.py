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
  (``ns::Foo<T>::bar``); operators spelled ``operator ==``.

tree-sitter and its grammars are imported when a file is first parsed. Where the two
parsers disagree, and why, is listed in docs/mining.md.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from engines.commits.languages import language_of


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
# ``class LEVELDB_EXPORT Slice {``: an upper-case macro between ``class`` and the name
# makes tree-sitter read the class as a function; it is blanked out (same length).
_EXPORT_MACRO = re.compile(
    rb"\b((?:class|struct)\s+)([A-Z][A-Z0-9_]*(?:\([^()\n]*\))?)"
    rb"(?=\s+[A-Za-z_]\w*\s*(?:final\s*)?[:{])"
)


def _blank(match: re.Match[bytes]) -> bytes:
    return match[1] + b" " * len(match[2])


# An upper-case name standing before another name (``FMT_CONSTEXPR auto f()``,
# ``NPY_NO_EXPORT int``, ``FMT_BEGIN_NAMESPACE`` on its own line before code) is almost
# always a macro tree-sitter cannot expand: it is blanked, as lizard skips it.
_ATTRIBUTE_MACRO = re.compile(
    rb"(?<![\w#.>:])(?<!define )[A-Z][A-Z0-9]*_[A-Z0-9_]*"
    rb"(?=[ \t]+[A-Za-z_~]|[ \t]*\n[ \t]*[A-Za-z_~])"
)


def _blank_all(match: re.Match[bytes]) -> bytes:
    return b" " * len(match[0])


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
    source: bytes  # what tree-sitter read (export macros blanked out)
    tree: Any
    text: bytes  # the file as it is


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
    if grammar == "cpp":
        source = _EXPORT_MACRO.sub(_blank, source)
    if grammar in ("c", "cpp"):
        source = _ATTRIBUTE_MACRO.sub(_blank_all, source)
    old_tree = None
    if previous is not None and previous.grammar == grammar:
        old_tree = previous.tree.copy()
        _edit(old_tree, previous.source, source)
    tree = parser.parse(source, old_tree) if old_tree is not None else parser.parse(source)
    return Parsed(grammar, source, tree, text)


def _edit(tree: Any, old: bytes, new: bytes) -> None:
    """Tell ``tree`` (parsed from ``old``) that the text is now ``new``, as one edit
    from the first byte that differs to the last."""
    prefix = _common_prefix(old, new)
    suffix = _common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    old_end, new_end = len(old) - suffix, len(new) - suffix
    tree.edit(
        prefix, old_end, new_end, _point(old, prefix), _point(old, old_end), _point(new, new_end)
    )


def _common_prefix(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search on slice equality: memcmp, not a Python loop
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _point(text: bytes, offset: int) -> tuple[int, int]:
    return text.count(b"\n", 0, offset), offset - (text.rfind(b"\n", 0, offset) + 1)


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
        span = namer(node)
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


def _python(node: Any) -> Span | None:
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


def _java(node: Any) -> Span | None:
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


def _function_declarator(node: Any) -> Any | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        if declarator.type not in _DECLARATOR_WRAPPERS:
            return None
        declarator = declarator.child_by_field_name("declarator") or (
            declarator.named_children[-1] if declarator.named_children else None
        )
    return declarator


def _c_name(name_node: Any) -> str:
    text = " ".join(_COMMENT.sub("", _text(name_node)).split())
    head, sep, op = text.partition("operator")
    if sep and (not op or not (op[0].isalnum() or op[0] == "_")):
        return f"{head.replace(' ', '')}operator {op.strip()}"
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


def _c_family(node: Any) -> Span | None:
    body = node.child_by_field_name("body")
    if body is None or body.type not in ("compound_statement", "try_statement"):
        return None  # "= default", "= delete", "= 0": nothing to change
    declarator = _function_declarator(node)
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    if name_node is None:
        return None
    own = _c_name(name_node)
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
    params = declarator.child_by_field_name("parameters")
    signature = _compact(_text(params)) if params is not None else "()"
    if signature == "(void)":
        signature = "()"
    return Span(name, name + signature, name_node.start_point[0] + 1, node.end_point[0] + 1)


_NAMERS = {"python": _python, "java": _java, "c": _c_family, "cpp": _c_family}
