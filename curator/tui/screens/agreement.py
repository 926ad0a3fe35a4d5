"""Agreement: pairwise Cohen matrix, Fleiss' kappa, Krippendorff's alpha, per label."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from annotation.agreement import AgreementReport, landis_koch
from curator.tui import render
from store.sets import SetRow

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
        reading = landis_koch(value) if name != "observed agreement" else ""
        table.add_row(name, render.number(value), " ".join(x for x in (reading, note) if x))
    return table


class AgreementScreen(Screen[None]):
    help_title = "agreement"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f5,ctrl+r", "refresh", "Refresh"),
        Binding("escape,q", "app.pop_screen", "Back"),
    ]

    def __init__(self, set_row: SetRow) -> None:
        super().__init__()
        self.set_row = set_row

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"{self.set_row.name} · loading…"), id="status", classes="status")
        with VerticalScroll():
            yield Static("", id="overall", classes="box")
            yield Static("", id="matrix", classes="box")
            yield Static("", id="labels", classes="box")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"Agreement {self.set_row.name}"
        self.load()
        self.set_interval(REFRESH_SECONDS, self.load)

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="agreement")
    def load(self) -> None:
        report = self.app.service.agreement(self.set_row)
        self.app.call_from_thread(self._show, report)

    def _show(self, r: AgreementReport) -> None:
        self.query_one("#status", Static).update(
            render.one_line(
                f"{self.set_row.name} · {r.items} items · {r.items_coded} coded ·"
                f" {r.items_multi_coded} by two or more · {len(r.raters)} annotators ·"
                f" {r.votes} votes (skips left out)",
                200,
            )
        )
        self.query_one("#overall", Static).update(overall(r))
        self.query_one("#matrix", Static).update(
            Group(Text("Cohen's κ per pair (items both coded)", style="bold"), cohen_matrix(r))
            if r.raters
            else Text("")
        )
        self.query_one("#labels", Static).update(
            Group(Text("per label", style="bold"), per_label(r))
        )
