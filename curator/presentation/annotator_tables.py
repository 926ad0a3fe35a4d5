"""How the per-annotator report looks (``curator agree --by-annotator`` and the
Agreement screen): accuracy on gold, seconds per item, agreement with the final labels,
and its course over time."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from annotation.annotator_report import AnnotatorQuality
from curator.presentation.format import MISSING, number, percent, when
from curator.presentation.tables import table

HEADER = (
    "annotator",
    "votes",
    "gold",
    "gold accuracy",
    "s / item",
    "agrees with final",
    "kappa vs final",
    "over time",
    "drift",
)


def _seconds(value: float | None) -> str:
    return MISSING if value is None else f"{value:.1f}"


def _course(q: AnnotatorQuality) -> str:
    return " > ".join(percent(w.rate, 0) for w in q.windows) or MISSING


def annotator_rows(rows: list[AnnotatorQuality]) -> list[tuple[object, ...]]:
    return [
        (
            q.annotator,
            q.votes,
            q.gold_answered,
            percent(q.gold_accuracy),
            _seconds(q.seconds_median),
            percent(q.final_rate),
            number(q.final_kappa),
            _course(q),
            Text(f"since {when(q.drift_from)}", style="yellow") if q.drift_from else "",
        )
        for q in rows
    ]


def annotator_table(rows: list[AnnotatorQuality], *, boxed: bool = True) -> Table:
    return table("Per annotator", HEADER, annotator_rows(rows), boxed=boxed)
