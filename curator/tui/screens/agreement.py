"""Agreement: pairwise Cohen matrix, Fleiss' kappa, Krippendorff's alpha, per label."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from annotation.agreement import AgreementReport
from curator.tui import render
from curator.tui.screens.base import ReportScreen
from curator.tui.service import agreement_reading

REFRESH_SECONDS = 3.0


def cohen_matrix(report: AgreementReport) -> Table:
    """Annotators by annotators; each cell is Cohen's kappa over the items both coded."""
    table = Table(box=None, padding=(0, 1))
    raters = report.raters
    table.add_column("")
    for r in raters:
        table.add_column(render.one_line(r, 10), justify="right")
    pairs = {(p.rater_a, p.rater_b): p for p in report.pairs}
    for a in raters:
        cells: list[Text | str] = [render.one_line(a, 12)]
        for b in raters:
            p = pairs.get((a, b)) or pairs.get((b, a))
            if a == b:
                cells.append(Text("·", style="dim"))
            elif p is None:
                cells.append(Text("—", style="dim"))
            else:
                cells.append(f"{render.number(p.kappa, 2)} ({p.items})")
        table.add_row(*cells)
    return table


def per_label(report: AgreementReport) -> Table:
    table = Table(box=None, padding=(0, 1))
    table.add_column("label")
    table.add_column("votes", justify="right")
    table.add_column("Fleiss κ", justify="right")
    table.add_column("specific agreement", justify="right")
    for label in sorted(set(report.label_counts) | set(report.fleiss.per_label)):
        table.add_row(
            render.one_line(label, 30),
            str(report.label_counts.get(label, 0)),
            render.number(report.fleiss.per_label.get(label)),
            render.number(report.specific_agreement.get(label)),
        )
    return table


def overall(report: AgreementReport) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 1))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(justify="right")
    table.add_column()
    rows = [
        ("Fleiss κ", report.fleiss.kappa, f"{report.fleiss.items} items"),
        ("Krippendorff α", report.krippendorff_alpha, ""),
        ("observed agreement", report.observed_agreement, ""),
        ("α on categories", report.category_alpha, ""),
    ]
    for name, value, note in rows:
        reading = agreement_reading(value) if name != "observed agreement" else ""
        table.add_row(name, render.number(value), " ".join(x for x in (reading, note) if x))
    return table


class AgreementScreen(ReportScreen):
    help_title = "agreement"
    boxes = ("overall", "matrix", "labels")
    refresh_seconds = REFRESH_SECONDS
    title_word = "Agreement"

    def fetch(self) -> AgreementReport:
        return self.curation.agreement(self.set_row)

    def present(self, r: AgreementReport) -> None:
        self.query_one("#status", Static).update(
            render.one_line(
                f"{self.set_row.name} · {r.items} items · {r.items_coded} coded ·"
                f" {r.items_multi_coded} by two or more · {len(r.raters)} annotators ·"
                f" {r.votes} votes (skips left out)",
                200,
            )
        )
        self.box("overall").update(overall(r))
        self.box("matrix").update(
            Group(Text("Cohen's κ per pair (items both coded)", style="bold"), cohen_matrix(r))
            if r.raters
            else Text("")
        )
        self.box("labels").update(Group(Text("per label", style="bold"), per_label(r)))
