"""``curator search``: full-text search over the store (FTS5 syntax, ranked by bm25)."""

from __future__ import annotations

from typing import Annotated

import typer

from curator.cli_context import open_db
from curator.commands.options import DbOption, JsonOption, check_kind
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, print_json, warn
from curator.presentation.search import hits_json, hits_table
from curator.search import SearchError, SearchRequest, parse_pair, run_search
from store.search import RANK_WINDOW

MAX_RESULTS = 1_000_000


def window_note(limit: int) -> str:
    """What a ranking cut to the newest matches says: the window is ``RANK_WINDOW``, or
    ``--limit`` when that is larger (curator.search.run_search)."""
    window = max(RANK_WINDOW, limit)
    return (
        f"more than {window:,} items match: ranked among the newest {window:,};"
        " narrow the query (a phrase, a column, --set) for a full ranking"
    )


def _kind(value: str | None) -> str | None:
    return None if value is None else check_kind(value)


def search_command(
    query: Annotated[
        str,
        typer.Argument(
            help='FTS5 query: words, "a phrase", prefix*, NEAR(a b, 5), column filters such'
            " as message: or diff: (empty with a filter: list what the filter keeps).",
        ),
    ],
    kind: Annotated[
        str | None,
        typer.Option("--kind", callback=_kind, help="Only commit, kernel or ir items."),
    ] = None,
    set_name: Annotated[str | None, typer.Option("--set", help="Only this set's items.")] = None,
    label: Annotated[
        str | None, typer.Option("--label", help="Only items --labeler gave this label.")
    ] = None,
    labeler: Annotated[
        str | None,
        typer.Option("--labeler", help="Whose label --label means: a labeler, annotator or final."),
    ] = None,
    disagree: Annotated[
        str | None,
        typer.Option(
            "--disagree",
            metavar="A,B",
            help="Only items where two sources of labels differ (labelers, annotators, final).",
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=MAX_RESULTS, help="How many results.")
    ] = 20,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Find items by their text: messages, diffs, kernel sources, IR text, vote notes."""
    try:
        pair = parse_pair(disagree) if disagree else None
    except SearchError as exc:
        fail(str(exc), EXIT_USAGE)
    request = SearchRequest(query, kind, set_name, label, labeler, pair, limit)
    with open_db(db, create=False) as store:
        try:
            found = run_search(store, request)
        except SearchError as exc:
            fail(str(exc))
    if as_json:
        print_json(hits_json(found.hits))
        if found.windowed:  # on stderr: the JSON on stdout stays a list of hits
            warn(window_note(limit))
        return
    if not found.hits:
        out.print("no item matches")
        return
    hits = found.hits
    out.print(hits_table(hits, f"{len(hits)} best matches" if len(hits) == limit else None))
    if found.windowed:
        out.print(window_note(limit))
