"""How the per-source miners (commits, kernels) report progress; the CLI draws it."""

from __future__ import annotations

from typing import Protocol


class FinishedSource(Protocol):
    """What a reporter needs of a source's summary: its name and why it failed, if it did."""

    source: str
    failed: str | None


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
