"""``curator stats``: what the store holds, as rich tables or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.console import out
from curator.presentation.ir_tables import counts_table, print_ir_stats
from curator.presentation.text import one_line
from store.ir import ir_corpus_table
from store.kernels import kernel_reason_counts, kernel_verdict_counts
from store.stats import corpus_stats

CELL_WIDTH = 1000  # a source's path or URL is its name: kept whole, wrapped where narrow


def _table(title: str, header: tuple[str, ...], rows: list[tuple[object, ...]]) -> Table:
    """A stats table whose text cells are never cut short: two sources whose paths share
    their first 80 characters (or as many as a narrow terminal leaves) read as one."""
    table = Table(title=title, title_justify="left")
    numeric = [bool(rows) and all(isinstance(r[i], int) for r in rows) for i in range(len(header))]
    for name, is_number in zip(header, numeric, strict=True):
        table.add_column(name, justify="right" if is_number else "left", overflow="fold")
    for row in rows:
        table.add_row(*(one_line(str(cell), CELL_WIDTH) for cell in row))
    return table


def _ir_view(db: Path | None, as_json: bool) -> None:
    store = open_db(db, create=False)
    try:
        data = ir_corpus_table(store)
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=True))
    elif not any(data["counts"][k] for k in ("stored", "duplicates", "rejected", "filtered")):
        out.print("no IR modules yet: `curator mine ir PATH` brings some in", markup=False)
    else:
        print_ir_stats(data)


def _kernel_view(db: Path | None, as_json: bool) -> None:
    store = open_db(db, create=False)
    try:
        data = {"verdicts": kernel_verdict_counts(store), **kernel_reason_counts(store)}
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=True))
        return
    if not data["verdicts"] and not data["refusals"]:
        out.print("no kernels yet: `curator mine kernels PATH` brings some in", markup=False)
        return
    out.print(_table("Kernels by verdict", ("verdict", "kernels"), list(data["verdicts"].items())))
    out.print(
        _table("Refused kernels by reason", ("reason", "kernels"), list(data["refusals"].items()))
    )
    rows = [(*key.split(" / ", 1), n) for key, n in data["verdicts_by_policy"].items()]
    if not rows:
        out.print(
            "no kernel checked yet: `curator check kernels --unchecked` runs them", markup=False
        )
        return
    out.print(
        _table(
            "Checked kernels by verdict and payload policy", ("verdict", "policy", "kernels"), rows
        )
    )


# `--kind NAME`: a kind's own statistics instead of the overview.
KIND_VIEWS: dict[str, Callable[[Path | None, bool], None]] = {
    "ir": _ir_view,
    "kernel": _kernel_view,
}


def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind", help="One kind's own statistics instead of the overview: ir, kernel."
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Counts by kind, language, source, labeler and label."""
    if kind is not None:
        if kind not in KIND_VIEWS:
            raise typer.BadParameter(
                f"{kind!r}: choose one of {', '.join(sorted(KIND_VIEWS))}", param_hint="--kind"
            )
        KIND_VIEWS[kind](db, as_json)
        return
    store = open_db(db, create=False)
    try:
        data = corpus_stats(store)
    finally:
        store.close()
    if as_json:
        # ensure_ascii: control characters in source paths leave as \u escapes
        typer.echo(json.dumps(data, indent=2, ensure_ascii=True))
        return
    _print_overview(data)


def _votes(data: dict[str, Any]) -> str:
    """The live votes, and the recorded ones when undos and changed votes make them more."""
    live, recorded = data["live_votes"], data["votes"]
    if live == recorded:
        return f"{live} votes"
    return f"{live} live votes ({recorded} recorded, undone and replaced ones too)"


def _print_overview(data: dict[str, Any]) -> None:
    out.print(
        Text.assemble(
            "database ",
            one_line(data["database"]),
            f" (schema v{data['schema_version']}): {data['items']} items,"
            f" {_votes(data)}, {data['sets']} sets",
        )
    )
    if data["items"]:
        _print_items(data)
    else:
        out.print(
            "no items yet: `curator mine commits`, `curator mine kernels`, `curator mine ir`"
            " or `curator import items` bring some in",
            markup=False,
            soft_wrap=True,
        )
    if data["mining"]:
        runs = _table(
            "Mining runs (latest filters per source)",
            ("source", "seen", "filtered", "duplicates", "stored"),
            [
                (
                    source.split(":", 1)[1],
                    c.get("seen", 0),
                    sum(c.get("filtered", {}).values()),
                    c.get("duplicates", 0),
                    c.get("stored", 0),
                )
                for source, c in data["mining"].items()
            ],
        )
        runs.caption = "stored: the items held from the source, whichever run stored them"
        out.print(runs)
    if any(data["ir"][k] for k in ("stored", "duplicates", "rejected", "filtered")):
        out.print(counts_table(data["ir"]))
    if data["kernels_by_verdict"]:
        out.print(
            _table(
                "Kernels by verdict",
                ("verdict", "kernels"),
                list(data["kernels_by_verdict"].items()),
            )
        )
    if data["duplicates"]:
        out.print(
            _table("Duplicates linked", ("kind", "duplicates"), list(data["duplicates"].items()))
        )


def _print_items(data: dict[str, Any]) -> None:
    out.print(_table("Items by kind", ("kind", "items"), list(data["by_kind"].items())))
    out.print(
        _table(
            "Items by language",
            ("kind", "language", "items"),
            [(k, lang, n) for k, langs in data["by_language"].items() for lang, n in langs.items()],
        )
    )
    out.print(_table("Items by source", ("source", "items"), list(data["by_source"].items())))
    if data["predictions"]:
        out.print(
            _table(
                "Predictions by labeler and label",
                ("labeler", "label", "predictions"),
                [
                    (lb, label, n)
                    for lb, labels in data["predictions"].items()
                    for label, n in labels.items()
                ],
            )
        )
