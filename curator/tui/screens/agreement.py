"""Agreement: the overall figures, the pairwise Cohen matrix, the per-label table and the
per-annotator report (gold accuracy, speed, drift), as ``curator.presentation`` builds
them for ``curator agree`` too."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from annotation.agreement import AgreementReport
from annotation.annotator_report import AnnotatorQuality
from curator.presentation import tables
from curator.presentation.annotator_tables import annotator_table
from curator.presentation.text import one_line
from curator.tui.screens.base import ReportScreen

REFRESH_SECONDS = 3.0


class AgreementScreen(ReportScreen):
    help_title = "agreement"
    boxes = ("overall", "matrix", "labels", "annotators")
    refresh_seconds = REFRESH_SECONDS
    title_word = "Agreement"

    def fetch(self) -> tuple[AgreementReport, list[AnnotatorQuality]]:
        return self.curation.agreement(self.set_row), self.curation.annotators(self.set_row)

    def present(self, fetched: tuple[AgreementReport, list[AnnotatorQuality]]) -> None:
        r, quality = fetched
        self.query_one("#status", Static).update(
            one_line(f"{self.set_row.name}: {tables.agreement_counts(r)}", 200)
        )
        self.box("overall").update(tables.agreement_table(r, boxed=False))
        self.box("matrix").update(tables.cohen_matrix(r) if r.raters else Text(""))
        self.box("labels").update(tables.per_label_table(r, boxed=False))
        self.box("annotators").update(annotator_table(quality, boxed=False))
