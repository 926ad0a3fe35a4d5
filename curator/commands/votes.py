"""``curator vote`` and ``curator undo``: one vote from the command line, and taking it back."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from annotation.gold import served_gold_set
from annotation.labels import DEFAULT_LABELS
from annotation.routing import submit
from annotation.votes import (
    VoteError,
    cast_vote,
    displaced_by,
    prepare_vote,
    resolve_item,
    undo,
)
from curator.cli_context import open_db, required_annotator
from curator.commands.options import AnnotatorOption, DbOption, JsonOption
from curator.console import out
from curator.presentation.cli_output import (
    EXIT_USAGE,
    fail,
    load_optional_set,
    print_json,
    warn,
)
from curator.presentation.text import one_line
from store.votes import ADJUDICATOR, has_undoable


def vote(
    item: Annotated[str, typer.Argument(help="The item's external id, or #N for its internal id.")],
    label: Annotated[
        str, typer.Argument(help="A label of the item's set, e.g. perf, non-perf, skip.")
    ],
    annotator: AnnotatorOption = None,
    category: Annotated[
        str | None,
        typer.Option("--category", help="Category slug, e.g. memory-inefficiency/memory-leak."),
    ] = None,
    note: Annotated[str | None, typer.Option("--note", help="A free-text note.")] = None,
    set_name: Annotated[str | None, typer.Option("--set", help="The set this vote is for.")] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="Item kind, when the id is ambiguous.")
    ] = None,
    adjudicate: Annotated[
        bool,
        typer.Option("--adjudicate", help="Vote as adjudicator: this vote settles a conflict."),
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Record one vote; the annotator's earlier vote on the item stays in the history."""
    who = required_annotator(annotator)
    if kind is not None and kind not in DEFAULT_LABELS:
        fail(f"--kind {kind!r}: use {', '.join(DEFAULT_LABELS)}", EXIT_USAGE)
    with open_db(db, create=False) as store:
        in_set = load_optional_set(store, set_name)
        try:
            target = resolve_item(store, item, kind)
            if in_set is None and not adjudicate:
                # `curator next` served it as hidden gold: the answer is for that set
                in_set = served_gold_set(store, target.id, who)
            if in_set is not None and not adjudicate:
                # Through routing: a claim's time is kept, a hidden gold item answered.
                done = submit(store, in_set, target.id, who, label, category, note)
                vote_id, stored = done.vote_id or done.gold_answer_id, done.label
                displaced = done.displaced
            else:
                row = prepare_vote(store, target, label, who, category, note, adjudicate, in_set)
                displaced = displaced_by(store, row)
                vote_id, stored = cast_vote(store, row), row.label or ""
        except VoteError as exc:
            fail(str(exc))
    role = "adjudication" if adjudicate else "vote"
    if displaced is not None:
        warn(displaced.sentence(who, target.key))
    if as_json:
        print_json({"id": vote_id, "role": role, "annotator": who, "label": stored,
                    "item": {"id": target.id, "key": target.key}})  # fmt: skip
        return
    out.print(
        Text.assemble(
            f"{role} {vote_id}: ",
            one_line(who),
            " -> ",
            one_line(stored),
            f" on item #{target.id} (",
            one_line(target.key, 60),
            ")",
        )
    )


def undo_command(
    annotator: AnnotatorOption = None,
    set_name: Annotated[
        str | None, typer.Option("--set", help="Only votes on this set's items.")
    ] = None,
    adjudicate: Annotated[bool, typer.Option("--adjudicate", help="Undo an adjudication.")] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Take back your latest vote (repeat to go further back); history is kept."""
    who = required_annotator(annotator)
    with open_db(db, create=False) as store:
        in_set = load_optional_set(store, set_name)
        result = undo(store, who, adjudicate, in_set)
        adjudicated = result is None and not adjudicate and has_undoable(store, who, ADJUDICATOR)
    if result is None:
        where = f" in set {in_set.name!r}" if in_set else ""
        hint = "; to take back an adjudication, add --adjudicate" if adjudicated else ""
        fail(f"nothing to undo for {who}{where}{hint}")
    restored = result.restored_label or "no vote"
    if as_json:
        print_json({"undone_vote": result.undone_vote_id, "item": result.item_id,
                    "undone_label": result.undone_label, "now": result.restored_label})  # fmt: skip
        return
    out.print(
        Text.assemble(
            f"undid vote {result.undone_vote_id} on item #{result.item_id} (",
            one_line(result.undone_label or ""),
            "); now: ",
            one_line(restored),
        )
    )
