"""Command groups that import a command's module only when that command runs.

The root ``curator`` group lists every command with its one-line help, read from a table
(:class:`Lazy`), so ``curator --help`` imports no command module; ``curator vote`` imports
``curator.commands.votes`` and nothing else of the CLI. ``tests/test_cli_startup.py``
checks that each table line says what the command's own docstring says.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any, ClassVar

from typer import _click
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class Lazy:
    """One command of a lazy group: its name, ``module:attribute`` (a function or a
    ``typer.Typer`` group) and the one-line help ``--help`` lists before it is loaded."""

    name: str
    target: str
    help: str


def load_command(entry: Lazy, markup: Any) -> _click.Command:
    """Import the entry's module and build its click command (or group)."""
    import typer.main
    from typer.models import CommandInfo, TyperInfo

    module, _, attribute = entry.target.partition(":")
    obj = getattr(importlib.import_module(module), attribute)
    command: _click.Command
    if isinstance(obj, typer.main.Typer):
        command = typer.main.get_group_from_info(
            TyperInfo(obj, name=entry.name),
            pretty_exceptions_short=obj.pretty_exceptions_short,
            suggest_commands=obj.suggest_commands,
            rich_markup_mode=markup,
        )
    else:
        command = typer.main.get_command_from_info(
            CommandInfo(name=entry.name, callback=obj),
            pretty_exceptions_short=True,
            rich_markup_mode=markup,
        )
    reflow_help(command)
    return command


def reflow_help(command: _click.Command) -> None:
    """Join the hard line breaks of a docstring's paragraphs, in a command and its
    subcommands: typer's rich help keeps them, which breaks lines mid-sentence at 80
    columns. A paragraph opening with ``\\b`` keeps its lines, as in click."""
    if command.help:
        command.help = "\n\n".join(
            paragraph if paragraph.lstrip().startswith("\b") else " ".join(paragraph.split())
            for paragraph in command.help.strip().split("\n\n")
        )
    for sub in getattr(command, "commands", {}).values():
        reflow_help(sub)


class LazyGroup(TyperGroup):
    """A typer group whose commands (``LAZY``) load on first use; while it draws its own
    help it lists them from the table instead."""

    LAZY: ClassVar[tuple[Lazy, ...]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._entries = {entry.name: entry for entry in self.LAZY}
        self._listing = False

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in self._entries if n not in self.commands)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name in self.commands or cmd_name not in self._entries:
            return super().get_command(ctx, cmd_name)
        entry = self._entries[cmd_name]
        if self._listing:
            return TyperCommand(name=entry.name, help=entry.help)
        command = load_command(entry, self.rich_markup_mode)
        self.commands[cmd_name] = command
        return command

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        """Typer's "Did you mean" looks at loaded commands only; this one sees them all."""
        try:
            return super().resolve_command(ctx, args)
        except _click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if self.suggest_commands and matches and "Did you mean" not in exc.message:
                suggestions = ", ".join(repr(m) for m in matches)
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {suggestions}?"
            raise

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        if ctx.parent is None and self.rich_markup_mode is not None:
            from curator.root_help import render_root_help

            listed = {entry.name: entry.help for entry in self.LAZY}
            render_root_help(
                ctx, [(name, listed.get(name, "")) for name in self.list_commands(ctx)]
            )
            return
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


class DefaultGroup(TyperGroup):
    """A group with a default command: ``curator export v1.0 --out DIR`` runs ``export
    release v1.0 --out DIR``, while ``curator export prodigy SET`` runs ``prodigy``."""

    DEFAULT: ClassVar[str] = ""

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.DEFAULT, *args]
        return super().parse_args(ctx, args)
