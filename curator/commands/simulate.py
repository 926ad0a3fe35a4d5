"""``curator simulate active-learning``: how fast the in-loop model learns when the queue
is re-ranked as votes arrive, against a fixed order and a random one, measured with a
simulated annotator on labeled data (see :mod:`curator.al_simulation`); the result is
kept in the store, where the app's Train screen draws it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import TaskID
from rich.table import Table
from rich.text import Text

from annotation.compressed import data_suffix
from annotation.labeled_import import MappingError, parse_mapping
from curator.al_simulation import (
    SEED_VOTES,
    SimulationError,
    SimulationRequest,
    SimulationResult,
    labeled_from_file,
    labeled_from_set,
    simulate,
    store_result,
)
from curator.cli_context import open_db
from curator.commands.options import DbOption, JsonOption
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, print_json, warn
from curator.presentation.format import number
from curator.presentation.progress import source_progress
from store import Store

app = typer.Typer(
    help="Simulate an annotator on labeled data and keep the result.", no_args_is_help=True
)

SHOWN_SKIPS = 5
"""Bad rows of a file named one by one; the rest are counted."""

SourceArg = Annotated[
    str,
    typer.Argument(help="The pool: a commit set with settled items, or a labeled JSONL/CSV file."),
]


def _labeled(
    store: Store,
    source: str,
    label_field: str,
    mapping: Sequence[str] | None,
    text_field: str | None,
) -> list[tuple[str, str]]:
    """A set's settled items, or a file's rows when ``source`` is a file."""
    path = Path(source)
    if path.is_file():
        skipped: list[str] = []
        try:
            rows = labeled_from_file(path, label_field, parse_mapping(mapping), text_field, skipped)
        except MappingError as exc:
            fail(str(exc), EXIT_USAGE)
        for line in skipped[:SHOWN_SKIPS]:
            warn(f"{line}; row skipped")
        if len(skipped) > SHOWN_SKIPS:
            warn(f"{path}: {len(skipped) - SHOWN_SKIPS} more rows skipped")
        return rows
    if data_suffix(path) in (".jsonl", ".json", ".csv", ".tsv"):
        fail(f"{source}: no such file")
    return labeled_from_set(store, source)


def _check_file_options(
    sources: Sequence[str], label_field: str, mapping: Sequence[str] | None, text: str | None
) -> None:
    """Refuse the options that read labeled files when neither source is a file: they
    would be ignored without a word."""
    if any(Path(s).is_file() for s in sources):
        return
    given = [
        flag
        for flag, on in (
            ("--label-field", label_field != "label"),
            ("--map", bool(mapping)),
            ("--text-field", text is not None),
        )
        if on
    ]
    if given:
        fail(
            f"{', '.join(given)}: for labeled files only, and the pool {sources[0]} and"
            f" --eval {sources[1]} are sets (their items carry their settled labels)",
            EXIT_USAGE,
        )


def _warn_overlap(pool: Sequence[tuple[str, str]], test: Sequence[tuple[str, str]]) -> None:
    """A pool that holds items of the eval scores the model on what it learned from."""
    seen = {text for text, _ in pool}
    shared = sum(1 for text, _ in test if text in seen)
    if shared:
        warn(
            f"{shared} of the {len(test)} eval items are also in the pool: the curve scores"
            " the model partly on items it learned from (give an --eval the pool lacks)"
        )


def result_table(result: SimulationResult) -> Table:
    """F1 per number of votes, one column per order."""
    orders = list(result.curves)
    grid = Table(title="F1 against votes", title_justify="left")
    grid.add_column("votes", justify="right")
    for order in orders:
        grid.add_column(order, justify="right")
    for j, (n, _) in enumerate(result.curves[orders[0]]):
        grid.add_row(str(n), *(number(result.curves[o][j][1], 3) for o in orders))
    return grid


MAX_VOTES = 1_000_000
"""More simulated votes than any pool holds (a larger --every could not be stored)."""


@app.command("active-learning")
def active_learning(
    pool: SourceArg,
    eval_source: Annotated[
        str, typer.Option("--eval", help="Scored on: a commit set or a labeled file.")
    ],
    votes: Annotated[
        int, typer.Option("--votes", min=1, max=MAX_VOTES, help="Votes in all.")
    ] = 400,
    every: Annotated[
        int, typer.Option("--every", min=1, max=MAX_VOTES, help="Votes between re-ranks (K).")
    ] = 20,
    seeds: Annotated[int, typer.Option("--seeds", min=1, max=100, help="Runs averaged.")] = 3,
    seed_votes: Annotated[
        int,
        typer.Option(
            "--seed-votes", min=2, max=MAX_VOTES, help="Random votes before the first re-rank."
        ),
    ] = SEED_VOTES,
    label_field: Annotated[
        str, typer.Option("--label-field", help="Files: the label's field.")
    ] = "label",
    mapping: Annotated[
        list[str] | None,
        typer.Option(
            "--map", help="Files: VALUE=LABEL pairs, e.g. 1=perf,0=non-perf (repeatable)."
        ),
    ] = None,
    text_field: Annotated[
        str | None, typer.Option("--text-field", help="Files: the text's field.")
    ] = None,
    keep: Annotated[
        bool, typer.Option("--store/--no-store", help="Keep the result in the store.")
    ] = True,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Simulate active learning on labeled data: F1 against votes for three queue orders.

    A simulated annotator votes the pool's true labels K at a time; the in-loop model is
    refitted and scored on --eval after every K votes, with the queue re-ranked by its
    uncertainty (rerank), ordered once by the seed votes' model (fixed) or random. The
    curves (mean over --seeds) are kept in the store: the app's Train screen draws the
    newest, as does `curator chart active-learning`."""
    _check_file_options((pool, eval_source), label_field, mapping, text_field)
    with open_db(db, create=False) as store:
        try:
            pool_rows = _labeled(store, pool, label_field, mapping, text_field)
            eval_rows = _labeled(store, eval_source, label_field, mapping, text_field)
            _warn_overlap(pool_rows, eval_rows)
            request = SimulationRequest(
                pool_rows,
                eval_rows,
                votes=votes,
                every=every,
                seeds=seeds,
                seed_votes=seed_votes,
                names=(pool, eval_source),
            )
            bar = source_progress()
            task: list[TaskID] = []

            def progress(what: str, done: int, total: int) -> None:
                if not task:
                    bar.start()
                    task.append(bar.add_task("simulating", total=total))
                bar.update(task[0], completed=done, description=what)

            try:
                result = simulate(request, progress)
            finally:
                bar.stop()
        except SimulationError as exc:
            fail(str(exc))
        named = [Path(s).name if Path(s).is_file() else s for s in (pool, eval_source)]
        row = store_result(store, *named, request, result) if keep else None
    if as_json:
        print_json({**result.as_json(), "stored": row.id if row else None})
        return
    out.print(result_table(result))
    if row is not None:
        out.print(
            Text(
                f"stored as simulation #{row.id}: the app's Train screen (m on the home"
                " screen) and `curator chart active-learning` draw it"
            )
        )
