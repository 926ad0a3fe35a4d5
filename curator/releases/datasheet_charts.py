"""The datasheet's charts: SVG files under ``charts/`` in the release (listed in the
manifest like every other file) and the section of ``DATASHEET.md`` that shows them.

For each annotation set of the release's kinds: its labels per annotator and labeler,
its agreement per week of votes (when two or more annotators voted), an audit set's
precision as votes arrived, the release labeler's precision and recall against its
threshold (a release of predicted labels); and the student's learning curve when one
was recorded. A chart whose figures are missing is left out, never drawn empty."""

from __future__ import annotations

import hashlib
import warnings

from annotation.sets import SetError
from curator.charts import Chart, ChartError, build_chart, render_svg
from curator.releases.tally import ReleaseFacts
from store import Store
from store.routing import set_counters
from store.sets import SetRow, all_sets, set_progress

CHART_DIR = "charts"
MOST_SETS = 12


def release_charts(store: Store, facts: ReleaseFacts) -> list[tuple[str, Chart]]:
    """(file name under the release, chart) for every chart the release shows."""
    wanted: list[tuple[str, str | None, str | None]] = []
    labeler = facts.filters.get("labeler") if facts.filters.get("labels") == "predicted" else None
    for s in charted_sets(store, facts):
        if s.purpose == "audit":
            wanted.append(("audit", s.name, None))
            continue
        wanted += [("labels", s.name, None), ("agreement", s.name, None)]
        if labeler:
            wanted.append(("threshold", s.name, str(labeler)))
    wanted.append(("learning", None, None))
    found = []
    for name, set_name, who in wanted:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # alpha of one label: nan
                chart = build_chart(store, name, set_name, who)
        except (ChartError, SetError):
            continue
        if chart.empty or (name == "agreement" and len(chart.series[0].xs) < 1):
            continue
        stem = name if set_name is None else f"{name}-{_safe(set_name)}"
        found.append((f"{CHART_DIR}/{stem}.svg", chart))
    return found


def charted_sets(store: Store, facts: ReleaseFacts) -> list[SetRow]:
    """The sets the charts show, in name order: those the release names with --set (else
    every set of its kinds), at most ``MOST_SETS``: the ones with the most votes."""
    named = facts.filters.get("sets")
    sets = [
        s for s in all_sets(store) if s.kind in facts.by_kind and (not named or s.name in named)
    ]
    if len(sets) <= MOST_SETS:
        return sets
    votes = {s.id: _votes(store, s) for s in sets}
    busiest = {s.id for s in sorted(sets, key=lambda s: -votes[s.id])[:MOST_SETS]}
    return [s for s in sets if s.id in busiest]


def _votes(store: Store, set_row: SetRow) -> int:
    counters = set_counters(store, set_row.id)
    return counters.votes if counters is not None else set_progress(store, set_row.id)["votes"]


def _safe(name: str) -> str:
    """A file name stem for a set: the name itself when it is safe and short, else its
    safe characters and a digest of the name (``a/b`` and ``a\\b`` stay two files)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    if safe == name and len(name) <= 60:
        return name
    return f"{safe[:60]}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def chart_documents(charts: list[tuple[str, Chart]]) -> dict[str, bytes]:
    return {path: render_svg(chart).encode("utf-8") for path, chart in charts}


def chart_section(charts: list[tuple[str, Chart]]) -> list[str]:
    if not charts:
        return []
    lines = ["## Charts", ""]
    for path, chart in charts:
        title = chart.title.replace("[", "(").replace("]", ")")
        lines += [f"![{title}]({path})", ""]
    return lines
