"""Options shared by several commands, each defined once (typer's ``Annotated`` style)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

Parser = TypeVar("Parser", bound=Callable[[str], Any])


def shown_as(type_name: str) -> Callable[[Parser], Parser]:
    """Name a parser for ``--help``: typer shows a parser's ``__name__`` as its option's
    type, which told users ``--db <_db_path>`` and ``--out <given_path>``."""

    def name(parser: Parser) -> Parser:
        parser.__name__ = type_name
        return parser

    return name


@shown_as("path")
def _db_path(value: str) -> Path:
    """``--db``'s path; an empty one is named here (as a path it would be the folder
    '.', which "cannot be opened")."""
    if not value.strip():
        from curator.presentation.cli_output import EXIT_USAGE, fail

        fail(
            f"--db {value!r} is empty: give the database's path, or leave --db out to use"
            " $CURATOR_DB, db in curator.toml, else ./curator.db",
            EXIT_USAGE,
        )
    return Path(value)


def _not_blank(value: str, give: str) -> str:
    """``value``, unless it is empty or white space: a usage error asking for ``give``."""
    if not value.strip():
        raise typer.BadParameter(f"{value!r} is empty: give {give}")
    return value


@shown_as("path")
def given_path(value: str) -> Path:
    """A path option's or argument's parser: an empty one would be the folder '.', the
    working folder, which the user did not name; refuse it."""
    return Path(_not_blank(value, "a path"))


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        parser=_db_path,
        help="SQLite database (default: $CURATOR_DB, else db in curator.toml or the user"
        " config, else ./curator.db).",
        show_default=False,
    ),
]

AnnotatorOption = Annotated[
    str | None,
    typer.Option(
        "--annotator",
        "--by",
        "-a",
        help="Who is acting (default: $CURATOR_ANNOTATOR, else annotator in curator.toml or"
        " the user config). Votes require one; the app and promotions fall back to your"
        " login name.",
        show_default=False,
    ),
]

CloneDirOption = Annotated[
    Path | None,
    typer.Option(
        "--clone-dir",
        parser=given_path,
        help="Where URLs are cloned (default: <cache>/repos; see curator config show).",
        show_default=False,
    ),
]

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]

MAX_VOTES_PER_ITEM = 1000
"""The most votes an item may need (a larger number cannot be stored, and means nothing)."""


def _rule(value: str) -> str:
    from annotation.adjudication import RULES

    if value not in RULES:
        raise typer.BadParameter(f"{value!r}: use {' or '.join(RULES)}")
    return value


RuleOption = Annotated[
    str,
    typer.Option("--rule", callback=_rule, help="majority (ties are conflicts) or unanimous."),
]

KINDS = ("commit", "kernel", "ir")


def check_kind(value: str) -> str:
    if value not in KINDS:
        raise typer.BadParameter(f"{value!r} is not a kind; use commit, kernel or ir")
    return value


KindOption = Annotated[
    str, typer.Option("--kind", callback=check_kind, help="Item kind: commit, kernel or ir.")
]


def split_fields(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``: a comma-separated option's values."""
    return [f.strip() for f in (text or "").split(",") if f.strip()]


def check_overlap(value: str | None) -> str | None:
    if value is not None and value not in ("routed", "all"):
        raise typer.BadParameter(f"{value!r}: use routed or all")
    return value


OverlapOption = Annotated[
    str,
    typer.Option(
        "--overlap",
        callback=check_overlap,
        help="routed: each item goes to --votes-per-item annotators (leases, least-voted"
        " first); all: every annotator labels every item (agreement studies).",
    ),
]


def check_new_set_name(value: str | None) -> str | None:
    """The name of a set a command may create: a blank one ends the command with one
    ``error:`` line before anything is opened or stored."""
    from store.sets import SetNameError, check_set_name

    if value is not None:
        try:
            check_set_name(value)
        except SetNameError as exc:
            from curator.presentation.cli_output import EXIT_USAGE, fail

            fail(str(exc), EXIT_USAGE)
    return value


def finite(value: float | None) -> float | None:
    """An option's callback: NaN and infinity pass typer's range checks; refuse them."""
    return _finite(value, "{} is not a finite number")


def finite_with(unit: str) -> Callable[[float | None], float | None]:
    """:func:`finite`, its refusal naming what the option counts: ``nan: give a number of
    seconds``."""
    return lambda value: _finite(value, f"{{}}: give a number of {unit}")


def _finite(value: float | None, refusal: str) -> float | None:
    """``value``, or a usage error ``refusal`` (the value in its ``{}``) if NaN or infinite."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(refusal.format(value))
    return value


@shown_as("source")
def given_source(value: str) -> str:
    """A mining source's parser: an empty one would be the working folder; refuse it."""
    return _not_blank(value, "a path or a URL")


@shown_as("name")
def given_name(value: str) -> str:
    """A name's parser (a labeler, a model): a blank one names nothing; refuse it."""
    return _not_blank(value, "a name")
