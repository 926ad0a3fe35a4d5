"""Agreement: the overall figures, the pairwise Cohen matrix and the per-label table, as
``curator.presentation.tables`` builds them for ``curator agree`` too."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from annotation.agreement import AgreementReport
from curator.presentation import tables
from curator.presentation.text import one_line
from curator.tui.screens.base import ReportScreen

REFRESH_SECONDS = 3.0


class AgreementScreen(ReportScreen):
    help_title = "agreement"
    boxes = ("overall", "matrix", "labels")
    refresh_seconds = REFRESH_SECONDS
    title_word = "Agreement"

    def fetch(self) -> AgreementReport:
        return self.curation.agreement(self.set_row)

    def present(self, r: AgreementReport) -> None:
        self.query_one("#status", Static).update(
            one_line(f"{self.set_row.name}: {tables.agreement_counts(r)}", 200)
        )
        self.box("overall").update(tables.agreement_table(r, boxed=False))
        self.box("matrix").update(tables.cohen_matrix(r) if r.raters else Text(""))
        self.box("labels").update(tables.per_label_table(r, boxed=False))
