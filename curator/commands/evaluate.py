"""``curator eval``: labelers scored against a set's final labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from annotation.evaluation import Evaluation
from annotation.set_reports import GROUP_FIELDS, evaluate_on_set, evaluate_on_set_by
from annotation.sets import SetError
from annotation.training_data import unsettled_text
from curator.cli_context import open_db
from curator.commands.options import DbOption, RuleOption, given_path
from curator.console import out
from curator.prediction import forced_warning, input_warning, stored_labeler
from curator.presentation import eval_table
from curator.presentation.cli_output import (
    EXIT_USAGE,
    fail,
    load_set,
    print_json,
    same_output,
    to_stdout,
    warn,
    write_output,
)
from curator.presentation.tables import table
from engines.labelers.registry import LabelerError
from store import Store
from store.sets import SetRow, set_item_ids


def eval_command(
    set_name: Annotated[str, typer.Argument(help="A set with adjudicated (final) labels.")],
    labelers: Annotated[
        list[str],
        typer.Option(
            "--labeler", help="Labeler to score, e.g. keyword@1 or student@latest (repeatable)."
        ),
    ],
    rule: RuleOption = "majority",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="FILE.json",
            parser=given_path,
            help="Also write the scores as JSON to this file (- prints them instead of the"
            " tables).",
        ),
    ] = None,
    markdown_file: Annotated[
        Path | None,
        typer.Option(
            "--markdown",
            metavar="FILE.md",
            parser=given_path,
            help="Also write the table as Markdown (- prints it instead of the tables).",
        ),
    ] = None,
    confusion: Annotated[
        bool,
        typer.Option("--confusion/--no-confusion", help="Print each labeler's confusion matrix."),
    ] = True,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            metavar="repo|language",
            help="Also score each repository (or language) of the set on its own.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """One table comparing labelers: precision, recall, F1 and FPR per class, accuracy;
    then each labeler's confusion matrix.

    With --by, a table of each labeler's F1 on each repository or language of the set."""
    if by is not None and by not in GROUP_FIELDS:
        fail(f"--by {by!r}: use repo or language", EXIT_USAGE)
    printed = _check_outputs(out_file, markdown_file, as_json)
    grouped: dict[str, dict[str, Evaluation]] = {}
    with open_db(db, create=False) as store:
        s = load_set(store, set_name)
        try:
            # keyword@5 and keyword@latest name one labeler: one row, not two
            names = list(dict.fromkeys(stored_labeler(store, lb) for lb in labelers))
            if by is None:
                results = [evaluate_on_set(store, s, name, rule) for name in names]
            else:
                pairs = [evaluate_on_set_by(store, s, name, by, rule) for name in names]
                results = [whole for whole, _ in pairs]
                grouped = {whole.labeler: groups for whole, groups in pairs}
        except (SetError, LabelerError) as exc:
            fail(str(exc))
        if any(r.items == 0 for r in results):
            fail(_nothing_settled(store, s, rule))
        if s.kind == "commit":
            ids = set_item_ids(store, s.id)
            for r in results:
                if (warning := input_warning(store, r.labeler, ids)) is not None:
                    warn(warning)
                if (forced := forced_warning(store, r.labeler, ids, s.name)) is not None:
                    warn(forced)
    for r in results:  # --json: its items_predicted says so
        if not as_json and (warning := _unpredicted(r, s.name)) is not None:
            warn(warning)
    data = eval_table.as_json(s.name, rule, results)
    if by is not None:
        data["by"] = eval_table.groups_json(by, grouped)
    if out_file is not None:
        write_output(out_file, eval_table.json_text(data), option="--out")
    if markdown_file is not None:
        text = eval_table.markdown(s.name, rule, results[0].items, results, s.labels)
        if by is not None:
            text += "\n" + eval_table.group_markdown(by, grouped, s.labels)
        write_output(markdown_file, text, option="--markdown")
    if as_json:  # never with --out - or --markdown -: _check_outputs
        print_json(data)
    if as_json or printed:  # -: standard output holds that file, nothing else goes there
        return
    out.print(
        eval_table.rich_table(
            f"Evaluation on {s.name} ({results[0].items} items with a final label, rule {rule})",
            results,
            s.labels,
        )
    )
    if by is not None:
        out.print(eval_table.group_table(f"{s.labels[0]} F1 by {by}", grouped, s.labels))
    if confusion:
        _print_confusions(results)


def _print_confusions(results: list[Evaluation]) -> None:
    """One confusion matrix per labeler that labeled any item (the warning before names
    one that labeled none; a matrix of zeros would say nothing)."""
    for r in results:
        if not r.predicted:
            continue
        columns = list(next(iter(r.confusion.values()), {}).keys())
        out.print(
            table(
                f"Confusion matrix of {r.labeler} (rows: final label, columns: predicted)",
                ("final", *columns),
                [(t, *(r.confusion[t][p] for p in columns)) for t in r.confusion],
            )
        )


def _check_outputs(out_file: Path | None, markdown_file: Path | None, as_json: bool) -> bool:
    """Refuse two outputs into one target (the second write would replace or run into
    the first); True when one of them is ``-``, standard output."""
    if out_file is not None and markdown_file is not None and same_output(out_file, markdown_file):
        where = "standard output" if to_stdout(out_file) else str(out_file)
        fail(f"--out and --markdown both write to {where}: give each its own", EXIT_USAGE)
    given = [(f, p) for f, p in (("--out", out_file), ("--markdown", markdown_file)) if p]
    if as_json:  # "-", or standard output spelled out (/dev/stdout, /dev/fd/1)
        for flag, path in given:
            if to_stdout(path) or same_output(path, Path("-")):
                both = f"{flag} {path} and --json both print to standard output"
                fail(f"{both}: give one", EXIT_USAGE)
    return any(to_stdout(path) for _, path in given)


def _nothing_settled(store: Store, s: SetRow, rule: str) -> str:
    """Why a set has no final label to score against, with what to do about it."""
    if not set_item_ids(store, s.id):
        return f"set {s.name!r} holds no items: nothing to score"
    why = unsettled_text(store, s, rule) or "vote on its items"
    return f"set {s.name!r} has no settled items yet: {why}"


def _unpredicted(result: Evaluation, set_name: str) -> str | None:
    """One line when a labeler has labeled none of the set's settled items (its row is
    all dashes, which reads like a broken table), with the command that labels them."""
    if result.predicted or not result.items:
        return None
    name = result.labeler
    if name.startswith("teacher:"):
        how = f"curator teach {set_name} --model {name.removeprefix('teacher:')}"
    else:
        how = f"curator predict {set_name} --labeler {name}"
    return (
        f"{name} has labeled none of the {result.items} settled items of {set_name}, so it"
        f" has no scores: `{how}` labels them"
    )
