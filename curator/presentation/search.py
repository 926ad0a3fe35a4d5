"""How search results look: a snippet with its matched terms highlighted, built as a Rich
``Text`` from segments (never parsed as markup), the results table and their JSON."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from curator.presentation.format import number
from curator.presentation.tables import table
from curator.presentation.text import flat, one_line
from store.search import HIGHLIGHT_END, HIGHLIGHT_START, Hit

HIGHLIGHT_STYLE = "bold yellow"


def snippet_spans(snippet: str) -> tuple[str, list[tuple[int, int]]]:
    """The snippet's text on one line, control characters removed, and the (start, end)
    offsets of each highlighted term in it."""
    text, spans, start = "", [], None
    for part in _parts(flat(snippet)):
        if part == HIGHLIGHT_START:
            start = len(text)
        elif part == HIGHLIGHT_END:
            if start is not None and start < len(text):
                spans.append((start, len(text)))
            start = None
        else:
            text += part
    return text, spans


def _parts(snippet: str) -> list[str]:
    out: list[str] = []
    current = ""
    for ch in snippet:
        if ch in (HIGHLIGHT_START, HIGHLIGHT_END):
            out.extend([current, ch] if current else [ch])
            current = ""
        else:
            current += ch
    if current:
        out.append(current)
    return out


def highlighted(snippet: str, width: int = 120) -> Text:
    """A snippet as safe text with its matches styled, cut to ``width``."""
    text, spans = snippet_spans(snippet)
    shown = Text(text)
    for start, end in spans:
        shown.stylize(HIGHLIGHT_STYLE, start, end)
    if len(text) > width:
        shown.truncate(width - 1)
        shown.append("…")
    return shown


def hit_title(hit: Hit) -> Text:
    """``kind key`` (and the path when there is one), one line."""
    return one_line(f"{hit.kind} {hit.key}" + (f" {hit.path}" if hit.path else ""), 60)


def hits_table(hits: list[Hit], title: str | None, boxed: bool = True) -> Table:
    rows = [
        (
            f"#{h.item_id}",
            hit_title(h),
            number(-h.score, 2) if h.field else "-",
            h.field or "-",
            highlighted(h.snippet, 80),
        )
        for h in hits
    ]
    return table(title, ("item", "key", "score", "in", "snippet"), rows, boxed=boxed)


def hits_json(hits: list[Hit]) -> list[dict[str, Any]]:
    """Each hit as JSON: the snippet as plain text with its highlight offsets."""
    data = []
    for h in hits:
        text, spans = snippet_spans(h.snippet)
        data.append(
            {
                "item_id": h.item_id,
                "kind": h.kind,
                "key": h.key,
                "source": h.source,
                "path": h.path,
                "score": None if not h.field else round(-h.score, 6),
                "field": h.field or None,
                "snippet": text,
                "highlights": [list(s) for s in spans],
            }
        )
    return data
