"""``curator set edit`` and ``curator set gold``: a set's team settings after creation."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from annotation.gold import add_gold
from annotation.labels import LabelError, parse_labels
from annotation.sets import SetEdit, SetError, edit_set
from curator.cli_context import open_db
from curator.commands.options import MAX_VOTES_PER_ITEM, DbOption, JsonOption, check_overlap
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, load_set, print_json
from curator.presentation.text import one_line


def edit(
    name: Annotated[str, typer.Argument(help="The set to change.")],
    votes_per_item: Annotated[
        int | None,
        typer.Option(
            "--votes-per-item",
            min=1,
            max=MAX_VOTES_PER_ITEM,
            help="Votes an item needs before it settles.",
        ),
    ] = None,
    blind: Annotated[
        bool, typer.Option("--blind", help="Hide other annotators' votes from each annotator.")
    ] = False,
    open_votes: Annotated[
        bool, typer.Option("--open", help="Show annotators each other's votes.")
    ] = False,
    labels: Annotated[
        str | None, typer.Option("--labels", help="The set's labels, e.g. perf,non-perf,unsure.")
    ] = None,
    overlap: Annotated[
        str | None,
        typer.Option(
            "--overlap", callback=check_overlap, help="routed (each item to N annotators) or all."
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Change a set's votes per item, blindness, labels or overlap; items restate at once."""
    if blind and open_votes:  # as one --blind/--open flag, the last given would win unsaid
        fail("--blind and --open contradict each other: give one of them", EXIT_USAGE)
    hidden = True if blind else False if open_votes else None
    with open_db(db, create=False) as store:
        current = load_set(store, name)
        try:
            allowed = parse_labels(labels, current.kind) if labels else None
            row = edit_set(store, name, SetEdit(votes_per_item, hidden, allowed, overlap))
        except (SetError, LabelError) as exc:
            fail(str(exc), EXIT_USAGE)
    data = {
        "name": row.name,
        "votes_per_item": row.votes_per_item,
        "blind": row.blind,
        "labels": row.labels,
        "overlap": row.overlap,
    }
    if as_json:
        print_json(data)
        return
    out.print(
        Text.assemble(
            "set ",
            one_line(row.name),
            f": {row.votes_per_item} vote{'' if row.votes_per_item == 1 else 's'} per item,"
            f" {'blind' if row.blind else 'open'},",
            f" {row.overlap}, labels ",
            one_line(", ".join(row.labels)),
        )
    )


def gold(
    name: Annotated[str, typer.Argument(help="The set to mix gold items into.")],
    from_set: Annotated[
        str, typer.Option("--from", help="A set whose settled items give the known answers.")
    ],
    rate: Annotated[
        float, typer.Option("--rate", help="Share of each annotator's items that are gold.")
    ] = 0.05,
    seed: Annotated[int, typer.Option("--seed", help="Random seed of the draw.")] = 0,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Add hidden known-answer items to a set's queues (never counted as votes)."""
    with open_db(db, create=False) as store:
        try:
            result = add_gold(store, name, from_set, rate, seed)
        except SetError as exc:
            fail(str(exc))
    data = {
        "set": name,
        "from": from_set,
        "added": result.added,
        "gold_items": result.total,
        "rate": rate,
    }
    if as_json:
        print_json(data)
        return
    out.print(
        Text.assemble(
            f"{result.added} gold item{'' if result.added == 1 else 's'} added to ",
            one_line(name),
            f" ({result.total} in all, served at {rate:.1%} of each annotator's items)",
        )
    )
