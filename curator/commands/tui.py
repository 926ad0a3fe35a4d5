"""``curator`` with no command, and ``curator label SET``: open the annotation app."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path

import typer

from curator.commands.options import DbOption, open_db
from curator.commands.output import fail, load_set


def default_annotator() -> str:
    """``$CURATOR_ANNOTATOR``, else the login name."""
    name = os.environ.get("CURATOR_ANNOTATOR", "").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "annotator"


AnnotatorOption = typer.Option(
    None,
    "--annotator",
    "-a",
    help="Who is labeling (default: $CURATOR_ANNOTATOR, else your login name).",
    show_default=False,
)


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def run_app(db: Path | None, annotator: str | None, set_name: str | None = None) -> None:
    """Check the database (and set) first, so a bad argument is one line, not a blank app."""
    from curator.tui.app import CuratorApp

    who = (annotator or default_annotator()).strip()
    if not who:
        fail("an annotator name is required (--annotator NAME)")
    with open_db(db) as store:
        path = store.path
        if set_name is not None:
            load_set(store, set_name)
    theme = os.environ.get("CURATOR_THEME", "").strip() or None
    CuratorApp(path, who, open_set=set_name, theme=theme).run()


def label_command(
    set_name: str = typer.Argument(..., help="The set to label."),
    annotator: str | None = AnnotatorOption,
    db: Path | None = DbOption,
) -> None:
    """Open the app on a set's queue: one key per vote, u undoes, ? lists every key."""
    if not interactive():
        fail("curator label needs a terminal (stdin and stdout must be a TTY)")
    run_app(db, annotator, set_name)
