"""How figures look, in the CLI and the app alike: numbers, percentages, kappa and alpha
with Landis and Koch's reading, dates, and the one glyph for a figure that is missing."""

from __future__ import annotations

from annotation.agreement import landis_koch

MISSING = "-"
"""What stands where a figure is missing (no votes yet, not scored): never a zero."""


def number(value: float | None, digits: int = 3) -> str:
    """``0.816``; :data:`MISSING` for no value."""
    return MISSING if value is None else f"{value:.{digits}f}"


def percent(value: float | None, digits: int = 1) -> str:
    """A share as a percentage, ``81.6%``; :data:`MISSING` for no value."""
    return MISSING if value is None else f"{100 * value:.{digits}f}%"


def count(value: int | None) -> str:
    """A whole count, ``1234``; :data:`MISSING` for no value."""
    return MISSING if value is None else str(value)


def reading(value: float | None) -> str:
    """Landis and Koch's words for a kappa or alpha (``substantial``...; ``undefined``)."""
    return landis_koch(value)


def kappa(value: float | None, digits: int = 3) -> str:
    """A kappa or alpha with its reading, ``0.816 (almost perfect)``."""
    return f"{number(value, digits)} ({reading(value)})"


def when(stamp: str | None) -> str:
    """An ISO timestamp to the minute, ``2025-01-31 14:05``; :data:`MISSING` for none."""
    return stamp[:16].replace("T", " ") if stamp else MISSING


def day(stamp: str | None) -> str:
    """An ISO timestamp's date, ``2025-01-31``; empty for none."""
    return str(stamp or "")[:10]


def looks_numeric(text: str) -> bool:
    """A cell that holds a figure (or the missing glyph), so its column aligns right."""
    return text == MISSING or text.rstrip("%").replace(".", "", 1).lstrip("-").isdigit()
