"""``curator mine reread``: write the model input of stored commits again, as this
Curator makes it (the work is in ``curator.reread``)."""

from __future__ import annotations

from typing import Annotated

import typer

from curator.cli_context import open_db
from curator.commands.options import DbOption, JsonOption
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, print_json
from curator.presentation.progress import source_progress
from curator.presentation.text import one_line
from curator.reread import RereadSummary, reread_inputs
from engines.commits.representation import DEFAULT_TOKEN_BUDGET
from store.model_inputs import count_commits


def mine_reread_command(
    token_budget: Annotated[
        int,
        typer.Option(
            "--token-budget",
            min=0,
            help="Tokens kept in the model input text (0: all); give the one the commits"
            " were mined with.",
        ),
    ] = DEFAULT_TOKEN_BUDGET,
    source: Annotated[
        str | None,
        typer.Option(
            "--source", help="Only the commits of this source, as `curator stats` lists it."
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count the commits that would change; write nothing.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Write the model input of stored commits again, as this Curator makes it.

    The model input (message || diff, what the student and the teacher read) is made
    once, when a commit is mined or imported; commits stored by an earlier version keep
    the text it made. This writes it again from each commit's stored message, diff and
    file. Predictions already stored stay: run `curator predict` again for the commits
    that changed."""
    store = open_db(db, create=False)
    try:
        if source is not None and not count_commits(store, source):
            fail(
                f"--source {source!r}: no commits of that source (`curator stats` lists them)",
                EXIT_USAGE,
            )
        progress = source_progress("commits")
        with progress:
            task = progress.add_task("rereading", total=count_commits(store, source) or None)
            summary = reread_inputs(
                store,
                token_budget,
                source,
                dry_run,
                lambda done, total: progress.update(task, completed=done, total=total),
            )
    except KeyboardInterrupt:
        fail(
            "interrupted: the commits written so far keep their new text; run again to finish", 130
        )
    finally:
        store.close()
    if as_json:
        print_json(_as_json(summary))
        return
    out.print(_as_text(summary, source), markup=False, highlight=False)


def _as_json(summary: RereadSummary) -> dict[str, object]:
    return {
        "examined": summary.examined,
        "changed": summary.changed,
        "written": summary.written and summary.changed > 0,
        "changed_with_predictions": summary.predicted,
    }


def _as_text(summary: RereadSummary, source: str | None) -> str:
    scope = f" of {one_line(source, 80)}" if source else ""
    if not summary.examined:
        return "no commits stored: nothing to reread"
    if not summary.changed:
        return f"{summary.examined:,} commits{scope}: every model input is already current"
    verb = "changed" if summary.written else "would change (dry run, nothing written)"
    line = f"{summary.examined:,} commits{scope}: {summary.changed:,} model inputs {verb}"
    if summary.predicted:
        line += (
            f"; {summary.predicted:,} of those have predictions made from the old text:"
            " run `curator predict` again for them"
        )
    return line
