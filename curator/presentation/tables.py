"""The tables the CLI prints and the app shows, built once.

Each table has a row function (plain cells, formatted by :mod:`curator.presentation.format`,
untrusted text made safe by :mod:`curator.presentation.text`) and a builder that lays the
rows out as a Rich ``Table``. The CLI prints the builder's table boxed, with its title;
the app puts the same table, unboxed (``boxed=False``), in a ``Static``, or feeds the row
function's cells to a ``DataTable``. So a figure never looks one way in the terminal and
another in the app.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from annotation.agreement import AgreementReport
from curator.presentation.format import MISSING, count, looks_numeric, number, reading
from curator.presentation.text import flat, one_line

Cell = str | int | float | Text


def table(
    title: str | None,
    header: Sequence[str | Text],
    rows: Sequence[Sequence[Any]],
    *,
    boxed: bool = True,
    show_header: bool = True,
) -> Table:
    """A table whose cells and title are shown literally (a title often holds a set's or
    a labeler's name); numeric columns right-aligned.

    ``boxed`` is the CLI's look (rounded lines, the title in italics); unboxed is the
    app's (no lines, one space between columns, the title in bold)."""
    # Rich styles a title given as a string (after reading its markup), not a Text
    style = "table.title" if boxed else "bold"
    caption = None if title is None else Text(flat(title), style=style)
    t = (
        Table(
            title=caption,
            title_justify="left",
            box=box.HEAVY_HEAD,
            show_header=show_header,
            # a narrow table (or one with no rows) would fold a long title into a column
            min_width=min(len(title), 120) if title else None,
        )
        if boxed
        else Table(
            title=caption,
            title_justify="left",
            box=None,
            padding=(0, 1),
            show_header=show_header,
        )
    )
    for i, name in enumerate(header):
        heading = Text(name) if isinstance(name, str) else name
        numeric = bool(rows) and all(
            isinstance(r[i], int | float) or (isinstance(r[i], str) and looks_numeric(r[i]))
            for r in rows
        )
        t.add_column(heading, justify="right" if numeric else "left")
    for row in rows:
        t.add_row(*(c if isinstance(c, Text) else one_line(str(c), 100) for c in row))
    return t


# --------------------------------------------------------------------------- agreement

AGREEMENT_HEADER = ("figure", "value", "reading", "items")
PAIRS_HEADER = ("annotator", "annotator", "items", "observed", "kappa", "reading")
PER_LABEL_HEADER = ("label", "votes", "Fleiss' kappa", "specific agreement")


def agreement_counts(report: AgreementReport) -> str:
    """What the figures stand on: ``40 items, 40 coded, 40 coded by two or more, ...``."""
    return (
        f"{report.items} items, {report.items_coded} coded,"
        f" {report.items_multi_coded} coded by two or more, {len(report.raters)} annotators,"
        f" {report.votes} votes (skips left out)"
    )


def agreement_rows(report: AgreementReport) -> list[tuple[str, str, str, str]]:
    """The set's overall figures: observed agreement, Fleiss' kappa, Krippendorff's alpha
    and alpha on categories, each with its Landis-Koch reading and the items it covers."""
    return [
        ("observed agreement", number(report.observed_agreement), "", count(report.fleiss.items)),
        (
            "Fleiss' kappa",
            number(report.fleiss.kappa),
            reading(report.fleiss.kappa),
            count(report.fleiss.items),
        ),
        (
            "Krippendorff's alpha (nominal)",
            number(report.krippendorff_alpha),
            reading(report.krippendorff_alpha),
            count(report.items_coded),
        ),
        (
            "category alpha (top level)",
            number(report.category_alpha),
            reading(report.category_alpha),
            "",
        ),
    ]


def pair_rows(report: AgreementReport) -> list[tuple[Cell, ...]]:
    """Cohen's kappa for each pair of annotators, with the items both coded."""
    return [
        (
            one_line(p.rater_a, 30),
            one_line(p.rater_b, 30),
            p.items,
            number(p.observed),
            number(p.kappa),
            p.reading,
        )
        for p in report.pairs
    ]


def per_label_rows(report: AgreementReport) -> list[tuple[Cell, ...]]:
    """Per label: its votes, Fleiss' kappa for it, and its specific agreement."""
    return [
        (
            one_line(label, 30),
            report.label_counts.get(label, 0),
            number(report.fleiss.per_label.get(label)),
            number(report.specific_agreement.get(label)),
        )
        for label in sorted(set(report.label_counts) | set(report.fleiss.per_label))
    ]


def agreement_table(report: AgreementReport, *, boxed: bool = True) -> Table:
    return table("Agreement", AGREEMENT_HEADER, agreement_rows(report), boxed=boxed)


def pairs_table(report: AgreementReport, *, boxed: bool = True) -> Table:
    return table("Cohen's kappa per pair", PAIRS_HEADER, pair_rows(report), boxed=boxed)


def per_label_table(report: AgreementReport, *, boxed: bool = True) -> Table:
    return table("Per label", PER_LABEL_HEADER, per_label_rows(report), boxed=boxed)


def cohen_cell(report: AgreementReport, a: str, b: str) -> Text:
    """One cell of the annotator-by-annotator matrix: ``0.80 (40)``, kappa over the items
    both coded; a dim dot on the diagonal, the missing glyph for a pair with no items."""
    if a == b:
        return Text("·", style="dim")
    pairs = {(p.rater_a, p.rater_b): p for p in report.pairs}
    p = pairs.get((a, b)) or pairs.get((b, a))
    if p is None:
        return Text(MISSING, style="dim")
    return Text(f"{number(p.kappa, 2)} ({p.items})")


def cohen_matrix(report: AgreementReport, *, boxed: bool = False) -> Table:
    """Annotators by annotators; each cell is Cohen's kappa over the items both coded."""
    raters = report.raters
    rows = [(one_line(a, 12), *(cohen_cell(report, a, b) for b in raters)) for a in raters]
    t = table(
        "Cohen's kappa per pair",
        ["", *(one_line(r, 10) for r in raters)],
        rows,
        boxed=boxed,
    )
    for column in t.columns[1:]:
        column.justify = "right"
    return t


# --------------------------------------------------------------------------- scores

SCORES_HEADER = ("items", "P(perf)", "R(perf)", "F1(perf)", "accuracy")


def perf_scores(scores: dict[str, Any] | None) -> list[str]:
    """A model's scores on one set, as ``train`` reports them: items predicted, precision,
    recall and F1 of ``perf``, accuracy; the missing glyph throughout for no scores."""
    if not scores:
        return [MISSING] * len(SCORES_HEADER)
    perf = scores["per_class"].get("perf", {})
    return [
        str(scores["items_predicted"]),
        number(perf.get("precision")),
        number(perf.get("recall")),
        number(perf.get("f1")),
        number(scores.get("accuracy")),
    ]
