"""Audit: an audit set's running precision and Wilson interval, updating as votes land."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from annotation.audit import AuditReport, Precision
from curator.tui import render
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen
from store.sets import SetRow

REFRESH_SECONDS = 2.0


def precision_text(p: Precision, confidence: float) -> Text:
    if p.value is None:
        return Text("no settled items yet", style="dim")
    return Text.assemble(
        (f"{p.value:.3f}", "bold"),
        f"  [{p.low:.3f}, {p.high:.3f}] ({confidence:.0%} Wilson)  ",
        f"{p.correct}/{p.judged} correct",
    )


class AuditScreen(Screen[None]):
    help_title = "audit"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l,enter", "label", "Label"),
        Binding("r", "review", "Review"),
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
            yield Static("", id="summary", classes="box")
            yield Static("", id="strata", classes="box")
        yield Static(
            Text(f"refreshes every {REFRESH_SECONDS:.0f} s · l label · r review conflicts"),
            classes="hint",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"Audit {self.set_row.name}"
        self.load()
        self.set_interval(REFRESH_SECONDS, self.load)

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="audit")
    def load(self) -> None:
        try:
            report = self.app.service.audit(self.set_row)
        except ValueError as exc:
            self.app.call_from_thread(self._error, str(exc))
            return
        self.app.call_from_thread(self._show, report)

    def _error(self, message: str) -> None:
        self.query_one("#status", Static).update(render.one_line(message, 200))

    def _show(self, r: AuditReport) -> None:
        judged = r.overall.judged
        self.query_one("#status", Static).update(
            render.one_line(
                f"{r.name} · audits {r.labeler} saying {r.label} · {judged} of {r.size}"
                f" judged · {r.pending} pending · {r.conflicts} conflicts",
                200,
            )
        )
        summary = Table(box=None, show_header=False, padding=(0, 1))
        summary.add_column(style="dim", no_wrap=True)
        summary.add_column()
        summary.add_row("precision", precision_text(r.overall, r.confidence))
        summary.add_row("progress", render.bar(judged / r.size if r.size else 0.0, 20))
        summary.add_row("population", f"{r.population} items {r.labeler} calls {r.label}")
        summary.add_row("sample", f"{r.size} items drawn")
        self.query_one("#summary", Static).update(summary)
        strata = Table(title="per stratum", box=None, padding=(0, 1), title_justify="left")
        strata.add_column("stratum")
        strata.add_column("judged", justify="right")
        strata.add_column("precision and interval")
        for name, p in r.strata.items():
            strata.add_row(
                render.one_line(name, 30), str(p.judged), precision_text(p, r.confidence)
            )
        self.query_one("#strata", Static).update(strata if r.strata else Text(""))

    def action_label(self) -> None:
        self.app.push_screen(LabelScreen(self.set_row))

    def action_review(self) -> None:
        self.app.push_screen(ReviewScreen(self.set_row))
