"""Synthetic commit rows for tests and benchmarks that need many cheap commits: a small
word list for random messages and the smallest valid ``CommitRow``."""

from __future__ import annotations

from store.records import CommitRow

WORDS = (
    "fix",
    "cache",
    "loop",
    "speed",
    "allocation",
    "parser",
    "memory",
    "reduce",
    "latency",
    "docs",
    "test",
    "lock",
)


def minimal_commit(
    i: int, message: str, *, source: str = "https://example.org/r", file: str = "src/m.py"
) -> CommitRow:
    """Commit number ``i`` (its sha and diff hash derive from ``i``): one Python file,
    one line changed, no diff or code text."""
    return CommitRow(
        source=source,
        sha=f"{i:040x}",
        branch=None,
        author_date="2026-01-01T00:00:00+00:00",
        message=message,
        diff="",
        file=file,
        files=[file],
        language="python",
        functions=[],
        code_before="",
        code_after="",
        added=1,
        deleted=1,
        model_input="",
        function_md5=None,
        diff_hash=f"{i:032x}",
    )
