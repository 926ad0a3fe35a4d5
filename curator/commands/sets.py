"""``curator set``: create sampled or split sets, list them, show one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from annotation.labels import LabelError, parse_labels
from annotation.routing import progress, states_of
from annotation.sampling import SamplingError
from annotation.sets import (
    DrawSpec,
    SetError,
    check_preference,
    create_sampled_set,
    create_split,
    without_repository,
)
from annotation.splits import SplitError, parse_parts
from curator.cli_context import open_db
from curator.commands import set_team
from curator.commands.options import (
    MAX_VOTES_PER_ITEM,
    DbOption,
    JsonOption,
    KindOption,
    OverlapOption,
    check_new_set_name,
    split_fields,
)
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, load_set, print_json, warn
from curator.presentation.tables import table
from curator.presentation.text import one_line
from curator.search import SET_LIMIT, SearchError, SearchRequest, create_set_from_search
from store.sets import SetRow, all_sets, set_progress

app = typer.Typer(help="Create and inspect sets of items to label.", no_args_is_help=True)


@app.command("create")
def create(
    name: Annotated[
        str,
        typer.Argument(callback=check_new_set_name, help="Name of the new set, e.g. gt-eval."),
    ],
    kind: KindOption = "commit",
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample", min=1, help="How many items to draw (default: every qualifying item)."
        ),
    ] = None,
    stratify: Annotated[
        str | None,
        typer.Option(
            "--stratify",
            help="Comma-separated strata: language, repo, stars, keyword, pred:LABELER.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Random seed; the same seed redraws the same set.")
    ] = 0,
    exclude_repos_of: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-repos-of", help="Leave out every repository used by this set (repeatable)."
        ),
    ] = None,
    balanced: Annotated[
        str | None,
        typer.Option(
            "--balanced",
            metavar="LABELER",
            help="Draw half from LABELER's positives and half from its negatives.",
        ),
    ] = None,
    from_set: Annotated[
        str | None, typer.Option("--from-set", help="Draw only from this set.")
    ] = None,
    language: Annotated[
        list[str] | None, typer.Option("--language", help="Only this language (repeatable).")
    ] = None,
    prefer: Annotated[
        str | None,
        typer.Option(
            "--prefer",
            help="uncertain: draw the items --labeler is least sure about, most uncertain first.",
        ),
    ] = None,
    labeler: Annotated[
        str | None,
        typer.Option("--labeler", help="The labeler --prefer reads, e.g. student@latest."),
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels", help="Allowed labels, e.g. perf,non-perf (skip is always allowed)."
        ),
    ] = None,
    open_votes: Annotated[
        bool, typer.Option("--open", help="Not blind: annotators may see each other's votes.")
    ] = False,
    votes_per_item: Annotated[
        int,
        typer.Option(
            "--votes-per-item",
            min=1,
            max=MAX_VOTES_PER_ITEM,
            help="Votes an item needs before it can settle.",
        ),
    ] = 2,
    from_search: Annotated[
        str | None,
        typer.Option(
            "--from-search",
            metavar="QUERY",
            help="The items a full-text search finds (best first; --sample caps how many).",
        ),
    ] = None,
    overlap: OverlapOption = "routed",
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Draw a set of items to label: seeded, stratified, repository-disjoint if asked."""
    try:
        allowed = parse_labels(labels, kind)
    except LabelError as exc:
        fail(str(exc), EXIT_USAGE)
    if labeler is not None and prefer is None and from_search is None:
        fail(
            "--labeler is for --prefer uncertain (the labeler it reads), not a draw without"
            " --prefer (--balanced LABELER and --stratify pred:LABELER name their own)",
            EXIT_USAGE,
        )
    if from_search is not None:
        _refuse_draw_options(
            (
                ("--stratify", stratify),
                ("--seed", seed != 0),
                ("--exclude-repos-of", exclude_repos_of),
                ("--balanced", balanced),
                ("--language", language),
                ("--prefer", prefer),
                ("--labeler", labeler),
            )
        )
        _from_search(
            name,
            from_search,
            kind,
            sample,
            from_set,
            allowed,
            (open_votes, votes_per_item, overlap),
            db,
        )
        return
    spec = DrawSpec(
        kind=kind,
        sample=sample,
        stratify=split_fields(stratify),
        seed=seed,
        exclude_repos_of=list(exclude_repos_of or []),
        balanced=balanced,
        within=from_set,
        languages=list(language or []),
        prefer=prefer,
        labeler=labeler,
    )
    try:
        check_preference(spec)
    except SetError as exc:
        fail(str(exc), EXIT_USAGE)
    with open_db(db, create=False) as store:
        try:
            row, allocation = create_sampled_set(
                store, name, spec, allowed, not open_votes, votes_per_item, overlap=overlap
            )
        except (SetError, SamplingError) as exc:
            fail(str(exc))
        size = sum(allocation.values())
    _print_created(row, size, allocation, as_json)


