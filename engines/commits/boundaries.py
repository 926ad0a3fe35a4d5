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
incrementally from an earlier one with one tree edit per run of changed paragraphs; of
its text, only what lies between the head and the tail it shares with the earlier one
is cut into paragraphs and counted again.
tree-sitter and its grammars are imported when a file is first parsed. Where the two
parsers disagree, and why, is listed in docs/mining.md.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, pairwise, repeat
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

    @cached_property
    def starts(self) -> Starts:
        """Where each paragraph starts; counted once, when the next version of the file
        is parsed from this one."""
        return Starts(self.paragraphs)


class Starts:
    """Where each of ``paragraphs`` starts, as (byte, row), joined by blank lines (two
    bytes, two rows); at index ``len(paragraphs)``, where one more would start (two
    past the end of the text)."""

    def __init__(self, paragraphs: list[bytes]) -> None:
        self.bytes = list(accumulate(map(len, paragraphs), initial=0))
        self.rows = list(accumulate(map(bytes.count, paragraphs, repeat(b"\n")), initial=0))

    def spliced(self, head: int, middle: list[bytes], tail: int) -> Starts:
        """The starts of ``paragraphs[:head] + middle + paragraphs[-tail:]`` (no tail
        when ``tail`` is 0): only the middle is counted."""
        new = Starts([])
        k = len(self.bytes) - 1 - tail  # where the tail starts here
        for own, mine, counts in (
            (new.bytes, self.bytes, map(len, middle)),
            (new.rows, self.rows, map(bytes.count, middle, repeat(b"\n"))),
        ):
            own[:] = accumulate(counts, initial=mine[head])
            own[:0] = mine[:head]
            shift = own[-1] - mine[k]
            own += [at + shift for at in mine[k + 1 :]]
        return new

    def __getitem__(self, k: int) -> tuple[int, int]:
        return self.bytes[k] + 2 * k, self.rows[k] + 2 * k

    def byte(self, k: int) -> int:
        return self.bytes[k] + 2 * k


def parse(
    path: str, source: bytes, previous: Parsed | None = None, narrow: bool = True
) -> Parsed | None:
    """Parse ``source`` (the text of ``path``); None when no grammar fits the path.

    ``previous`` (an earlier version of the same file) makes the parse incremental:
    its tree is edited where the two texts differ and tree-sitter re-parses only there,
    within each changed run of paragraphs only the bytes that differ unless the text
    around them does not parse (``narrow=False``: always the whole paragraphs).
    """
    grammar = grammar_for(path)
    if grammar is None:
        return None
    parser, _ = _tools(grammar)
    text = source
    if previous is None or previous.grammar != grammar or not previous.paragraphs:
        paragraphs = text.split(b"\n\n")
        rewritten = rewrite_each(grammar, paragraphs)
        source = b"\n\n".join(rewritten)
        return Parsed(grammar, source, parser.parse(source), text, paragraphs, rewritten)
    paragraphs, same_head, same_tail, starts = split_like(previous, text)
    runs = _changed_runs(previous.paragraphs, paragraphs, same_head, same_tail)
    # only the changed paragraphs are rewritten; the others are the earlier version's
    rewritten = list(previous.rewritten)
    for oi, oj, ni, nj in reversed(runs):
        rewritten[oi:oj] = rewrite_each(grammar, paragraphs[ni:nj])
    source = b"\n\n".join(rewritten)
    # where the text does not parse, what tree-sitter makes of it depends on how much it
    # re-reads: there the whole changed paragraphs are re-read, as before edits were
    # narrowed, so that narrowing never changes which functions are found
    old_spans = [(previous.starts.byte(oi), previous.starts.byte(oj)) for oi, oj, _, _ in runs]
    narrow = narrow and not _error_in(previous.tree, old_spans)
    tree = _reparse(parser, previous, source, starts, runs, narrow)
    if narrow and _error_in(tree, [(starts.byte(ni), starts.byte(nj)) for _, _, ni, nj in runs]):
        tree = _reparse(parser, previous, source, starts, runs, narrow=False)
    parsed = Parsed(grammar, source, tree, text, paragraphs, rewritten)
    parsed.__dict__["starts"] = starts  # what the cached property would count again
    return parsed


def _reparse(
    parser: Any,
    previous: Parsed,
    source: bytes,
    starts: Starts,
    runs: list[tuple[int, int, int, int]],
    narrow: bool,
) -> Any:
    old_tree = previous.tree.copy()
    _edit(old_tree, previous, source, starts, runs, narrow)
    return parser.parse(source, old_tree)


def _error_in(tree: Any, spans: list[tuple[int, int]]) -> bool:
    """Whether ``tree`` has a syntax error in one of ``spans`` (byte ranges)."""
    return any(_error_within(tree.root_node, start, end) for start, end in spans)


def _error_within(node: Any, start: int, end: int) -> bool:
    """Whether an error or missing node of ``node`` lies in ``[start, end]``."""
    if not node.has_error:
        return False
    if node.is_error or node.is_missing:
        return True
    for child in children_from(node, start):
        if child.start_byte > end:
            return False
        if _error_within(child, start, end):
            return True
    return False


def children_from(node: Any, start: int) -> Iterator[Any]:
    """The children of ``node`` from the first one that ends past byte ``start``, in
    order. Found by a tree cursor: ``Node.first_child_for_byte`` gives a wrong child on
    some nodes (tree-sitter issue #2012), and on the newline that ends a ``#define`` it
    gives one whose first read crashes the process (libarchive's
    ``archive_write_set_format_iso9660.c`` ended ``curator mine commits`` with SIGSEGV)."""
    cursor = node.walk()
    if cursor.goto_first_child_for_byte(max(start, 0)) is None:
        return
    while True:
        yield cursor.node
        if not cursor.goto_next_sibling():
            return


