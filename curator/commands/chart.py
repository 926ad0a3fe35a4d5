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
from curator.presentation.cli_output import (
    EXIT_USAGE,
    fail,
    refuse_database,
    to_stdout,
    write_output,
)
from engines.labelers.registry import TRAINED_FAMILIES, near_miss

EMPTY_WHY = {
    "agreement": "it needs items voted on by two annotators or more, and two labels among"
    " their votes (with one label only, kappa and alpha are undefined)",
    "audit": "no item of the audit has been judged yet",
    "labels": "no item of the set has a vote or a prediction",
}


def chart_command(
    name: Annotated[str, typer.Argument(help=f"Which chart: {', '.join(CHARTS)}.")],
    set_name: Annotated[
        str | None, typer.Option("--set", help="The set (audit: the audit set).")
    ] = None,
    labeler: Annotated[
        str | None,
        typer.Option(
            "--labeler",
            help="threshold: the labeler, e.g. student@2; learning: the model whose curve"
            " to draw (student@3, student@current; a family: its newest with a curve).",
        ),
    ] = None,
    family: Annotated[
        str | None,
        typer.Option("--family", help="learning: the model family (default student)."),
    ] = None,
    width: Annotated[int, typer.Option("--width", min=30, max=1000, help="Characters wide.")] = 80,
    height: Annotated[int, typer.Option("--height", min=10, max=500, help="Lines high.")] = 24,
    svg: Annotated[
        Path | None,
        typer.Option("--svg", help="Write the chart as SVG to this file instead (- prints it)."),
    ] = None,
    db: DbOption = None,
) -> None:
    """Draw one chart: labels, agreement, threshold, audit, learning or active-learning."""
    if name not in CHARTS:
        fail(f"no chart {name!r}: use {', '.join(CHARTS)}", EXIT_USAGE)
    if set_name is not None and name in ("learning", "active-learning"):
        fail(f"the {name} chart reads no set: leave out --set", EXIT_USAGE)
    if labeler is not None and name not in ("threshold", "learning"):
        fail(f"--labeler is for the threshold and learning charts, not {name}", EXIT_USAGE)
    if family is not None and name != "learning":
        fail(f"--family is for the learning chart, not {name}", EXIT_USAGE)
    if family is not None and family not in TRAINED_FAMILIES:
        hint = near_miss(family)
        known = ", ".join(TRAINED_FAMILIES)
        fail(f"--family {family}: not a trained family ({known}){hint}", EXIT_USAGE)
    labeler_family = labeler.rpartition("@")[0] or labeler if labeler is not None else None
    if family is not None and labeler_family is not None and labeler_family != family:
        fail(f"--labeler {labeler} is no {family} model: give one of the two", EXIT_USAGE)
    if svg is not None and not svg.name:
        fail(f"--svg {str(svg)!r}: give the name of the file to write", EXIT_USAGE)
    with open_db(db, create=False) as store:
        if svg is not None:
            refuse_database(svg, "--svg")
        try:
            chart = build_chart(store, name, set_name, labeler, family or "student")
        except (ChartError, SetError) as exc:
            fail(str(exc))
    if chart.empty:
        where = f" of set {set_name!r}" if set_name else ""
        why = EMPTY_WHY.get(name, "no data")
        fail(f"the {name} chart{where} has nothing to draw yet: {why}")
    if svg is not None:  # - prints it
        write_output(svg, render_svg(chart), write_svg, prefix="", option="--svg")
        if not to_stdout(svg):
            out.print(Text(f"wrote {svg}"))
        return
    out.print(Text.from_ansi(render_text(chart, width, height, color=out.is_terminal)))
    if chart.note:
        out.print(Text(chart.note, style="dim"))
