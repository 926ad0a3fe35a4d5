"""Progress display shared by the miners: one bar per source, problems printed above."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from curator.console import err
from curator.safe_text import labelled, one_line
from engines.reporting import FinishedSource


class RateColumn(ProgressColumn):
    """Units per second as rich measures it over this run's recent advances (units done
    by an earlier, resumed run are the bar's start, not a sample)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        shown = "--" if speed is None else f"{speed:,.1f}"
        return Text(f"{shown} {self.unit}/s", "progress.data.speed")


def source_progress(rate_unit: str | None = None) -> Progress:
    """Bars on stderr: description (shown literally), bar, count, rate, elapsed, ETA."""
    columns: list[ProgressColumn] = [
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if rate_unit:
        columns.append(RateColumn(rate_unit))
    columns += [TimeElapsedColumn(), TimeRemainingColumn()]
    return Progress(*columns, console=err, transient=False)


class SourceReporter:
    """The reporter the commit and kernel pipelines call: a bar per source, a warning
    line per problem, an error line for a source that could not be mined."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.problems = 0

    def source_started(self, source: str, total: int, done: int) -> None:
        self.tasks[source] = self.progress.add_task(
            one_line(source, 50).plain, total=max(total, done, 1), completed=done
        )

    def advance(self, source: str, count: int) -> None:
        self.progress.advance(self.tasks[source], count)

    def problem(self, text: str) -> None:
        self.problems += 1
        self.progress.console.print(labelled("warning", "yellow", one_line(text, 300)))

    def source_finished(self, summary: FinishedSource) -> None:
        if summary.failed:
            self.progress.console.print(
                labelled(
                    "error", "red", one_line(summary.source, 120), ": ", one_line(summary.failed)
                )
            )
        task = self.tasks.get(summary.source)
        if task is not None:
            self.progress.update(task, completed=self.progress.tasks[task].total or 0)