def split_like(previous: Parsed, text: bytes) -> tuple[list[bytes], int, int, Starts]:
    """``text.split(b"\\n\\n")``, taking the paragraphs ``text`` shares with ``previous``
    at its head and at its tail from ``previous`` instead of cutting them again; with how
    many it shares at the head and at the tail, and where each starts. Only the part
    between is split and counted: a large file usually changes in a few paragraphs."""
    old, starts, was = previous.paragraphs, previous.starts, previous.text
    n, shift = len(old), len(text) - len(was)
    indices = range(n)
    # the paragraphs whose blank line after them lies in the common head: cut alike
    head = bisect_right(indices, _common_head(was, text), key=starts.byte) - 1
    middle_start = starts.byte(head)
    limit = min(len(was), len(text)) - middle_start
    first_of_tail = len(was) - _common_tail(was, text, limit)
    # the paragraphs whose blank line before them lies in the common tail, where a
    # fresh split cuts too (see _clean_cut)
    k = max(head + 1, bisect_left(range(n + 1), first_of_tail + 2, key=starts.byte))
    while k < n and not _clean_cut(text, starts.byte(k) - 2 + shift):
        k += 1
    end = starts.byte(k) - 2 + shift if k < n else len(text)
    middle = text[middle_start:end].split(b"\n\n") if end >= middle_start else []
    return [*old[:head], *middle, *old[k:]], head, n - k, starts.spliced(head, middle, n - k)


def _common_head(a: bytes, b: bytes) -> int:
    """How many bytes ``a`` and ``b`` share at their start (a binary search of slice
    compares: about one pass over the shorter)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_tail(a: bytes, b: bytes, limit: int) -> int:
    """How many bytes ``a`` and ``b`` share at their end, at most ``limit``."""
    la, lb = len(a), len(b)
    lo, hi = 0, min(la, lb, limit)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[la - mid : la - lo], 0, lb - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _clean_cut(text: bytes, separator: int) -> bool:
    """Whether the blank line at ``separator`` (two newline bytes) splits ``text`` there
    whatever came before it."""
    after = text[separator + 2 : separator + 3]
    return (separator == 0 or text[separator - 1] != 0x0A) and after != b"\n"


def _edit(
    tree: Any,
    previous: Parsed,
    source: bytes,
    new_at: Starts,
    runs: list[tuple[int, int, int, int]],
    narrow: bool = True,
) -> None:
    """Tell ``tree`` (parsed from ``previous``) that what it reads is now ``source``: one
    edit per run of changed paragraphs (``runs``, from :func:`_changed_runs`), so that
    tree-sitter re-parses only those runs (one edit from the first difference to the
    last would re-parse everything between). ``narrow`` narrows each edit to the bytes
    that differ inside its run: a line changed in a long paragraph then re-parses that
    line's statement, not the whole paragraph (10-20% less parsing on fmt's headers).

    The rewritten texts have the lengths and line breaks of the files (see
    :mod:`engines.commits.macros`), so the paragraphs' starts hold for both."""
    old, old_at, was = previous.paragraphs, previous.starts, previous.source
    count = len(new_at.bytes) - 1  # paragraphs of the new text
    edits = []
    for oi, oj, ni, nj in runs:  # in order
        if oi == len(old) or ni == count:  # at the end: the paragraph before
            oi, ni = oi - 1, ni - 1  # too, so that both runs start on a paragraph
        old_start, row = old_at[oi]
        new_start = new_at.byte(ni)
        old_end = old_at.byte(oj) if oj < len(old) else len(was)
        new_end = new_at.byte(nj) if nj < count else len(source)
        old_part, new_part = was[old_start:old_end], source[new_start:new_end]
        head = _common_head(old_part, new_part) if narrow else 0
        if head == len(old_part) == len(new_part):
            continue  # the rewriting made the two alike
        shorter = min(len(old_part), len(new_part))
        tail = _common_tail(old_part, new_part, shorter - head) if narrow else 0
        start, inserted = old_start + head, new_part[head : len(new_part) - tail]
        row += old_part.count(b"\n", 0, head)
        column = start - was.rfind(b"\n", 0, start) - 1
        end = old_end - tail
        end_row = row + was.count(b"\n", start, end)
        lines = inserted.count(b"\n")
        new_column = len(inserted) - inserted.rfind(b"\n") - 1 if lines else column + len(inserted)
        edits.append(
            (
                start,
                end,
                start + len(inserted),
                (row, column),
                (end_row, end - was.rfind(b"\n", 0, end) - 1),
                (row + lines, new_column),
            )
        )
    for edit in reversed(edits):  # last first, so that earlier offsets still hold
        tree.edit(*edit)


def _changed_runs(
    old: list[bytes], new: list[bytes], same_head: int = 0, same_tail: int = 0
) -> list[tuple[int, int, int, int]]:
    """The runs of paragraphs that differ, as ``(old_start, old_end, new_start,
    new_end)`` index ranges, in order: a patience diff (paragraphs that occur once on
    each side, in the same order, anchor the rest). The first ``same_head`` and last
    ``same_tail`` paragraphs are known to be the same on both sides."""
    n, m = len(old), len(new)
    lo = same_head
    while lo < n and lo < m and old[lo] == new[lo]:
        lo += 1
    hi = min(same_tail, n - lo, m - lo)
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
    firsts = [first for first, _ in pairs]
    if firsts == sorted(firsts):  # the usual case: nothing moved
        return pairs
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
