"""The datasheet's charts: SVG files under ``charts/`` in the release (listed in the
manifest like every other file) and the section of ``DATASHEET.md`` that shows them.

For each annotation set of the release's kinds: its labels per annotator and labeler,
its agreement per week of votes (when two or more annotators voted), an audit set's
precision as votes arrived, the release labeler's precision and recall against its
threshold (a release of predicted labels); and the student's learning curve when one
was recorded. A chart whose figures are missing is left out, never drawn empty."""

from __future__ import annotations

import warnings

from annotation.sets import SetError
from curator.charts import Chart, ChartError, build_chart, render_svg
from curator.releases.tally import ReleaseFacts
from store import Store
from store.sets import all_sets

CHART_DIR = "charts"
MOST_SETS = 12


def release_charts(store: Store, facts: ReleaseFacts) -> list[tuple[str, Chart]]:
    """(file name under the release, chart) for every chart the release shows."""
    wanted: list[tuple[str, str | None, str | None]] = []
    labeler = facts.filters.get("labeler") if facts.filters.get("labels") == "predicted" else None
    sets = [s for s in all_sets(store) if s.kind in facts.by_kind][:MOST_SETS]
    for s in sets:
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


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


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
