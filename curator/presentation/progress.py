"""Progress display shared by the miners: one bar per source, problems printed above.

A display made with ``drawn_by_reporter=True`` starts no thread of its own: its
reporter redraws it (at most every ``REDRAW_S``) as the run reports. A commit mining
run needs that: its extraction workers are forked only from a process that runs a
single thread (see :mod:`engines.commits.worker_process`).
"""

from __future__ import annotations

import time
from collections import Counter

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
from curator.presentation.cli_output import warn
from curator.presentation.text import labelled, one_line
from engines.reporting import FinishedSource


class RateColumn(ProgressColumn):
    """Units per second as rich measures it over this run's recent advances (units done
    by an earlier, resumed run are the bar's start, not a sample)."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit", self.unit)
        if not unit:
            return Text("")
        speed = task.finished_speed or task.speed
        shown = "--" if speed is None else f"{speed:,.1f}"
        return Text(f"{shown} {unit}/s", "progress.data.speed")


REDRAW_S = 0.1


def cluster_progress(drawn_by_reporter: bool = False) -> Progress:
    """Two rows for a cluster run: repositories (count, ETA, failures) and commits
    (count, rate)."""
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=16),
        MofNCompleteColumn(),
        RateColumn(""),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}", markup=False, style="red"),
        console=err,
        transient=False,
        auto_refresh=not drawn_by_reporter,
    )


def source_progress(rate_unit: str | None = None, drawn_by_reporter: bool = False) -> Progress:
    """Bars on stderr: description (shown literally), bar, count, rate, elapsed, ETA."""
    columns: list[ProgressColumn] = [
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if rate_unit:
        columns.append(RateColumn(rate_unit))
    columns += [TimeElapsedColumn(), TimeRemainingColumn()]
    return Progress(*columns, console=err, transient=False, auto_refresh=not drawn_by_reporter)


class _Redrawn:
    """A reporter that redraws its display when the display has no thread doing it."""

    progress: Progress
    _drawn: float = 0.0

    def _redraw(self, now: bool = False) -> None:
        if self.progress.live.auto_refresh:
            return
        moment = time.monotonic()
        if now or moment - self._drawn >= REDRAW_S:
            self._drawn = moment
            self.progress.refresh()


def training_bar() -> Progress:
    """One bar for a training run (or each run of a learning curve): what it is doing,
    steps done of all, a free ``status`` field (loss, dev F1), elapsed and remaining."""
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}", markup=False),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
    )


class SourceReporter(_Redrawn):
    """The reporter the commit and kernel pipelines call: a bar per source, a warning
    line per problem, an error line for a source that could not be mined."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.problems = 0

    def source_started(self, source: str, total: int, done: int) -> None:
        self.tasks[source] = self.progress.add_task(
            one_line(source, 50).plain, total=max(total, done), completed=done
        )
        self._redraw(now=True)

    def advance(self, source: str, count: int) -> None:
        self.progress.advance(self.tasks[source], count)
        self._redraw()

    def problem(self, text: str) -> None:
        self.problems += 1
        warn(text, self.progress.console, 300)

    def source_finished(self, summary: FinishedSource) -> None:
        if summary.failed:
            self.progress.console.print(
                labelled(
                    "error", "red", one_line(summary.source, 120), ": ", one_line(summary.failed)
                )
            )
        task = self.tasks.get(summary.source)
        if task is not None and summary.failed:
            # the bar stays where the source stopped: it was not all done
            failed = f"{one_line(summary.source, 50).plain}: failed"
            self.progress.update(task, description=failed)
        elif task is not None:
            self.progress.update(task, completed=self.progress.tasks[task].total or 0)
        self._redraw(now=True)


class ClusterProgress(_Redrawn):
    """The reporter of a cluster run (and of an in-process run over a long list): one
    bar of repositories done out of the total (with its ETA), one count of commits
    examined (with commits/s), failures by reason in the repositories' line, a line per
    problem, and the dashboard's address."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.repos: TaskID | None = None
        self.commits: TaskID | None = None
        self.failures: Counter[str] = Counter()

    def run_started(self, sources: int, workers: int, dashboard: str | None) -> None:
        """Draw the two rows; ``workers`` 0 is an in-process run (no cluster line)."""
        if workers:
            where = f"dashboard {dashboard}" if dashboard else "no dashboard (pip install bokeh)"
            self.progress.console.print(
                labelled("cluster", "cyan", f"{workers} worker{'s' * (workers != 1)}, {where}")
            )
        self.repos = self.progress.add_task("repositories", total=max(sources, 1), note="")
        self.commits = self.progress.add_task("commits", total=None, unit="commits", note="")

    def source_started(self, source: str, total: int, done: int) -> None:
        pass  # an in-process run over a long list: only the totals are drawn

    def advance(self, source: str, count: int) -> None:
        if self.commits is not None:
            self.progress.advance(self.commits, count)
        self._redraw()

    def problem(self, text: str) -> None:
        warn(text, self.progress.console, 300)

    def worker_lost(self, address: str) -> None:
        self.failures["worker-lost"] += 1
        self._describe()
        self.progress.console.print(
            labelled(
                "warning",
                "yellow",
                one_line(address, 80),
                " left the cluster; the work it held runs again elsewhere",
            )
        )

    def requeued(self, source: str, times: int) -> None:
        self.progress.console.print(
            labelled(
                "redone",
                "yellow",
                one_line(source, 120),
                f": its slice ran again after its worker was lost ({times}x); nothing was lost",
            )
        )

    def workers_changed(self, workers: int) -> None:
        noun = "worker" if workers == 1 else "workers"
        self.progress.console.print(labelled("cluster", "cyan", f"{workers} {noun} now"))

    def source_finished(self, summary: FinishedSource) -> None:
        if summary.failed:
            reason = getattr(summary, "reason", None) or "error"
            self.failures[reason] += 1
            self.progress.console.print(
                labelled(
                    "error", "red", one_line(summary.source, 120), ": ", one_line(summary.failed)
                )
            )
            self._describe()
        if self.repos is not None:
            self.progress.advance(self.repos, 1)
        self._redraw(now=True)

    def _describe(self) -> None:
        if self.repos is None:
            return
        shown = ", ".join(f"{reason} {n}" for reason, n in sorted(self.failures.items()))
        self.progress.update(self.repos, note=f"failed: {shown}")
