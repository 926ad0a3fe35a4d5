"""``curator config show``: every setting, its value and where the value came from."""

from __future__ import annotations

from pathlib import Path

import typer

from curator.cli_context import login_name, settings
from curator.commands.options import JsonOption
from curator.console import out
from curator.presentation.cli_output import print_json
from curator.presentation.tables import table
from curator.settings import PROJECT_CONFIG, user_config_path

app = typer.Typer(help="Show the settings in force.", no_args_is_help=True)


@app.command("show")
def show(as_json: JsonOption = False) -> None:
    """Each setting's value and source: a flag, the environment, ./curator.toml, the user
    config file, or the default (precedence in that order). The API key is masked."""
    resolved = settings()
    rows = resolved.shown()
    files = {
        "project": str(Path.cwd() / PROJECT_CONFIG),
        "user": str(user_config_path()),
    }
    if as_json:
        print_json({"settings": rows, "files": files})
        return
    out.print(
        table(
            "Settings (flag > environment > ./curator.toml > user config > default)",
            ("key", "value", "source", "environment variable"),
            [(r["key"], r["value"] or "(unset)", r["source"], r["env"]) for r in rows],
        )
    )
    if resolved.annotator is None:
        out.print(
            f"no annotator set: votes need one; the app would use your login name ({login_name()})",
            markup=False,
        )
    for name, path in files.items():
        found = "found" if Path(path).is_file() else "absent"
        out.print(f"{name} config: {path} ({found})", markup=False, soft_wrap=True)
