"""``curator mine``: the one place the group is built from its three commands."""

from __future__ import annotations

import typer

from curator.commands.mine.commits import mine_commits_command
from curator.commands.mine.ir import mine_ir_command
from curator.commands.mine.kernels import mine_kernels_command

app = typer.Typer(help="Mine candidates into the store.", no_args_is_help=True)
app.command("commits")(mine_commits_command)
app.command("kernels")(mine_kernels_command)
app.command("ir")(mine_ir_command)
