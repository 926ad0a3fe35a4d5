"""The CLI's errors, warnings, set look-ups and JSON output.

Figures and tables live in :mod:`curator.presentation.format` and
:mod:`curator.presentation.tables`, shared with the app; ``number``, ``percent`` and
``table`` are re-exported here for the commands that still import them from this module."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from annotation.sets import SetError, require_set
from curator.console import err
from curator.presentation.format import number, percent
from curator.presentation.tables import table
from curator.presentation.text import labelled, one_line
from engines.files import write_text_atomically
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
    "same_output",
    "table",
    "to_stdout",
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


def write_output(
    path: Path,
    text: str,
    write: Callable[[Path, str], None] = write_text_atomically,
    prefix: str = "cannot write ",
    option: str | None = None,
) -> None:
    """Write a report or chart to ``path`` (atomically, through links, into pipes and
    devices: engines.files), or print it when ``path`` is ``-`` (standard output); a
    failure ends the command in one line naming ``path`` after ``prefix``, and a path
    that is the database (:func:`refuse_database`) is refused naming ``option``."""
    if to_stdout(path):
        print_text(path, text)
        return
    refuse_database(path, option)
    try:
        write(path, text)
    except OSError as exc:
        fail(prefix + write_error(path, exc))


_DATABASES: set[Path] = set()
_DATABASE_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def protect_database(path: Path) -> None:
    """Remember a database this command opened: no output option may write over it
    or over its journal files (:func:`write_output` refuses them)."""
    _DATABASES.add(Path(path))


def refuse_database(path: Path, option: str | None = None) -> None:
    """End the command (exit 2) when the output ``path`` is a database this command
    opened or one of its journal files: writing there would replace the store. A command
    calls it before its work to refuse early; :func:`write_output` calls it anyway."""
    if to_stdout(path) or (database := open_database_named(path)) is None:
        return
    named = f"{option} {path}" if option else str(path)
    fail(f"{named}: that is the database {database}; name another file", EXIT_USAGE)


def open_database_named(path: Path) -> Path | None:
    """The database this command opened that ``path`` names (it, or its ``-wal``,
    ``-shm`` or ``-journal`` file), however it is spelled; None if none."""
    for database in _DATABASES:
        for suffix in _DATABASE_SIDE_FILES:
            if names_file(path, database.with_name(database.name + suffix)):
                return database
    return None


def names_file(path: Path, target: Path) -> bool:
    """Whether ``path`` is ``target`` however it is spelled (``./x/../c.db``, a link to
    it): writing there would replace ``target``, e.g. the database."""
    try:
        if path.exists() and target.exists():
            return os.path.samefile(path, target)
        return path.resolve() == target.resolve()
    except (OSError, RuntimeError):  # a link loop: compare the spelling
        return os.path.abspath(path) == os.path.abspath(target)


def print_text(_: Path, text: str) -> None:
    """Write ``text`` to standard output as it is (a writer like
    ``write_text_atomically``, for an output option given as ``-``)."""
    sys.stdout.write(text)
    sys.stdout.flush()


def write_error(path: Path, exc: OSError) -> str:
    """``PATH: why``, naming the folder on the way that is a file."""
    if isinstance(exc, FileExistsError | NotADirectoryError):
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            return f"{path}: {blocker} is a file, not a folder"
    return f"{path}: {exc.strerror or exc}"


def to_stdout(path: Path) -> bool:
    """Whether an output option's ``path`` is ``-``: standard output, not a file named -."""
    return str(path) == "-"


def same_output(first: Path, second: Path) -> bool:
    """Whether two output options name one target, however spelled (``a.md`` and
    ``./x/../a.md``, a link and its file, ``-`` and ``/dev/stdout``): the second write
    would replace or run into the first."""
    a, b = (Path("/dev/stdout") if to_stdout(p) else p for p in (first, second))
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a link loop: compare what was written
        return os.path.abspath(a) == os.path.abspath(b)
