"""``curator config show``: every setting, its value and where the value came from."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from curator.cli_context import login_name, settings
from curator.commands.options import JsonOption
from curator.console import out
from curator.presentation.cli_output import print_json
from curator.presentation.tables import table
from curator.presentation.text import visible
from curator.settings import PROJECT_CONFIG, user_config_path, working_folder

app = typer.Typer(help="Show the settings in force.", no_args_is_help=True)


@app.command("show")
def show(as_json: JsonOption = False) -> None:
    """Each setting's value and source: a flag, the environment, ./curator.toml, the user
    config file, or the default (precedence in that order). The API key is masked."""
    resolved = settings()
    rows = resolved.shown()
    files = {
        "project": str(working_folder() / PROJECT_CONFIG),
        "user": str(user_config_path()),
    }
    if as_json:
        print_json({"settings": rows, "files": files})
        return
    title = "Settings (flag > environment > ./curator.toml > user config > default)"
    cells = [(r["key"], r["value"] or "(unset)", r["source"], r["env"]) for r in rows]
    shown = table(
        title,
        ("key", "value", "source", "environment variable"),
        [tuple(Text(visible(cell)) for cell in row) for row in cells],
    )
    if out.measure(shown, options=out.options.update_width(10_000)).maximum <= out.width:
        out.print(shown)
    else:  # a column cut short would hide part of a path or a variable's name
        out.print(title, markup=False, soft_wrap=True)
        for key, value, source, env in cells:
            out.print(f"{key} = {visible(value)} ({source}; ${env})", markup=False, soft_wrap=True)
    if resolved.annotator is None:
        out.print(
            f"no annotator set: votes need one; the app would use your login name ({login_name()})",
            markup=False,
            soft_wrap=True,
        )
    for name, path in files.items():
        found = "found" if Path(path).is_file() else "absent"
        out.print(f"{name} config: {path} ({found})", markup=False, soft_wrap=True)
