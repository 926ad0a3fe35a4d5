"""The bar a long schema migration shows on stderr (building the search indexes of a
large existing database): silent for small tables, one row per table otherwise."""

from __future__ import annotations

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from curator.console import err

SHOW_FROM = 10_000
"""Tables with fewer rows than this are migrated without a bar."""


class MigrationBar:
    """A ``progress(what, done, total)`` callback for ``open_store``; call :meth:`close`
    when the store is open."""

    def __init__(self) -> None:
        self.progress: Progress | None = None
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, what: str, done: int, total: int) -> None:
        if total < SHOW_FROM:
            return
        if self.progress is None:
            self.progress = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=False,
            )
            self.progress.start()
        if what not in self.tasks:
            self.tasks[what] = self.progress.add_task(f"indexing {what}", total=total)
        self.progress.update(self.tasks[what], completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
