"""Charts of a set's labels, agreement, audit, a labeler's threshold, a retraining's
learning curve and a stored active-learning simulation: what to draw (:class:`Chart`,
built from ``annotation.trends``, the model registry and the ``simulations`` table),
drawn in the terminal with plotext (``curator chart``, the app's charts screen and the
Train screen through textual-plotext) and as SVG (the release datasheet, ``--svg``).

plotext is imported only where a chart is drawn in text; the SVG writer is our own and
needs nothing. Every name shown (annotators, labelers, labels) is untrusted text: the
text renderer shows it through plotext as plain characters (control characters
removed), the SVG writer escapes it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from annotation.sets import require_set, resolve_latest
from annotation.trends import (
    agreement_by_week,
    audit_progress,
    label_distribution,
    threshold_curve,
)
from curator.presentation.text import flat, strip_controls
from engines.files import write_text_atomically
from engines.labelers.calibration import threshold_of
from engines.labelers.diff_decision import diff_decision_of
from engines.labelers.registry import RULE_LABELERS, TRAINED_FAMILIES, near_miss
from store import Store
from store.models import current_model, get_model, list_models
from store.predictions import has_predictions
from store.sets import set_item_ids
from store.teaching import commits_with_diff

CHARTS = ("labels", "agreement", "threshold", "audit", "learning", "active-learning")


class ChartError(ValueError):
    """A chart that cannot be drawn as asked (no such set, labeler or curve)."""


@dataclass(frozen=True)
class Series:
    name: str
    xs: list[float]
    ys: list[float | None]


@dataclass(frozen=True)
class Chart:
    """What to draw. ``kind`` ``bar``: grouped bars, one group per ``categories`` entry,
    one bar per series; ``line``: one line per series. ``marks`` are vertical lines
    (x, label); ``xticks`` name some x positions."""

    name: str
    title: str
    kind: str
    xlabel: str
    ylabel: str
    series: list[Series]
    categories: list[str] = field(default_factory=list)
    marks: list[tuple[float, str]] = field(default_factory=list)
    xticks: list[tuple[float, str]] = field(default_factory=list)
    ylim: tuple[float, float] | None = None
    note: str = ""

    @property
    def empty(self) -> bool:
        return not any(y is not None for s in self.series for y in s.ys)


def _clean(text: str, width: int = 24) -> str:
    text = flat(text)
    return text if len(text) <= width else text[: width - 1] + "…"


# --------------------------------------------------------------------------- building


def labels_chart(store: Store, set_name: str) -> Chart:
    set_row = require_set(store, set_name)
    found = label_distribution(store, set_row)
    sources = list(found)
    labels = sorted({label for counts in found.values() for label in counts})
    return Chart(
        "labels",
        f"Labels in {_clean(set_name)} per annotator and labeler",
        "bar",
        "",
        "items",
        [
            Series(label, list(range(len(sources))), [found[s].get(label, 0) for s in sources])
            for label in labels
        ],
        categories=[_clean(s, 14) for s in sources],
    )


def agreement_chart(store: Store, set_name: str) -> Chart:
    set_row = require_set(store, set_name)
    weeks = agreement_by_week(store, set_row)
    xs = list(range(len(weeks)))
    return Chart(
        "agreement",
        f"Agreement in {_clean(set_name)}, end of each week of votes",
        "line",
        "week",
        "kappa / alpha",
        [
            Series("Fleiss kappa", xs, [w.kappa for w in weeks]),
            Series("Krippendorff alpha", xs, [w.alpha for w in weeks]),
        ],
        xticks=[(x, w.week.isoformat()) for x, w in zip(xs, weeks, strict=True)],
        # kappa and alpha reach -1 when annotators always disagree
        ylim=(min([-0.2, *(v for w in weeks for v in (w.kappa, w.alpha) if v is not None)]), 1.0),
    )


def _mostly_with_diff(store: Store, set_id: int) -> bool:
    ids = set_item_ids(store, set_id)
    return bool(ids) and 2 * len(commits_with_diff(store, ids)) > len(ids)


def threshold_chart(store: Store, set_name: str, labeler: str) -> Chart:
    set_row = require_set(store, set_name)
    labeler = resolve_latest(store, labeler)  # student@latest, student@current: a version
    model = get_model(store, labeler)
    chosen = threshold_of(model.params) if model is not None else None
    diff = diff_decision_of(model.params) if model is not None else None
    if diff is not None and _mostly_with_diff(store, set_row.id):
        chosen = diff.threshold  # the one its commits were decided at
    curve = threshold_curve(store, set_row, labeler, chosen)
    if not curve.items:
        family = labeler.rpartition("@")[0]
        known = family in (*TRAINED_FAMILIES, *RULE_LABELERS) or labeler.startswith("teacher:")
        if not known and model is None and not has_predictions(store, labeler):
            raise ChartError(
                f"{labeler}: no labeler of that name has predictions in this store"
                " (`curator models list` names the trained ones)"
                + near_miss(family, labeler.rpartition("@")[2])
            )
        raise ChartError(f"{labeler} has no prediction on a settled item of {set_name}")
    xs = [t for t, _, _ in curve.points]
    return Chart(
        "threshold",
        f"{_clean(labeler)} on {_clean(set_name)}: {curve.positive} precision and recall",
        "line",
        f"threshold on P({curve.positive})",
        "",
        [
            Series("precision", xs, [p for _, p, _ in curve.points]),
            Series("recall", xs, [r for _, _, r in curve.points]),
        ],
        marks=[] if chosen is None else [(chosen, f"chosen {chosen:.2f}")],
        ylim=(0.0, 1.0),
        note=f"{curve.items} settled items",
    )


def audit_chart(store: Store, set_name: str) -> Chart:
    points = audit_progress(store, set_name)
    xs = [float(p.judged) for p in points]
    return Chart(
        "audit",
        f"Audit {_clean(set_name)}: precision as votes arrive",
        "line",
        "items judged",
        "precision",
        [
            Series("precision", xs, [p.precision for p in points]),
            Series("Wilson low", xs, [p.low for p in points]),
            Series("Wilson high", xs, [p.high for p in points]),
        ],
        ylim=(0.0, 1.0),
    )


def learning_chart(store: Store, family: str = "student", labeler: str | None = None) -> Chart:
    """The learning curve of ``labeler`` (``student@3``, ``student@current``) when given,
    else of the family's newest model that has one (``student`` and ``student@latest``
    mean the same)."""
    from curator.adaptation import curve_points  # loads the student's stack (numpy)

    version = ""
    if labeler is not None:
        family, _, version = labeler.rpartition("@") if "@" in labeler else (labeler, "", "")
        if not family:
            raise ChartError(f"--labeler {labeler!r}: expected NAME@VERSION, e.g. student@3")
    if version in ("", "latest"):
        candidates = list(reversed(list_models(store, family)))
    else:
        model = current_model(store, family) if version == "current" else get_model(store, labeler)
        if model is None:
            names = [m.name for m in list_models(store, family)]
            have = f" (registered: {', '.join(names)})" if names else ""
            what = (
                f"no {family} has been promoted"
                if version == "current"
                else f"no model {labeler!r}"
            )
            raise ChartError(f"{what}{have}")
        candidates = [model]
    for model in candidates:
        curve = model.params.get("learning_curve")
        points = curve_points(curve)
        if points and isinstance(curve, dict):
            orders = sorted({p.order for p in points})
            return Chart(
                "learning",
                f"{_clean(model.name)}: F1 on {_clean(str(curve.get('eval', '?')))} against votes",
                "line",
                "new votes",
                "F1",
                [
                    Series(
                        order,
                        [float(p.n) for p in points if p.order == order or p.n == 0],
                        [p.f1 for p in points if p.order == order or p.n == 0],
                    )
                    for order in orders
                ],
                ylim=(0.0, 1.0),
            )
    if labeler is not None and len(candidates) == 1:
        raise ChartError(
            f"{candidates[0].name} has no learning curve (`curator train --curve ...`)"
        )
    raise ChartError(f"no {family} model has a learning curve (`curator train --curve ...`)")


AL_SERIES = {"rerank": "re-ranking", "fixed": "fixed order", "random": "random"}
HOW_TO_SIMULATE = "curator simulate active-learning POOL --eval SET"


def active_learning_chart(store: Store) -> Chart:
    """The newest stored active-learning simulation: F1 against votes per queue order."""
    from curator.al_simulation import latest_curves, stored_curves

    row = latest_curves(store)
    curves = stored_curves(row) if row is not None else {}
    if row is None or not curves:
        raise ChartError(f"no active-learning simulation is stored (`{HOW_TO_SIMULATE}`)")
    every = row.params.get("every", "?")
    values = [f1 for points in curves.values() for _, f1 in points]
    low, high = math.floor(min(values) * 10) / 10, math.ceil(max(values) * 10) / 10
    if high - low < 0.2:  # a flat curve: keep some room around it
        low, high = max(0.0, low - 0.1), min(1.0, high + 0.1)
    return Chart(
        "active-learning",
        f"Active learning on {_clean(row.pool)}: F1 on {_clean(row.eval)} against votes",
        "line",
        "votes",
        "F1",
        [
            Series(
                AL_SERIES.get(order, _clean(order)),
                [float(n) for n, _ in points],
                [f1 for _, f1 in points],
            )
            for order, points in curves.items()
        ],
        ylim=(low, high),
        note=f"simulation #{row.id} of {row.created_at[:10]}: re-ranked every {every} votes,"
        f" mean of {row.params.get('seeds', '?')} seeds",
    )


def build_chart(
    store: Store, name: str, set_name: str | None, labeler: str | None, family: str = "student"
) -> Chart:
    """One chart by name; ChartError when its inputs are missing."""
    if name not in CHARTS:
        raise ChartError(f"no chart {name!r}: use {', '.join(CHARTS)}")
    if name == "learning":
        return learning_chart(store, family, labeler)
    if name == "active-learning":
        return active_learning_chart(store)
    if not set_name:
        raise ChartError(f"the {name} chart needs --set NAME")
    if name == "threshold":
        if not labeler:
            raise ChartError("the threshold chart needs --labeler NAME (e.g. student@2)")
        return threshold_chart(store, set_name, labeler)
    return {"labels": labels_chart, "agreement": agreement_chart, "audit": audit_chart}[name](
        store, set_name
    )


# --------------------------------------------------------------------------- drawing


def draw(plt: Any, chart: Chart) -> None:
    """Draw on a plotext module or a textual-plotext ``Plot`` (the same calls)."""
    plt.clear_figure()
    plt.title(chart.title)
    if chart.empty:
        plt.text("no data yet", 0.5, 0.5, alignment="center")
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        return
    if chart.kind == "bar":
        plt.multiple_bar(
            chart.categories,
            [[0 if y is None else y for y in s.ys] for s in chart.series],
            labels=[_clean(s.name, 16) for s in chart.series],
        )
    else:
        for s in chart.series:
            pairs = [(x, y) for x, y in zip(s.xs, s.ys, strict=True) if y is not None]
            if len(pairs) == 1:  # a line needs two points; show the one as a dot
                plt.scatter([pairs[0][0]], [pairs[0][1]], label=_clean(s.name, 20), marker="●")
            elif pairs:
                plt.plot(
                    [x for x, _ in pairs],
                    [y for _, y in pairs],
                    label=_clean(s.name, 20),
                    marker="braille",
                )
        for x, label in chart.marks:
            plt.vline(x, "red")
            plt.text(label, x, (chart.ylim or (0, 1))[1], color="red")
        if chart.xticks:
            step = max(1, len(chart.xticks) // 6)
            ticks = chart.xticks[::step]
            plt.xticks([x for x, _ in ticks], [label[5:] for _, label in ticks])
    if chart.ylim:
        plt.ylim(*chart.ylim)
    if chart.xlabel:
        plt.xlabel(chart.xlabel)
    if chart.ylabel:
        plt.ylabel(chart.ylabel)


def render_text(chart: Chart, width: int = 80, height: int = 24, color: bool = False) -> str:
    """The chart drawn by plotext in ``width`` x ``height`` characters (ANSI colours when
    ``color``)."""
    import plotext as plt

    draw(plt, chart)
    plt.limitsize(False, False)  # a size, not the terminal's
    plt.plotsize(width, height)
    plt.theme("pro" if color else "clear")
    text = plt.build()
    plt.clear_figure()
    return text if color else strip_controls(text)


PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def render_svg(chart: Chart, width: int = 640, height: int = 360) -> str:
    """The chart as a standalone SVG document (no scripts, every text escaped)."""
    left, right, top, bottom = 56, 16, 36, 48
    w, h = width - left - right, height - top - bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="14" font-weight="bold">{escape(chart.title)}</text>',
    ]
    if chart.empty:
        out.append(
            f'<text x="{width // 2}" y="{height // 2}" text-anchor="middle">no data yet</text>'
        )
        return "\n".join([*out, "</svg>"]) + "\n"
    values = [y for s in chart.series for y in s.ys if y is not None]
    lo, hi = chart.ylim or (min(0.0, min(values)), max(values) or 1.0)
    if hi <= lo:
        hi = lo + 1.0

    def sy(y: float) -> float:
        return top + h - (y - lo) / (hi - lo) * h

    out.append(f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#888"/>')
    for k in range(5):
        y = lo + (hi - lo) * k / 4
        out.append(
            f'<text x="{left - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{y:.2g}</text>'
            f'<line x1="{left}" x2="{left + w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" stroke="#eee"/>'
        )
    if chart.kind == "bar":
        out += _svg_bars(chart, left, top, w, h, sy)
    else:
        out += _svg_lines(chart, left, w, sy, top, h)
    for i, s in enumerate(chart.series):
        x = left + 8 + i * 150
        out.append(
            f'<rect x="{x}" y="{height - 16}" width="10" height="10"'
            f' fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 14}" y="{height - 7}">{escape(_clean(s.name, 20))}</text>'
        )
    if chart.xlabel:
        out.append(
            f'<text x="{left + w / 2:.1f}" y="{height - 24}" text-anchor="middle"'
            f' fill="#555">{escape(chart.xlabel)}</text>'
        )
    return "\n".join([*out, "</svg>"]) + "\n"


def write_svg(path: Path, svg: str) -> None:
    """Write atomically (engines.files): a reader sees the old file or the whole new one.
    A failure names ``path`` (not the temporary file, which is removed)."""
    try:
        write_text_atomically(path, svg)
    except OSError as exc:  # e.g. path is a folder: "Is a directory"
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def _svg_bars(chart: Chart, left: int, top: int, w: int, h: int, sy: Any) -> list[str]:
    out = []
    groups, per = max(1, len(chart.categories)), max(1, len(chart.series))
    slot = w / groups
    bar = slot * 0.8 / per
    for g, name in enumerate(chart.categories):
        for i, s in enumerate(chart.series):
            y = s.ys[g] or 0
            x = left + g * slot + slot * 0.1 + i * bar
            out.append(
                f'<rect x="{x:.1f}" y="{sy(y):.1f}" width="{bar:.1f}"'
                f' height="{max(0.0, sy(0) - sy(y)):.1f}" fill="{PALETTE[i % len(PALETTE)]}"/>'
            )
        out.append(
            f'<text x="{left + (g + 0.5) * slot:.1f}" y="{top + h + 14}"'
            f' text-anchor="middle">{escape(name)}</text>'
        )
    return out


def _svg_lines(chart: Chart, left: int, w: int, sy: Any, top: int, h: int) -> list[str]:
    xs = [x for s in chart.series for x, y in zip(s.xs, s.ys, strict=True) if y is not None]
    xs += [x for x, _ in chart.marks]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        x1 = x0 + 1.0

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * w

    out = []
    for i, s in enumerate(chart.series):
        points = " ".join(
            f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(s.xs, s.ys, strict=True) if y is not None
        )
        if points:
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{PALETTE[i % len(PALETTE)]}"'
                ' stroke-width="2"/>'
            )
    for x, label in chart.marks:
        out.append(
            f'<line x1="{sx(x):.1f}" x2="{sx(x):.1f}" y1="{top}" y2="{top + h}" stroke="red"'
            f' stroke-dasharray="4 3"/><text x="{sx(x) + 4:.1f}" y="{top + 12}"'
            f' fill="red">{escape(label)}</text>'
        )
    ticks = chart.xticks or [
        (x0 + (x1 - x0) * k / 4, f"{x0 + (x1 - x0) * k / 4:.3g}") for k in range(5)
    ]
    step = max(1, len(ticks) // 6)
    for x, label in ticks[::step]:
        out.append(
            f'<text x="{sx(x):.1f}" y="{top + h + 14}" text-anchor="middle">{escape(label)}</text>'
        )
    return out
