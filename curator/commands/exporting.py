"""``curator export``: a release by default (``curator export VERSION --out DIR``), or one
set in the format of another annotation tool (``export prodigy|label-studio SET``)."""

from __future__ import annotations

import typer

from curator.commands.interop import export_label_studio_command, export_prodigy_command
from curator.commands.releases import export_command
from curator.lazy_group import DefaultGroup


class ExportGroup(DefaultGroup):
    """``export VERSION ...`` is ``export release VERSION ...``."""

    DEFAULT = "release"


app = typer.Typer(
    cls=ExportGroup,
    help="Write a release (curator export VERSION --out DIR), or a set for Prodigy or Label"
    " Studio (curator export prodigy|label-studio SET --out FILE).",
    no_args_is_help=True,
)
app.command("release")(export_command)
app.command("prodigy")(export_prodigy_command)
app.command("label-studio")(export_label_studio_command)
