"""The model's view of a commit: ``message || diff`` with the biggest hunks first.

Following PerfMiner, the message comes first, then the diff hunks ordered by edit
size (lines added plus deleted, largest first, ties in diff order), and the diff is
cut where the text reaches a token budget. Each hunk keeps its file's header, written
again whenever the file changes from the hunk before. The full diff is stored
separately; only this text is cut.

The message itself is never cut, even when it alone is over the budget: the keyword
rules under a trained model (engines.labelers.rule_floor) read the message out of this
text, and must see all of it, as the keyword labeler does. Only its trailer block
(``Signed-off-by:``, ``Change-Id:``...; engines.commits.trailers) is left out: it names
people and tickets, not the change. The encoder cuts its own input at its token limit in
any case.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from engines.commits.diff_layout import GIT_FILE, HUNK, git_layout
from engines.commits.trailers import without_trailers

DEFAULT_TOKEN_BUDGET = 512
SEPARATOR = "\n\n"

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)

TokenCounter = Callable[[str], int]


@dataclass(frozen=True)
class Hunk:
    header: str  # the file header lines ("diff --git ...", "--- ...", "+++ ..."), or ""
    body: str  # from the "@@" line to the end of the hunk

    @property
    def edit_size(self) -> int:
        return sum(1 for line in self.body.splitlines()[1:] if line.startswith(("+", "-")))


def approximate_tokens(text: str) -> int:
    """Words and punctuation marks: a close, tokenizer-free stand-in for subword counts."""
    return sum(1 for _ in _TOKEN.finditer(text))


def split_hunks(diff: str) -> list[Hunk]:
    """The hunks of a (possibly multi-file) unified diff, each with its file header."""
    hunks: list[Hunk] = []
    file_starts = [m.start() for m in GIT_FILE.finditer(diff)] or [0]
    if file_starts[0] != 0:
        file_starts.insert(0, 0)
    for start, end in zip(file_starts, [*file_starts[1:], len(diff)], strict=True):
        section = diff[start:end]
        hunk_starts = [m.start() for m in HUNK.finditer(section)]
        if not hunk_starts:
            if section.strip():
                hunks.append(Hunk("", section))
            continue
        header = section[: hunk_starts[0]]
        for h_start, h_end in zip(hunk_starts, [*hunk_starts[1:], len(section)], strict=True):
            hunks.append(Hunk(header, section[h_start:h_end]))
    return hunks


def order_hunks(diff: str) -> str:
    """The diff re-assembled with hunks largest-first, file headers kept in place."""
    parts: list[str] = []
    previous_header = None
    for hunk in sorted(split_hunks(diff), key=lambda h: h.edit_size, reverse=True):
        if hunk.header and hunk.header != previous_header:
            parts.append(hunk.header)
        previous_header = hunk.header
        parts.append(hunk.body)
    return "".join(parts)


def truncate_tokens(text: str, budget: int) -> str:
    """Cut ``text`` right after its ``budget``-th token (by :func:`approximate_tokens`).

    Text with at most ``budget`` tokens comes back whole; a budget of 0 means no cut.
    """
    if budget <= 0:
        return text
    tokens = _TOKEN.finditer(text)
    for count, match in enumerate(tokens, start=1):
        if count == budget:
            return text if next(tokens, None) is None else text[: match.end()]
    return text


def model_input(
    message: str,
    diff: str,
    budget: int = DEFAULT_TOKEN_BUDGET,
    count_tokens: TokenCounter = approximate_tokens,
    path: str | None = None,
) -> str:
    """``message || diff`` with hunks largest-first, the diff cut so the whole stays within
    ``budget`` tokens (0: no cut). The message is never cut: a message longer than the
    budget comes back whole, without its diff; its trailer block (``Signed-off-by:``...)
    is left out (:func:`engines.commits.trailers.without_trailers`). A diff in another
    tool's layout is read in
    git's (:func:`engines.commits.diff_layout.git_layout`; ``path`` names the file of a
    diff that is hunks alone)."""
    head = without_trailers(message).strip() + SEPARATOR
    body = order_hunks(git_layout(diff, path))
    if budget <= 0:
        return head + body
    room = budget - count_tokens(head)
    if room <= 0:
        return head
    return head + cut_to_budget(body, room, count_tokens)


def cut_to_budget(text: str, budget: int, count_tokens: TokenCounter = approximate_tokens) -> str:
    """``text`` cut to ``budget`` tokens (0: no cut). With the approximate counter the cut
    falls after the last token that fits; with a custom one (a real tokenizer's) whole
    lines are kept while they fit."""
    if budget <= 0:
        return text
    if count_tokens is approximate_tokens:
        return truncate_tokens(text, budget)
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        used += count_tokens(line)
        if used > budget:
            break
        kept.append(line)
    return "".join(kept)
