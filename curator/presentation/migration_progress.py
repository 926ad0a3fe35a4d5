"""The bar a long schema migration shows on stderr (building the search indexes of a
large existing database, rewriting its rows): silent for small tables, one row per step
(``indexing commits``, ``messages kept whole``) otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from curator.console import err

if TYPE_CHECKING:
    from rich.progress import Progress

SHOW_FROM = 10_000
"""Tables with fewer rows than this are migrated without a bar."""


class MigrationBar:
    """A ``progress(what, done, total)`` callback for ``open_store``; call :meth:`close`
    when the store is open."""

    def __init__(self) -> None:
        self.progress: Progress | None = None
        self.tasks: dict[str, Any] = {}

    def __call__(self, what: str, done: int, total: int) -> None:
        if total < SHOW_FROM:
            return
        if self.progress is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

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
            # the search indexes' step names its tables; the other steps say what they do
            label = what if " " in what else f"indexing {what}"
            self.tasks[what] = self.progress.add_task(label, total=total)
        self.progress.update(self.tasks[what], completed=done)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
