"""Children of a syntax node found by byte (engines.commits.boundaries.children_from),
the walk that decides whether a changed region of a file still has syntax errors."""

from __future__ import annotations

import random
from typing import Any

from engines.commits.boundaries import _error_within, children_from, parse


def _scan(node: Any, start: int) -> list[tuple[str, int, int]]:
    """The reference: every child, kept from the first that ends past ``start``."""
    kids = node.children
    first = next((i for i, k in enumerate(kids) if k.end_byte > start), len(kids))
    return [(k.type, k.start_byte, k.end_byte) for k in kids[first:]]


def _found(node: Any, start: int) -> list[tuple[str, int, int]]:
    return [(k.type, k.start_byte, k.end_byte) for k in children_from(node, start)]


def test_every_byte_of_a_define_finds_the_children_after_it() -> None:
    # tree-sitter's Node.first_child_for_byte, asked for the newline that ends a
    # #define, gave a node whose first read crashed the process (SIGSEGV)
    parsed = parse("a.c", b"#define FOO 1\nint x;\n#define BAR(a) ((a) + 1)\n")
    assert parsed is not None
    defines = [n for n in parsed.tree.root_node.children if n.type.startswith("preproc_")]
    assert len(defines) == 2
    for node in defines:
        for start in range(node.start_byte - 1, node.end_byte + 2):
            assert _found(node, start) == _scan(node, start), (node.type, start)


def _with_errors(functions: int, seed: int) -> bytes:
    """C source with defines, conditional blocks and a syntax error every few functions."""
    rng = random.Random(seed)
    parts = []
    for i in range(functions):
        body = f"  int x = {i};\n  for (int j = 0; j < x; j++) x += j;\n  return x;\n"
        if rng.random() < 0.2:
            body = f"  int x = {i}\n  if (x > ) return;\n  return x;\n"
        parts.append(
            f"#define K{i} {i}\n#ifdef USE_{i}\nstatic int f{i}(int a) {{\n{body}}}\n#endif"
        )
    return "\n\n".join(parts).encode()


def _errors_scanned(node: Any, start: int, end: int) -> bool:
    if not node.has_error:
        return False
    if node.is_error or node.is_missing:
        return True
    return any(
        _errors_scanned(k, start, end)
        for k in node.children
        if k.end_byte > start and k.start_byte <= end
    )


def test_errors_in_a_region_are_found_as_a_full_scan_finds_them() -> None:
    old = _with_errors(120, 0)
    new = old.replace(
        b"return x;\n}\n#endif\n\n#define K7 ", b"return x + 1;\n}\n#endif\n\n#define K7 "
    )
    first = parse("gen.c", old)
    second = parse("gen.c", new, first)  # incremental, as the miner parses a file's versions
    rng = random.Random(1)
    for parsed in (first, second):
        assert parsed is not None and parsed.tree.root_node.has_error
        root = parsed.tree.root_node
        for _ in range(400):
            start = rng.randrange(0, root.end_byte)
            end = start + rng.randrange(0, 2000)
            assert _error_within(root, start, end) == _errors_scanned(root, start, end)
