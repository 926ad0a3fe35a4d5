"""A set's reports: conflicts to settle, the audit's precision and agreement, each read
on the slow lane."""

from __future__ import annotations

from annotation.adjudication import Decision, conflicts_for_set
from annotation.agreement import AgreementReport
from annotation.annotator_report import AnnotatorQuality, annotator_quality
from annotation.audit import AuditReport, audit_report
from annotation.set_reports import agreement_for_set
from curator.tui.service.lanes import ServiceBase
from store.sets import SetRow


class ReportService(ServiceBase):
    """Conflicts, audit and agreement of one set."""

    def conflicts(self, set_row: SetRow) -> list[Decision]:
        return self._slow(lambda s: conflicts_for_set(s, set_row))

    def audit(self, set_row: SetRow) -> AuditReport:
        return self._slow(lambda s: audit_report(s, set_row.name))

    def agreement(self, set_row: SetRow) -> AgreementReport:
        return self._slow(lambda s: agreement_for_set(s, set_row))

    def annotators(self, set_row: SetRow) -> list[AnnotatorQuality]:
        """Per annotator: gold accuracy, seconds per item, agreement with final labels
        over time."""
        return self._slow(lambda s: annotator_quality(s, set_row))
