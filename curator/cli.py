"""The ``curator`` command: a typer app that wires engines and annotation to the store."""

from __future__ import annotations

from typing import Annotated

import typer

from curator import __version__
from curator.cli_context import begin_run
from curator.cli_guard import GuardedGroup, set_debug
from curator.commands import (
    adjudicate,
    agree,
    audit,
    check,
    config,
    evaluate,
    importing,
    mine,
    sets,
    stats,
    votes,
)
from curator.commands.models import app as models_app
from curator.commands.options import AnnotatorOption, DbOption
from curator.commands.predict import predict
from curator.commands.releases import export_command, keys_app, validate_command
from curator.commands.teach import teach_command
from curator.commands.train import train
from curator.commands.tui import interactive, label_command, run_app

app = typer.Typer(
    name="curator",
    cls=GuardedGroup,
    invoke_without_command=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(mine.app, name="mine")
app.add_typer(check.check_app, name="check")
app.command("stats")(stats.stats)
app.add_typer(sets.app, name="set")
app.add_typer(importing.app, name="import")
app.command("vote")(votes.vote)
app.command("undo")(votes.undo_command)
app.command("agree")(agree.agree)
app.command("adjudicate")(adjudicate.adjudicate)
app.add_typer(audit.app, name="audit")
app.command("eval")(evaluate.eval_command)
app.command("export")(export_command)
app.command("validate")(validate_command)
app.command("label")(label_command)
app.command("train")(train)
app.add_typer(models_app, name="models")
app.command("predict")(predict)
app.command("teach")(teach_command)
app.add_typer(config.app, name="config")
app.add_typer(keys_app, name="keys")


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
    set_debug(debug)
    begin_run(annotator=annotator, db=db)
    if ctx.invoked_subcommand is not None:
        return
    if not interactive():
        typer.echo(ctx.get_help())
        raise typer.Exit()
    run_app(db, annotator)


def main() -> None:
    app()
