"""The CLI's errors, warnings, set look-ups and JSON output.

Figures and tables live in :mod:`curator.presentation.format` and
:mod:`curator.presentation.tables`, shared with the app; ``number``, ``percent`` and
``table`` are re-exported here for the commands that still import them from this module."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import typer
from rich.console import Console

from annotation.sets import SetError, require_set
from curator.console import err
from curator.presentation.format import number, percent
from curator.presentation.tables import table
from curator.presentation.text import labelled, one_line
from store import Store
from store.sets import SetRow

__all__ = [
    "EXIT_INPUT",
    "EXIT_USAGE",
    "fail",
    "load_optional_set",
    "load_set",
    "number",
    "percent",
    "print_json",
    "table",
    "warn",
]

EXIT_INPUT = 1
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    """Print a one-line error (shown literally, never wrapped) and exit with ``code``."""
    err.print(labelled("error", "red", one_line(message, 400)), soft_wrap=True)
    raise typer.Exit(code)


def load_set(store: Store, name: str) -> SetRow:
    """The named set, or exit 1 with a one-line error."""
    try:
        return require_set(store, name)
    except SetError as exc:
        fail(str(exc))


def load_optional_set(store: Store, name: str | None) -> SetRow | None:
    return load_set(store, name) if name else None


def warn(message: str, console: Console | None = None, width: int = 400) -> None:
    """One ``warning:`` line on stderr (or ``console``, e.g. a live progress display's),
    never wrapped, so each problem stays one line in a log."""
    line = labelled("warning", "yellow", one_line(message, width))
    (console or err).print(line, soft_wrap=True)


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=True, sort_keys=False))
