"""Audit: an audit set's running precision and Wilson interval, updating as votes land."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Static

from annotation.audit import AuditReport, Precision
from curator.presentation.text import one_line
from curator.tui import render
from curator.tui.screens.base import ReportScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen

REFRESH_SECONDS = 2.0


def precision_text(p: Precision, confidence: float) -> Text:
    if p.value is None:
        return Text("no settled items yet", style="dim")
    return Text.assemble(
        (f"{p.value:.3f}", "bold"),
        f"  [{p.low:.3f}, {p.high:.3f}] ({confidence:.0%} Wilson)  ",
        f"{p.correct}/{p.judged} correct",
    )


class AuditScreen(ReportScreen):
    help_title = "audit"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("l,enter", "label", "Label"),
        Binding("r", "review", "Review"),
    ]
    boxes = ("summary", "strata")
    refresh_seconds = REFRESH_SECONDS
    title_word = "Audit"
    hint = f"refreshes every {REFRESH_SECONDS:.0f} s · l label · r review conflicts"

    def fetch(self) -> AuditReport:
        return self.curation.audit(self.set_row)

    def present(self, r: AuditReport) -> None:
        judged = r.overall.judged
        self.query_one("#status", Static).update(
            one_line(
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
        self.box("summary").update(summary)
        strata = Table(title="per stratum", box=None, padding=(0, 1), title_justify="left")
        strata.add_column("stratum")
        strata.add_column("judged", justify="right")
        strata.add_column("precision and interval")
        for name, p in r.strata.items():
            strata.add_row(one_line(name, 30), str(p.judged), precision_text(p, r.confidence))
        self.box("strata").update(strata if r.strata else Text(""))

    def action_label(self) -> None:
        self.app.push_screen(LabelScreen(self.set_row))

    def action_review(self) -> None:
        self.app.push_screen(ReviewScreen(self.set_row))
