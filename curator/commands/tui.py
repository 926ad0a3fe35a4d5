"""``curator`` with no command, and ``curator label SET``: open the annotation app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from curator import cli
from curator.cli_context import annotator_or_login, open_db, settings
from curator.commands.options import AnnotatorOption, DbOption
from curator.presentation.cli_output import EXIT_USAGE, fail, load_set


def check_theme(theme: str | None, source: str) -> None:
    """A theme the app does not know ends in one line naming where it was set, before
    the terminal is taken over (Textual would stop the app with a traceback)."""
    from textual.theme import BUILTIN_THEMES

    if theme and theme not in BUILTIN_THEMES:
        known = ", ".join(sorted(BUILTIN_THEMES))
        fail(f"{source}: theme {theme!r} is not one the app knows; use one of {known}", EXIT_USAGE)


def run_app(db: Path | None, annotator: str | None, set_name: str | None = None) -> None:
    """Check the database (and set) first, so a bad argument is one line, not a blank app.
    The annotator falls back to the login name (see ``curator.cli_context``)."""
    from curator.tui.app import CuratorApp

    who = annotator_or_login(annotator)
    with open_db(db) as store:
        path = store.path
        if set_name is not None:
            load_set(store, set_name)
    s = settings()
    check_theme(s.theme, s.source("theme"))
    CuratorApp(
        path,
        who,
        open_set=set_name,
        theme=s.theme,
        kernel_memory_mb=s.kernel_memory_mb,
        opencl_device=s.opencl_device,
        lease_minutes=s.lease_minutes,
        cache=s.cache,
    ).run()


def label_command(
    set_name: Annotated[str, typer.Argument(help="The set to label.")],
    annotator: AnnotatorOption = None,
    db: DbOption = None,
) -> None:
    """Open the app on a set's queue: one key per vote, u undoes, ? lists every key."""
    if not cli.interactive():  # read at run time: tests stand in a terminal for it
        fail("curator label needs a terminal (stdin and stdout must be a TTY)")
    run_app(db, annotator, set_name)
