"""The ``curator`` command: a typer app that wires engines and annotation to the store.

Commands load lazily (:mod:`curator.lazy_group`): ``COMMANDS`` names each one's module
and one-line help, and a command's module is imported only when that command runs, so
``curator --help`` or ``curator vote`` pay for nothing else (docs/benchmarks.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from typing import Annotated

import typer

from curator import __version__
from curator.cli_guard import GuardedGroup, set_debug
from curator.commands.options import AnnotatorOption, DbOption
from curator.lazy_group import Lazy, LazyGroup

C = "curator.commands"
COMMANDS = (
    Lazy("mine", f"{C}.mine:app", "Mine candidates into the store."),
    Lazy("check", f"{C}.check:check_app", "Run dynamic checks on stored items."),
    Lazy("stats", f"{C}.stats:stats", "Counts by kind, language, source, labeler and label."),
    Lazy(
        "search",
        f"{C}.search:search_command",
        "Find items by their text: messages, diffs, kernel sources, IR text, vote notes.",
    ),
    Lazy(
        "chart",
        f"{C}.chart:chart_command",
        "Draw one chart: labels, agreement, threshold, audit, learning or active-learning.",
    ),
    Lazy("set", f"{C}.sets:app", "Create and inspect sets of items to label."),
    Lazy(
        "import",
        f"{C}.importing:app",
        "Import items or votes from JSONL/CSV files, Prodigy or Label Studio, or a release.",
    ),
    Lazy(
        "vote",
        f"{C}.votes:vote",
        "Record one vote; the annotator's earlier vote on the item stays in the history.",
    ),
    Lazy(
        "undo",
        f"{C}.votes:undo_command",
        "Take back your latest vote (repeat to go further back); history is kept.",
    ),
    Lazy(
        "next",
        f"{C}.routing:next_command",
        "Claim your next item of a set (routing decides which) and print it; vote on it"
        " with `curator vote ITEM LABEL --set SET`.",
    ),
    Lazy(
        "agree",
        f"{C}.agree:agree",
        "Agreement: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, per label.",
    ),
    Lazy(
        "adjudicate",
        f"{C}.adjudicate:adjudicate",
        "Final labels: unanimous and majority items settle; ties and skips are conflicts,"
        " settled by an adjudicator's vote (`curator vote ITEM LABEL --adjudicate`).",
    ),
    Lazy("audit", f"{C}.audit:app", "Audit the precision of a labeler's positives."),
    Lazy(
        "eval",
        f"{C}.evaluate:eval_command",
        "One table comparing labelers: precision, recall, F1 and FPR per class, accuracy;"
        " then each labeler's confusion matrix.",
    ),
    Lazy(
        "export",
        f"{C}.exporting:app",
        "Write a release (curator export VERSION --out DIR), or a set for Prodigy or"
        " Label Studio (curator export prodigy|label-studio SET --out FILE).",
    ),
    Lazy(
        "validate",
        f"{C}.releases:validate_command",
        "Check a release: manifest, every record against Curator's schema, counts and sha256"
        " (and with --key, its signature).",
    ),
    Lazy(
        "label",
        f"{C}.tui:label_command",
        "Open the app on a set's queue: one key per vote, u undoes, ? lists every key.",
    ),
    Lazy(
        "train",
        f"{C}.train:train",
        "Train a labeler from --from teacher:MODEL, --votes SET and/or --weak LABELER; or,"
        " with --kind ensemble, combine labelers into ensemble@N. Without --dev, a student"
        " holds out 15% of its examples to choose the decision threshold (TF-IDF:"
        " out-of-fold scores).",
    ),
    Lazy(
        "models",
        f"{C}.models:app",
        "Trained labelers: list the versions, show one (threshold, calibration), promote"
        " one to current, show who promoted what.",
    ),
    Lazy(
        "predict",
        f"{C}.predict:predict",
        "Pre-label a set (or every unvoted commit, or all commits) with one labeler.",
    ),
    Lazy(
        "teach",
        f"{C}.teach:teach_command",
        "Ask a teacher model for a label and a 0-100 confidence per commit; store each"
        " answer as a prediction of ``teacher:MODEL``. A rerun asks only what is missing"
        " (an answer from an older prompt version counts, unless --redo-older-prompts).",
    ),
    Lazy(
        "simulate",
        f"{C}.simulate:app",
        "Simulate an annotator on labeled data and keep the result.",
    ),
    Lazy("config", f"{C}.config:app", "Show the settings in force."),
    Lazy("keys", f"{C}.releases:keys_app", "Ed25519 keys that sign releases."),
)


class CuratorGroup(GuardedGroup, LazyGroup):
    """The root group: every command of ``COMMANDS``, loaded when it runs; arguments
    checked before parsing and failures turned into one line (:mod:`curator.cli_guard`)."""

    LAZY = COMMANDS


app = typer.Typer(
    name="curator",
    cls=CuratorGroup,
    invoke_without_command=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    add_completion=False,
)


def interactive() -> bool:
    """Whether both ends are a terminal; a closed one (``curator <&-``) is None."""
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"curator {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
    annotator: AnnotatorOption = None,
    db: DbOption = None,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the Python traceback of an unexpected error (or CURATOR_DEBUG=1)."
        ),
    ] = False,
) -> None:
    """Curate ground-truth datasets of performance commits, OpenCL kernels and LLVM IR.

    With no command, opens the annotation app ([bold]curator --annotator NAME[/]).

    Every command finds its database the same way: [bold]--db PATH[/], else the
    [bold]CURATOR_DB[/] environment variable, else [bold]db[/] in ./curator.toml or
    the user config, else [bold]./curator.db[/] ([bold]curator config show[/]).
    """
    from curator.cli_context import begin_run

    set_debug(debug)
    begin_run(annotator=annotator, db=db)
    if ctx.invoked_subcommand is not None:
        return
    if not interactive():
        typer.echo(ctx.get_help())
        raise typer.Exit()
    from curator.commands.tui import run_app

    run_app(db, annotator)


MIN_COLUMNS = 20


def sane_columns(environ: MutableMapping[str, str]) -> None:
    """Raise a ``COLUMNS`` under :data:`MIN_COLUMNS` to it: rich prints nothing at all
    at ``COLUMNS=0`` (exit 0, every result lost) and fails drawing a table in a few
    columns; a value that is not a whole number rich ignores already."""
    value = environ.get("COLUMNS", "").strip()
    if value.isascii() and value.isdigit() and int(value) < MIN_COLUMNS:
        environ["COLUMNS"] = str(MIN_COLUMNS)


def reopen_closed_streams() -> list[int]:
    """Put /dev/null on each of file descriptors 0-2 that is closed (``curator ... >&-``)
    and return those: else the first file the command opens (an export, a clone's pipe)
    would take the number, and what is printed, or a child's output, would go into it."""
    reopened = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:  # the lowest free number: fd itself, unless a lower one is open
                os.dup2(null, fd)
                os.close(null)
            reopened.append(fd)
    return reopened


def main() -> None:
    if 1 in reopen_closed_streams() and sys.stderr is not None:
        sys.stderr.write(
            "warning: standard output is closed: what this command prints is lost"
            " (send it to a file, or to /dev/null to drop it)\n"
        )
    sane_columns(os.environ)
    app()
