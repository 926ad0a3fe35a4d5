"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path

import typer

from curator.console import err
from curator.safe_text import labelled, one_line
from store import Store, open_store
from store.connection import StoreError

DbOption = typer.Option(
    None,
    "--db",
    envvar="CURATOR_DB",
    help="SQLite database (default: $CURATOR_DB, else ./curator.db).",
    show_default=False,
)


def open_db(db: Path | None) -> Store:
    """Open the store or exit with a one-line error."""
    try:
        return open_store(db)
    except StoreError as exc:
        err.print(labelled("error", "red", one_line(str(exc))))
        raise typer.Exit(2) from exc
