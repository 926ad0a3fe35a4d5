"""``curator next``: claim the next routed item of a set, for scripts and other front ends."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from annotation.routing import release, serve_next
from annotation.votes import VoteError
from curator.cli_context import open_db, required_annotator, settings
from curator.commands.options import AnnotatorOption, DbOption, JsonOption
from curator.console import out
from curator.presentation.cli_output import fail, load_set, print_json
from curator.presentation.text import one_line
from curator.settings import MAX_LEASE_MINUTES
from store.items import find_by_id, item_summaries


def next_command(
    set_name: Annotated[str, typer.Argument(help="The set to work on.")],
    annotator: AnnotatorOption = None,
    lease: Annotated[
        int | None,
        typer.Option(
            "--lease",
            min=1,
            max=MAX_LEASE_MINUTES,
            help="Minutes to hold the item (default: annotation.lease_minutes).",
        ),
    ] = None,
    release_claims: Annotated[
        bool, typer.Option("--release", help="Give back your claims on the set instead.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Claim your next item of a set (routing decides which) and print it; vote on it
    with `curator vote ITEM LABEL --set SET`."""
    who = required_annotator(annotator)
    minutes = lease or settings().lease_minutes
    with open_db(db, create=False) as store:
        set_row = load_set(store, set_name)
        if release_claims:
            freed = release(store, set_row, who)
            if as_json:
                print_json({"released": freed})
            else:
                out.print(f"released {freed} claim{'' if freed == 1 else 's'}")
            return
        try:
            served = serve_next(store, set_row, who, lease_minutes=minutes)
        except VoteError as exc:
            fail(str(exc))
        item = find_by_id(store, served.entry.item_id) if served else None
        summary = item_summaries(store, [item.id]).get(item.id, {}) if item else {}
    if served is None or item is None:
        if as_json:
            print_json({"set": set_row.name, "annotator": who, "item": None})
        else:
            out.print(Text.assemble("nothing left for ", one_line(who), " in ", one_line(set_name)))
        return
    data = {
        "set": set_row.name,
        "annotator": who,
        "item": {
            "id": item.id,
            "key": item.key,
            "kind": item.kind,
            "source": item.source,
            "title": summary.get("title", ""),
        },
        "labels": set_row.labels,
        "lease_minutes": minutes,
    }
    if as_json:
        print_json(data)
        return
    out.print(
        Text.assemble(
            "claimed item #", str(item.id), " (", one_line(item.key, 60), ") for ", one_line(who)
        )
    )
    if summary.get("title"):
        out.print(Text.assemble("  ", one_line(summary["title"], 120)))
