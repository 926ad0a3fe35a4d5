"""``curator import items --label-field``: a labeled file to settled items in one step
(the work is ``annotation.labeled_import``); and what every file import shares: the
error and warning report, keyword pre-labeling, the progress bar and Ctrl-C's message."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from annotation.labeled_import import (
    FieldError,
    LabeledImport,
    LabeledSpec,
    MappingError,
    import_labeled_file,
    parse_mapping,
)
from annotation.labels import annotator_problem
from curator.cli_context import open_db
from curator.console import err, out
from curator.import_reading import ImportReading
from curator.presentation.cli_output import EXIT_INPUT, EXIT_USAGE, fail, print_json, warn
from curator.presentation.text import flat, labelled, one_line
from store.items import ImportedItem
from store.records import PredictionRow

if TYPE_CHECKING:
    from engines.labelers.keyword import KeywordLabeler

MAX_SHOWN = 20
SHOWN_PER_REASON = 5


def report_errors(errors: list[str], reasons: list[str] | None = None) -> None:
    """One line per bad row (the first twenty), then how many more. With each row's
    reason, the first five rows of each reason, then how many more failed that way."""
    if reasons is None:
        shown, more = errors[:MAX_SHOWN], {"errors": len(errors) - MAX_SHOWN}
    else:
        counts = Counter(reasons)
        seen: Counter[str] = Counter()
        shown = []
        for line, reason in zip(errors, reasons, strict=True):
            seen[reason] += 1
            if seen[reason] <= SHOWN_PER_REASON:
                shown.append(line)
        more = {
            f"rows failed the same way ({reason})": n - SHOWN_PER_REASON
            for reason, n in counts.items()
        }
    for line in shown:
        err.print(labelled("error", "red", one_line(line, 400)), soft_wrap=True)
    for what, n in more.items():
        if n > 0:
            err.print(f"... and {n} more {what}", soft_wrap=True)


@cache
def _keyword_labeler() -> KeywordLabeler:
    from engines.labelers.keyword import KeywordLabeler

    return KeywordLabeler()


def report_other_messages(lines: list[str]) -> None:
    """A warning for each of the first five items a file names by an id already stored
    with another message, then how many more."""
    for line in lines[:SHOWN_PER_REASON]:
        warn(line)
    if len(lines) > SHOWN_PER_REASON:
        warn(
            f"... and {len(lines) - SHOWN_PER_REASON} more ids already stored with another message"
        )


def keyword_prelabel(items: list[ImportedItem]) -> list[list[PredictionRow]]:
    """The keyword labeler's prediction for each item (its patterns compiled once, as
    an import calls this once per chunk of items)."""
    labeler = _keyword_labeler()
    predictions = labeler.predict([item.payload["message"] for item in items])
    return [[PredictionRow(labeler.name, p.label, p.score, p.details)] for p in predictions]


@contextmanager
def file_progress(path: Path) -> Iterator[Callable[[int, int], None]]:
    """A bar on a terminal's stderr while one file is checked, then written (gone when
    done); the callback takes (items written, items in the file)."""
    bar = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )
    task = bar.add_task(f"{flat(str(path))}: checking", total=None)

    def report(done: int, total: int) -> None:
        bar.update(task, description=f"{flat(str(path))}: writing", completed=done, total=total)

    with bar:
        yield report


def interrupted(path: Path) -> typer.Exit:
    """Say what a Ctrl-C left (the file's transaction is rolled back) and exit 130."""
    err.print(
        labelled(
            "interrupted",
            "yellow",
            one_line(str(path)),
            ": nothing of it stored (files before it are)",
        )
    )
    return typer.Exit(130)


def labeled_spec(
    kind: str,
    set_name: str | None,
    label_field: str,
    mapping: Sequence[str] | None,
    annotator: str,
    text_field: str | None,
    id_field: str | None,
    labels: list[str] | None,
) -> LabeledSpec:
    """Check the options of a labeled import; a usage error ends the command."""
    if kind != "commit":
        fail("--label-field imports commit messages (--kind commit)", EXIT_USAGE)
    if not set_name:
        fail("--label-field needs --set NAME: the set the labeled items go to", EXIT_USAGE)
    if not annotator.strip():
        fail("--annotator must name who the labels are recorded as", EXIT_USAGE)
    problem = annotator_problem(annotator.strip())
    if problem is not None:
        fail(f"--annotator: {problem}", EXIT_USAGE)
    try:
        parsed = parse_mapping(mapping)
    except MappingError as exc:
        fail(str(exc), EXIT_USAGE)
    return LabeledSpec(
        set_name=set_name,
        label_field=label_field,
        mapping=parsed,
        annotator=annotator.strip(),
        text_field=text_field,
        id_field=id_field,
        labels=labels,
    )


def labeled_items(
    files: list[Path], spec: LabeledSpec, prelabel: bool, as_json: bool, db: str | None
) -> None:
    """Import each labeled file; exit 1 when any row was left out."""
    results: list[tuple[Path, LabeledImport]] = []
    with open_db(db) as store:
        for path in files:
            reading = ImportReading()
            try:
                with file_progress(path) as progress:
                    result = import_labeled_file(
                        store,
                        path,
                        spec,
                        reading,
                        keyword_prelabel if prelabel else None,
                        progress,
                    )
            except KeyboardInterrupt:
                raise interrupted(path) from None
            except MappingError as exc:
                fail(f"{path}: {exc}", EXIT_USAGE if isinstance(exc, FieldError) else EXIT_INPUT)
            report_errors(result.errors, result.reasons)
            report_other_messages(result.other_message)
            if result.stored + result.known:
                reading.tell(str(path))
            results.append((path, result))
            if result.without_repo:
                warn(
                    f"{path}: {result.without_repo} items have no repository ('repo' field):"
                    " repository-disjoint splits (set split) cannot place them"
                )
    if as_json:
        print_json([_as_dict(path, r) for path, r in results])
    else:
        for path, r in results:
            out.print(_summary(path, r))
    if any(r.errors for _, r in results):
        raise typer.Exit(EXIT_INPUT)


def _as_dict(path: Path, r: LabeledImport) -> dict[str, object]:
    return {
        "file": str(path),
        "set": r.set_row.name if r.set_row is not None else None,
        "set_created": r.set_created,
        "stored": r.stored,
        "known": r.known,
        "added_to_set": r.added_to_set,
        "votes": r.votes,
        "unchanged": r.unchanged,
        "bad_rows": len(r.errors),
        "without_repo": r.without_repo,
        "other_message": r.other_message,
    }


def _summary(path: Path, r: LabeledImport) -> Text:
    if r.set_row is None:
        return Text.assemble(
            one_line(str(path)),
            f": nothing imported, no set created; {_bad_rows(len(r.errors))} left out",
        )
    return Text.assemble(
        one_line(str(path)),
        f": {r.stored} new, {r.known} already stored, {r.added_to_set} added to ",
        "created set " if r.set_created else "set ",
        one_line(r.set_row.name),
        f"; {r.votes} labels recorded ({r.unchanged} unchanged)",
        f", {_bad_rows(len(r.errors))} left out" if r.errors else "",
    )


def _bad_rows(n: int) -> str:
    return f"{n} bad row" if n == 1 else f"{n} bad rows"