def _refuse_draw_options(options: tuple[tuple[str, object], ...]) -> None:
    """A search set holds what the query finds, best first: the draw's options would be
    dropped without a word (--exclude-repos-of then leaks the repositories)."""
    unused = [flag for flag, given in options if given]
    if unused:
        fail(
            f"--from-search does not take {', '.join(unused)}: the set holds what the"
            " query finds, best first (narrow it with the query, --kind, --from-set"
            " and --sample)",
            EXIT_USAGE,
        )


def _print_created(row: SetRow, size: int, allocation: dict[str, int], as_json: bool) -> None:
    if as_json:
        print_json({**_set_json(row), "items": size, "allocation": allocation})
        return
    out.print(
        Text.assemble(
            "created set ",
            one_line(row.name),
            f" ({row.kind}, {size} items, labels ",
            one_line(", ".join(row.labels)),
            ", blind" if row.blind else ", open",
            f", {row.votes_per_item} vote{'' if row.votes_per_item == 1 else 's'} per item,"
            f" {row.overlap}",
            ")",
        )
    )
    draw = row.params["draw"]
    if draw.get("prefer"):
        out.print(
            Text.assemble(
                "ordered by the uncertainty of ",
                one_line(str(draw["labeler"])),
                ", most uncertain first",
            )
        )
    if len(allocation) > 1:
        out.print(table("Items per stratum", ("stratum", "items"), list(allocation.items())))


def _from_search(
    name: str,
    query: str,
    kind: str,
    sample: int | None,
    within: str | None,
    allowed: list[str] | None,
    routing: tuple[bool, int, str],
    db: Path | None,
) -> None:
    open_votes, votes_per_item, overlap = routing
    request = SearchRequest(query, kind, within, limit=sample or SET_LIMIT)
    with open_db(db, create=False) as store:
        try:
            row = create_set_from_search(
                store, name, request, allowed, not open_votes, votes_per_item, overlap
            )
        except SearchError as exc:
            fail(str(exc))
        size = set_progress(store, row.id)["items"]
    out.print(
        Text.assemble(
            "created set ",
            one_line(row.name),
            f" ({row.kind}, {size} items found by ",
            one_line(query, 80),
            ", best match first)",
        )
    )


