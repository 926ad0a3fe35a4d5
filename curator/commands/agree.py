"""``curator agree``: how far the annotators of a set agree."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from annotation.agreement import AgreementReport
from annotation.annotator_report import annotator_quality
from annotation.set_reports import agreement_for_set
from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.console import out
from curator.presentation import tables
from curator.presentation.annotator_tables import annotator_table
from curator.presentation.cli_output import load_set, print_json
from curator.presentation.text import one_line


def agree(
    set_name: Annotated[str, typer.Argument(help="The set.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    by_annotator: Annotated[
        bool,
        typer.Option(
            "--by-annotator",
            help="Per annotator: accuracy on gold items, seconds per item, agreement with"
            " the final labels over time (drift).",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Agreement: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, per label."""
    with open_db(db, create=False) as store:
        s = load_set(store, set_name)
        if by_annotator:
            quality = annotator_quality(store, s)
            if as_json:
                print_json({"set": s.name, "annotators": [q.as_json() for q in quality]})
            else:
                out.print(annotator_table(quality))
            return
        report = agreement_for_set(store, s)
    if as_json:
        print_json({"set": s.name, **report.as_json()})
        return
    _print_report(s.name, report)


def _print_report(set_name: str, report: AgreementReport) -> None:
    out.print(Text.assemble("set ", one_line(set_name), ": ", tables.agreement_counts(report)))
    out.print(tables.agreement_table(report))
    if report.pairs:
        out.print(tables.pairs_table(report))
    if report.fleiss.per_label or report.label_counts:
        out.print(tables.per_label_table(report))
