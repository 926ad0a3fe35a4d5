"""How the per-source miners (commits, kernels) report progress; the CLI draws it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from store.records import SaveResult


class FinishedSource(Protocol):
    """What a reporter needs of a source's summary: its name and why it failed, if it did."""

    source: str
    failed: str | None


class SaveCounts(Protocol):
    """A summary that counts what happened to each row it saved."""

    stored: int
    duplicates: int
    known: int


def tally(summary: SaveCounts, results: Iterable[SaveResult]) -> None:
    """Count each saved row as stored, a duplicate of another, or already known."""
    for result in results:
        if result.status == "stored":
            summary.stored += 1
        elif result.status == "duplicate":
            summary.duplicates += 1
        else:
            summary.known += 1


def cumulative_counts(
    base: Mapping[str, Any],
    summary: Any,
    fields: Sequence[str] = ("seen", "stored", "duplicates", "known"),
) -> dict[str, Any]:
    """A checkpoint's counters: an earlier run's (``base``) plus this run's ``summary``
    fields, and its ``filtered`` reasons added up."""
    totals: dict[str, Any] = {name: base.get(name, 0) + getattr(summary, name) for name in fields}
    filtered = Counter(base.get("filtered", {}))
    filtered.update(summary.filtered)
    totals["filtered"] = dict(sorted(filtered.items()))
    return totals


class SourceReporter(Protocol):
    """Where a miner reports progress: a source starting, units done, problems, its end."""

    def source_started(self, source: str, total: int, done: int) -> None: ...

    def advance(self, source: str, count: int) -> None: ...

    def problem(self, text: str) -> None: ...

    def source_finished(self, summary: FinishedSource) -> None: ...


class SilentReporter:
    """Collects problems and draws nothing (tests, library use)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def source_started(self, source: str, total: int, done: int) -> None:
        pass

    def advance(self, source: str, count: int) -> None:
        pass

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def source_finished(self, summary: FinishedSource) -> None:
        pass


class ClusterReporter(Protocol):
    """Where the cluster driver reports: the run's start, commits examined, problems,
    slices run again after a worker was lost, and each source's end."""

    def run_started(self, sources: int, workers: int, dashboard: str | None) -> None: ...

    def advance(self, source: str, count: int) -> None: ...

    def problem(self, text: str) -> None: ...

    def requeued(self, source: str, times: int) -> None: ...

    def worker_lost(self, address: str) -> None: ...

    def workers_changed(self, workers: int) -> None: ...

    def source_finished(self, summary: FinishedSource) -> None: ...


class SilentClusterReporter(SilentReporter):
    """Collects what a cluster run reports and draws nothing (tests, library use)."""

    def __init__(self) -> None:
        super().__init__()
        self.started: tuple[int, int, str | None] | None = None
        self.requeues: list[tuple[str, int]] = []
        self.lost: list[str] = []
        self.finished: list[str] = []

    def run_started(self, sources: int, workers: int, dashboard: str | None) -> None:
        self.started = (sources, workers, dashboard)

    def requeued(self, source: str, times: int) -> None:
        self.requeues.append((source, times))

    def worker_lost(self, address: str) -> None:
        self.lost.append(address)

    def workers_changed(self, workers: int) -> None:
        pass

    def source_finished(self, summary: FinishedSource) -> None:
        self.finished.append(summary.source)
