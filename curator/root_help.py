"""``curator --help`` drawn with a few rich renderables instead of typer's help module.

typer's rich help (``typer.rich_utils``) imports rich's Markdown, traceback and columns
machinery, a third of the CLI's start-up, for one screen. The root help is the one
people run most (to find a command), so it is drawn here: the usage line, the root
command's docstring (rich markup), its options and every command of the lazy table in
two panels, as typer draws them. A command's own ``--help`` still goes through typer.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from typer import _click


def _option_rows(ctx: _click.Context) -> Iterable[tuple[str, str]]:
    for param in ctx.command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is not None and param.param_type_name == "option":
            yield record


def render_root_help(ctx: _click.Context, commands: Iterable[tuple[str, str]]) -> None:
    """Print the root group's help to stdout."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    console.print()
    console.print(
        Text.assemble(" Usage: ", (f"{ctx.command_path} [OPTIONS] COMMAND [ARGS]...", "bold"))
    )
    console.print()
    for paragraph in inspect.cleandoc(ctx.command.help or "").split("\n\n"):
        console.print(Padding(Text.from_markup(" ".join(paragraph.split())), (0, 1)))
        console.print()
    for title, rows in (("Options", _option_rows(ctx)), ("Commands", commands)):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column()
        for name, text in rows:
            grid.add_row(name, text)
        console.print(Panel(grid, title=title, title_align="left", border_style="dim"))
