"""``curator chart``: a set's labels, agreement, audit, a labeler's threshold, the
student's learning curve or the newest active-learning simulation, drawn in the
terminal (plotext) or written as SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from annotation.sets import SetError
from curator.charts import CHARTS, ChartError, build_chart, render_svg, render_text, write_svg
from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, write_output

EMPTY_WHY = {
    "agreement": "it needs items voted on by two annotators or more",
    "labels": "no item of the set has a vote or a prediction",
}


def chart_command(
    name: Annotated[str, typer.Argument(help=f"Which chart: {', '.join(CHARTS)}.")],
    set_name: Annotated[
        str | None, typer.Option("--set", help="The set (audit: the audit set).")
    ] = None,
    labeler: Annotated[
        str | None, typer.Option("--labeler", help="threshold: the labeler, e.g. student@2.")
    ] = None,
    family: Annotated[
        str, typer.Option("--family", help="learning: the model family.")
    ] = "student",
    width: Annotated[int, typer.Option("--width", min=30, max=1000, help="Characters wide.")] = 80,
    height: Annotated[int, typer.Option("--height", min=10, max=500, help="Lines high.")] = 24,
    svg: Annotated[
        Path | None, typer.Option("--svg", help="Write the chart as SVG to this file instead.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Draw one chart: labels, agreement, threshold, audit, learning or active-learning."""
    if name not in CHARTS:
        fail(f"no chart {name!r}: use {', '.join(CHARTS)}", EXIT_USAGE)
    if svg is not None and not svg.name:
        fail(f"--svg {str(svg)!r}: give the name of the file to write", EXIT_USAGE)
    with open_db(db, create=False) as store:
        try:
            chart = build_chart(store, name, set_name, labeler, family)
        except (ChartError, SetError) as exc:
            fail(str(exc))
    if chart.empty:
        where = f" of set {set_name!r}" if set_name else ""
        why = EMPTY_WHY.get(name, "no data")
        fail(f"the {name} chart{where} has nothing to draw yet: {why}")
    if svg is not None:
        write_output(svg, render_svg(chart), write_svg, prefix="")
        out.print(Text(f"wrote {svg}"))
        return
    out.print(Text.from_ansi(render_text(chart, width, height, color=out.is_terminal)))
    if chart.note:
        out.print(Text(chart.note, style="dim"))