@app.command("split")
def split(
    into: Annotated[
        str, typer.Option("--into", help="Parts and weights, e.g. gt-dev:10,gt-eval:10,train:80.")
    ],
    kind: KindOption = "commit",
    seed: Annotated[
        int, typer.Option("--seed", help="Random seed for assigning repositories.")
    ] = 0,
    from_set: Annotated[
        str | None, typer.Option("--from-set", help="Split this set's items.")
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option("--labels", help="Allowed labels of every part (default: the --from-set's)."),
    ] = None,
    open_votes: Annotated[bool, typer.Option("--open", help="Parts are not blind.")] = False,
    votes_per_item: Annotated[
        int | None,
        typer.Option(
            "--votes-per-item",
            min=1,
            max=MAX_VOTES_PER_ITEM,
            help="Votes each item needs (default: the --from-set's, else 2).",
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Split items into sets whose repositories never overlap (no leakage)."""
    try:
        parts = parse_parts(into)
        allowed = parse_labels(labels, kind) if labels else None
    except (SplitError, LabelError) as exc:
        fail(str(exc), EXIT_USAGE)
    with open_db(db, create=False) as store:
        try:
            created = create_split(
                store, kind, parts, seed, from_set, allowed, not open_votes, votes_per_item
            )
        except SetError as exc:
            fail(str(exc))
        rows = [
            (s.name, f"{100 * s.params['split']['share']:.1f}%", set_progress(store, s.id)["items"])
            for s in created
        ]
        loose = without_repository(store, kind, from_set)
    if loose:
        warn(
            f"{loose} items have no repository (imported without 'repo'): each file's such"
            " items stay together in one part, so the parts' shares may be off"
        )
    if as_json:
        print_json([{**_set_json(s), "items": r[2]} for s, r in zip(created, rows, strict=True)])
        return
    out.print(table("Repository-disjoint split", ("set", "target share", "items"), rows))


def _set_json(row: SetRow) -> dict[str, object]:
    return {
        "name": row.name,
        "kind": row.kind,
        "labels": row.labels,
        "blind": row.blind,
        "votes_per_item": row.votes_per_item,
        "overlap": row.overlap,
        "params": row.params,
    }


@app.command("list")
def list_sets(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Every set with its kind, purpose, size and voting progress."""
    with open_db(db, create=False) as store:
        data = []
        for s in all_sets(store):
            data.append(
                {
                    "name": s.name,
                    "kind": s.kind,
                    "purpose": s.purpose,
                    "blind": s.blind,
                    "labels": s.labels,
                    "votes_per_item": s.votes_per_item,
                    "overlap": s.overlap,
                    **progress(store, s),
                }
            )
    if as_json:
        print_json(data)
        return
    if not data:
        out.print("no sets yet: create one with `curator set create NAME --sample N`")
        return
    out.print(
        table(
            "Sets",
            ("set", "kind", "purpose", "items", "items voted", "votes", "blind"),
            [
                (
                    d["name"],
                    d["kind"],
                    d["purpose"],
                    d["items"],
                    d["voted_items"],
                    d["votes"],
                    "yes" if d["blind"] else "no",
                )
                for d in data
            ],
        )
    )


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The set.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """A set's parameters (how to re-derive it), labels, categories and progress."""
    with open_db(db, create=False) as store:
        s = load_set(store, name)
        counted = progress(store, s)
        states = states_of(store, s)
    data = {
        "name": s.name,
        "kind": s.kind,
        "purpose": s.purpose,
        "blind": s.blind,
        "labels": s.labels,
        "categories": s.categories,
        "votes_per_item": s.votes_per_item,
        "overlap": s.overlap,
        "description": s.description,
        "created_at": s.created_at,
        "params": s.params,
        "progress": counted,
        "decisions": states,
    }
    if as_json:
        print_json(data)
        return
    out.print(
        table(
            f"Set {s.name}",
            ("field", "value"),
            [
                (k, data[k])
                for k in ("kind", "purpose", "blind", "votes_per_item", "overlap", "created_at")
            ]
            + [("labels", ", ".join(s.labels) + ", skip")]
            + [(k, v) for k, v in counted.items()]
            + [(k, v) for k, v in states.items()]
            + [(f"param {k}", v) for k, v in s.params.items()],
        )
    )
    if s.categories:
        out.print(one_line("categories: " + ", ".join(s.categories), 10_000))


app.command("edit")(set_team.edit)
app.command("gold")(set_team.gold)
