"""Shared output helpers for the annotation commands: errors, numbers and tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from rich.table import Table
from rich.text import Text

from annotation.sets import SetError, require_set
from curator.console import err
from curator.safe_text import labelled, one_line
from store import Store
from store.sets import SetRow

EXIT_INPUT = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print a one-line error (shown literally) and exit with ``code``."""
    err.print(labelled("error", "red", one_line(message, 400)))
    raise typer.Exit(code)


def load_set(store: Store, name: str) -> SetRow:
    """The named set, or exit 1 with a one-line error."""
    try:
        return require_set(store, name)
    except SetError as exc:
        fail(str(exc))


def load_optional_set(store: Store, name: str | None) -> SetRow | None:
    return load_set(store, name) if name else None


def warn(message: str) -> None:
    err.print(labelled("warning", "yellow", one_line(message, 400)))


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A table whose cells are shown literally; numeric columns right-aligned."""
    t = Table(title=title, title_justify="left")
    for i, name in enumerate(header):
        numeric = bool(rows) and all(
            isinstance(r[i], int | float) or (isinstance(r[i], str) and _looks_numeric(r[i]))
            for r in rows
        )
        t.add_column(name, justify="right" if numeric else "left")
    for row in rows:
        t.add_row(*(c if isinstance(c, Text) else one_line(str(c), 100) for c in row))
    return t


def _looks_numeric(text: str) -> bool:
    return text == "-" or text.rstrip("%").replace(".", "", 1).lstrip("-").isdigit()


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=True, sort_keys=False))
