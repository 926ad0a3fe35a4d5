"""``curator agree``: how far the annotators of a set agree."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.text import Text

from annotation.agreement import AgreementReport, landis_koch
from annotation.set_reports import agreement_for_set
from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.console import out
from curator.presentation.cli_output import load_set, number, print_json, table
from curator.safe_text import one_line


def agree(
    set_name: Annotated[str, typer.Argument(help="The set.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Agreement: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, per label."""
    with open_db(db) as store:
        s = load_set(store, set_name)
        report = agreement_for_set(store, s)
    data = report.as_json()
    if as_json:
        print_json({"set": s.name, **data})
        return
    _print_report(s.name, report, data)


def _print_report(set_name: str, report: AgreementReport, data: dict[str, Any]) -> None:
    out.print(
        Text.assemble(
            "set ",
            one_line(set_name),
            f": {report.items} items, {report.items_coded} coded,"
            f" {report.items_multi_coded} coded by two or more, {len(report.raters)} annotators,"
            f" {report.votes} votes (skips left out)",
        )
    )
    out.print(
        table(
            "Agreement",
            ("figure", "value", "reading", "items"),
            [
                ("observed agreement", number(report.observed_agreement), "", report.fleiss.items),
                (
                    "Fleiss' kappa",
                    number(report.fleiss.kappa),
                    landis_koch(report.fleiss.kappa),
                    report.fleiss.items,
                ),
                (
                    "Krippendorff's alpha (nominal)",
                    number(report.krippendorff_alpha),
                    landis_koch(report.krippendorff_alpha),
                    report.items_coded,
                ),
                (
                    "category alpha (top level)",
                    number(report.category_alpha),
                    landis_koch(report.category_alpha),
                    "",
                ),
            ],
        )
    )
    if report.pairs:
        out.print(
            table(
                "Cohen's kappa per pair",
                ("annotator", "annotator", "items", "observed", "kappa", "reading"),
                [
                    (p.rater_a, p.rater_b, p.items, number(p.observed), number(p.kappa), p.reading)
                    for p in report.pairs
                ],
            )
        )
    per_label = data["per_label"]
    assert isinstance(per_label, dict)
    if per_label:
        out.print(
            table(
                "Per label",
                ("label", "votes", "Fleiss kappa", "specific agreement"),
                [
                    (label, v["votes"], number(v["fleiss_kappa"]), number(v["specific_agreement"]))
                    for label, v in per_label.items()
                ],
            )
        )
