"""The root command group's guard: no input ends a command in a Python traceback.

Before parsing, every command-line argument (and every ``CURATOR_*`` variable) must be
UTF-8 text: bytes that are not arrive as lone surrogates (``'\\udcff'``), which neither
SQLite nor the terminal can take, so the command stops at once naming the argument
(exit 2). While a command runs, an exception nothing below caught ends as one
``error:`` line naming what failed (exit 1; a full disk, a read-only or damaged
database, any other I/O error get their own wording) and nothing is half-written, since
every write is one transaction. ``--debug`` or ``CURATOR_DEBUG=1`` shows the traceback
instead. A usage error (a choice that is not one of the choices, a number out of range,
a value an option's check refuses, a missing argument, an unknown option or command) is
one ``error:`` line (exit 2), for every command, instead of click's boxed usage message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from typer import _click as click
from typer.core import TyperGroup

DEBUG_ENV = "CURATOR_DEBUG"
_SURROGATE = re.compile("[\ud800-\udfff]")
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}
_OFF = ("", "0", "false", "no", "off")  # CURATOR_DEBUG=false turned it on


class _Debug:
    wanted = False


def set_debug(value: bool) -> None:
    """Called by the root command with its ``--debug`` flag."""
    _Debug.wanted = value


def debug_wanted() -> bool:
    return _Debug.wanted or os.environ.get(DEBUG_ENV, "").strip().lower() not in _OFF


def _shown(value: str) -> str:
    """An argument as its bytes, escaped: ``b'caf\\xe9'`` (or as escaped text when it
    holds a surrogate no byte decodes to)."""
    try:
        return ascii(os.fsencode(value))
    except UnicodeEncodeError:
        return ascii(value)


def bad_argument(args: Sequence[str], environ: dict[str, str] | None = None) -> str | None:
    """One line naming the first argument or CURATOR_* variable that is not UTF-8."""
    for position, arg in enumerate(args, start=1):
        if "\x00" in arg:  # no shell can pass one; a program calling us in-process can
            return f"argument {position} ({arg!a}) holds a NUL character"
        if _SURROGATE.search(arg):
            return (
                f"argument {position} ({_shown(arg)}) is not UTF-8 text: give names, notes,"
                " labels and paths in UTF-8"
            )
    for name, value in sorted((environ if environ is not None else dict(os.environ)).items()):
        if name.startswith("CURATOR_") and _SURROGATE.search(name + value):
            return f"environment variable {name!a} is not UTF-8 text: {_shown(value)}"
    return None


def explain(exc: BaseException) -> str:
    """One line for an exception no command caught."""
    from store import DatabaseError, StoreError
    from store.sets import SetExistsError

    if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
        where = f" writing {exc.filename}" if exc.filename else ""
        return (
            f"no space left{where} ({exc.strerror}): the last transaction was rolled back;"
            " free space and run the command again"
        )
    if isinstance(exc, StoreError | SetExistsError):  # a set made by another process first
        return str(exc)
    if isinstance(exc, DatabaseError):
        text = str(exc)
        if "full" in text:
            return (
                f"the database could not grow ({text}): the last transaction was rolled back;"
                " free space and run the command again"
            )
        if "readonly" in text or "read-only" in text:
            return (
                f"the database is read-only, or was moved since it was opened ({text}):"
                " nothing was written"
            )
        if "I/O" in text:
            return (
                f"the database could not be written ({text}): the last transaction was rolled"
                " back; check the disk and run the command again"
            )
        if "locked" in text or "busy" in text:
            return (
                f"the database is held by another process ({text}): nothing was"
                " written; run the command again when that one is done"
            )
        if "malformed" in text or "not a database" in text:
            return f"the database is damaged ({text}): restore it from a copy"
        return f"database error: {text}"
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process"
    first = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"unexpected {type(exc).__name__}: {first}"
        f" (run with --debug or {DEBUG_ENV}=1 to see the traceback)"
    )


def usage_error(exc: click.exceptions.UsageError) -> NoReturn:
    """Exit 2 with click's own message on one ``error:`` line: ``error: Invalid value for
    '--family': 'bogus' is not a family; use ...``; an unknown option or command also
    says where the help is."""
    from curator.presentation.cli_output import EXIT_USAGE, fail

    if type(exc).__name__ == "NoArgsIsHelpError":  # `curator set`: the help, no error line
        if exc.format_message():  # typer's rich help has printed itself already
            click.echo(exc.format_message(), err=True)
        raise SystemExit(exc.exit_code)
    message = exc.format_message()
    if not isinstance(exc, click.exceptions.BadParameter) and exc.ctx is not None:
        message += f" (see: {exc.ctx.command_path} --help)"
    fail(message, EXIT_USAGE)


def reader_went_away() -> NoReturn:
    """Standard output's reader closed it (``curator ... | head``): stop quietly, exit 1,
    as rich does; stdout goes to /dev/null first, so the interpreter's last flush of what
    is still buffered cannot fail again at exit."""
    with contextlib.suppress(OSError, ValueError):  # stdout closed, or not a real file
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    raise SystemExit(1)


class GuardedGroup(TyperGroup):
    """The root group: arguments checked before parsing, failures turned into one line."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        problem = bad_argument(args)
        if problem is not None:
            from curator.presentation.cli_output import EXIT_USAGE, fail

            fail(problem, EXIT_USAGE)
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.UsageError as exc:  # the root's own options
            usage_error(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.exceptions.UsageError as exc:  # any subcommand's, parsed or checked
            usage_error(exc)
        except BrokenPipeError:
            reader_went_away()
        except Exception as exc:
            # typer's and click's own exits, aborts and usage errors (typer vendors a copy
            # of click, so they are told by module, not by class) keep their meaning
            if debug_wanted() or type(exc).__module__.startswith(("click", "typer")):
                raise
            from curator.presentation.cli_output import EXIT_INPUT, fail

            fail(explain(exc), EXIT_INPUT)
