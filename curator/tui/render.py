"""The app's own renderables for untrusted item text: clipped, highlighted code, commit
messages with their keyword matches, key-value lines, what the machines and the
annotators said, and a text progress bar.

Messages and code may hold Rich markup, ANSI/OSC escapes, control characters, very
long lines and enormous diffs: controls are stripped, nothing is parsed as markup, and
long text is cut with a note saying how to see it all. Figures, one-line text and the
tables the CLI shows too live in ``curator.presentation`` (``format``, ``text``,
``tables``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text

from curator.presentation.format import number, percent
from curator.presentation.text import one_line, shorten, strip_controls
from store.votes import LiveVote

MAX_LINES = 300
MAX_LINE_CHARS = 300
MAX_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class Clipped:
    text: str
    lines: int
    clipped: bool


def clip(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_LINE_CHARS) -> Clipped:
    """Control-free text cut to ``max_lines`` lines of at most ``max_chars`` characters."""
    lines = strip_controls(text.replace("\t", "    ")).split("\n")
    clipped = len(lines) > max_lines
    shown = []
    for line in lines[:max_lines]:
        if len(line) > max_chars:
            clipped = True
        shown.append(shorten(line, max_chars))
    return Clipped("\n".join(shown), len(lines), clipped)


FULL_LINE_CHARS = 1000
"""The longest line the show-all view holds: a longer one (minified code, a data blob in
a diff) goes on over several lines, as a text area redraws a whole line at each key."""


def full_text(text: str, width: int = FULL_LINE_CHARS) -> str:
    """All of an item's text for the show-all view: controls removed, nothing cut, lines
    longer than ``width`` broken into pieces of that many characters."""
    broken: list[str] = []
    for line in strip_controls(text.replace("\t", "    ")).split("\n"):
        if len(line) <= width:
            broken.append(line)
        else:
            broken.extend(line[i : i + width] for i in range(0, len(line), width))
    return "\n".join(broken)


def code(text: str, lexer: str, dark: bool = True) -> tuple[RenderableType, Clipped]:
    """Highlighted, clipped source; Syntax never interprets markup in what it shows."""
    shown = clip(text)
    theme = "monokai" if dark else "default"
    syntax = Syntax(
        shown.text or " ", lexer, theme=theme, word_wrap=False, background_color="default"
    )
    return syntax, shown


def message(text: str, spans: list[tuple[int, int]] | None = None) -> Text:
    """A commit message shown literally, with keyword matches highlighted.

    Spans index into the original text; each piece is cleaned on its own so
    stripping a control character never shifts a highlight.
    """
    source = text[:MAX_MESSAGE_CHARS]
    out = Text()
    cursor = 0
    for start, end in sorted(spans or []):
        if start < cursor or end > len(source):
            continue
        out.append(strip_controls(source[cursor:start]))
        out.append(strip_controls(source[start:end]), style="bold reverse")
        cursor = end
    out.append(strip_controls(source[cursor:]))
    if len(text) > MAX_MESSAGE_CHARS:
        out.append(f"\n… {len(text) - MAX_MESSAGE_CHARS} more characters (f shows all)", "dim")
    return out


def bar(fraction: float, width: int = 12) -> Text:
    """A text progress bar with its percentage, e.g. ``██████░░░░░░  50%``."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = round(fraction * width)
    return Text.assemble(
        ("█" * filled, "green"), ("░" * (width - filled), "dim"), f" {percent(fraction, 0):>4}"
    )


def styled(text: Text, style: str) -> Text:
    text.stylize(style)
    return text


def pairs(items: list[tuple[str, str]], width: int = 60) -> Text:
    """``key value · key value`` with keys dimmed and values shown literally."""
    out = Text()
    for i, (key, value) in enumerate(items):
        if i:
            out.append("  ")
        out.append(f"{key} ", "dim")
        out.append(one_line(value, width))
    return out


def predictions_line(predictions: list[dict[str, object]]) -> Text:
    """What the machines said: label and score (or teacher confidence) per labeler."""
    out = Text()
    for i, p in enumerate(predictions):
        if i:
            out.append(" · ", "dim")
        out.append(one_line(str(p["labeler"]), 30))
        out.append(" ")
        out.append_text(styled(one_line(str(p["label"]), 30), "bold"))
        score = p.get("score")
        if isinstance(score, (int, float)):
            teacher = str(p["labeler"]).startswith("teacher")
            out.append(f" {percent(score, 0)} sure" if teacher else f" {number(score, 2)}")
        details = p.get("details")
        if isinstance(details, dict) and details.get("matches"):
            terms = sorted({str(m.get("term", "")) for m in details["matches"]})
            out.append(" (")
            out.append(one_line(", ".join(terms), 40))
            out.append(")")
    return out


def votes_line(votes: Sequence[LiveVote], annotator: str) -> Text:
    """Live votes, the annotator's own first: ``you: perf [category] · bob: non-perf``."""
    out = Text()
    ordered = sorted(votes, key=lambda v: (v.annotator != annotator, v.role, v.annotator))
    for i, v in enumerate(ordered):
        if i:
            out.append(" · ", "dim")
        who = "you" if v.annotator == annotator and v.role == "annotator" else v.annotator
        if v.role == "adjudicator":
            who += " (adjudicator)"
        out.append_text(styled(one_line(who, 30), "dim"))
        out.append(": ")
        out.append_text(styled(one_line(v.label, 30), "bold"))
        if v.category:
            out.append(" [")
            out.append(one_line(v.category, 50))
            out.append("]")
        if v.note:
            out.append(" “")
            out.append(one_line(v.note, 60))
            out.append("”")
    return out
