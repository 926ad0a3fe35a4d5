"""``curator vote`` and ``curator undo``: one vote from the command line, and taking it back."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.text import Text

from annotation.votes import VoteError, cast_vote, prepare_vote, resolve_item, undo
from curator.commands.options import DbOption, open_db
from curator.commands.output import EXIT_USAGE, fail, load_optional_set
from curator.console import out
from curator.safe_text import one_line

AnnotatorOption = typer.Option(
    None,
    "--annotator",
    envvar="CURATOR_ANNOTATOR",
    help="Who is voting (default: $CURATOR_ANNOTATOR).",
    show_default=False,
)


def _annotator(name: str | None) -> str:
    name = (name or os.environ.get("CURATOR_ANNOTATOR") or "").strip()
    if not name:
        fail("say who is voting: --annotator NAME (or set CURATOR_ANNOTATOR)", EXIT_USAGE)
    return name


def vote(
    item: str = typer.Argument(..., help="The item's external id, or #N for its internal id."),
    label: str = typer.Argument(..., help="A label of the item's set, e.g. perf, non-perf, skip."),
    annotator: str | None = AnnotatorOption,
    category: str | None = typer.Option(
        None, "--category", help="Category slug, e.g. memory-inefficiency/memory-leak."
    ),
    note: str | None = typer.Option(None, "--note", help="A free-text note."),
    set_name: str | None = typer.Option(None, "--set", help="The set this vote is for."),
    kind: str | None = typer.Option(None, "--kind", help="Item kind, when the id is ambiguous."),
    adjudicate: bool = typer.Option(
        False, "--adjudicate", help="Vote as adjudicator: this vote settles a conflict."
    ),
    db: Path | None = DbOption,
) -> None:
    """Record one vote; the annotator's earlier vote on the item stays in the history."""
    who = _annotator(annotator)
    with open_db(db) as store:
        in_set = load_optional_set(store, set_name)
        try:
            target = resolve_item(store, item, kind)
            row = prepare_vote(store, target, label, who, category, note, adjudicate, in_set)
        except VoteError as exc:
            fail(str(exc))
        vote_id = cast_vote(store, row)
    role = "adjudication" if adjudicate else "vote"
    out.print(
        Text.assemble(
            f"{role} {vote_id}: ",
            one_line(who),
            " -> ",
            one_line(row.label or ""),
            f" on item #{target.id} (",
            one_line(target.key, 60),
            ")",
        )
    )


def undo_command(
    annotator: str | None = AnnotatorOption,
    set_name: str | None = typer.Option(None, "--set", help="Only votes on this set's items."),
    adjudicate: bool = typer.Option(False, "--adjudicate", help="Undo an adjudication."),
    db: Path | None = DbOption,
) -> None:
    """Take back your latest vote (repeat to go further back); history is kept."""
    who = _annotator(annotator)
    with open_db(db) as store:
        in_set = load_optional_set(store, set_name)
        result = undo(store, who, adjudicate, in_set)
    if result is None:
        fail(f"nothing to undo for {who}")
    restored = result.restored_label or "no vote"
    out.print(
        Text.assemble(
            f"undid vote {result.undone_vote_id} on item #{result.item_id} (",
            one_line(result.undone_label or ""),
            "); now: ",
            one_line(restored),
        )
    )
