"""``curator import|export prodigy|label-studio``: sets and votes in the formats of the
annotation tools people already use (docs/interop.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from annotation.importing import FileImportError
from annotation.labels import LabelError, parse_labels
from annotation.sets import SetError
from annotation.votes import displaced_line
from curator.cli_context import open_db
from curator.commands.options import (
    MAX_VOTES_PER_ITEM,
    DbOption,
    KindOption,
    check_new_set_name,
    given_path,
)
from curator.console import err, out
from curator.interop import InteropUsageError, export_file, import_file
from curator.presentation.cli_output import (
    EXIT_INPUT,
    EXIT_USAGE,
    fail,
    print_text,
    to_stdout,
    warn,
    write_error,
)
from curator.presentation.text import labelled, one_line
from engines.files import is_stream, write_text_atomically

SetOption = Annotated[
    str,
    typer.Option(
        "--set",
        callback=check_new_set_name,
        help="The set the items and votes go into (created if needed).",
    ),
]
LabelsOption = Annotated[
    str | None,
    typer.Option("--labels", help="Labels of a set created here (default: perf,non-perf)."),
]
VotesPerItemOption = Annotated[
    int,
    typer.Option(
        "--votes-per-item",
        min=1,
        max=MAX_VOTES_PER_ITEM,
        help="Votes an item of a set created here needs.",
    ),
]
OutOption = Annotated[
    Path, typer.Option("--out", parser=given_path, help="The file to write (-: standard output).")
]
ForceOption = Annotated[bool, typer.Option("--force", help="Replace the file(s) if they exist.")]


def _import(
    fmt: str, path: Path, set_name: str, kind: str, labels: str | None, votes: int, db: Path | None
) -> None:
    try:
        allowed = parse_labels(labels, kind) if labels else None
    except LabelError as exc:
        fail(str(exc), EXIT_USAGE)
    with open_db(db) as store:
        try:
            done = import_file(store, fmt, path, set_name, kind, allowed, votes)
        except FileImportError as exc:
            for line in exc.errors[:20]:
                err.print(labelled("error", "red", one_line(line, 400)), soft_wrap=True)
            if len(exc.errors) > 20:
                err.print(f"... and {len(exc.errors) - 20} more errors")
            fail(f"{path}: nothing imported", EXIT_INPUT)
    if done.displaced:
        warn(displaced_line(str(path), done.displaced))
    verb = "created set" if done.set_created else "set"
    out.print(
        Text.assemble(
            one_line(str(path)),
            f": {done.stored} new items, {done.known} already stored, {done.added_to_set}"
            f" added to {verb} ",
            one_line(set_name),
            f"; {done.votes} votes from {len(done.annotators)} annotators"
            f" ({done.unchanged} already recorded)",
        )
    )


def import_prodigy_command(
    file: Annotated[
        Path, typer.Argument(parser=given_path, help="Prodigy JSONL (e.g. from prodigy db-out).")
    ],
    set_name: SetOption,
    kind: KindOption = "commit",
    labels: LabelsOption = None,
    votes_per_item: VotesPerItemOption = 2,
    db: DbOption = None,
) -> None:
    """Import Prodigy tasks: binary accept/reject/ignore or choice answers become votes."""
    _import("prodigy", file, set_name, kind, labels, votes_per_item, db)


def import_label_studio_command(
    file: Annotated[
        Path,
        typer.Argument(parser=given_path, help="Label Studio JSON export (a list of tasks)."),
    ],
    set_name: SetOption,
    kind: KindOption = "commit",
    labels: LabelsOption = None,
    votes_per_item: VotesPerItemOption = 2,
    db: DbOption = None,
) -> None:
    """Import a Label Studio export: each annotation's choices become a vote."""
    _import("label-studio", file, set_name, kind, labels, votes_per_item, db)


def _export(
    fmt: str, set_name: str, path: Path, binary: bool, force: bool, db: Path | None
) -> None:
    write = write_text_atomically
    if to_stdout(path):  # `--out -`: standard output, as for eval and chart
        path, write = Path("/dev/stdout"), print_text
    with open_db(db, create=False) as store:
        try:
            items, votes, files = export_file(store, fmt, set_name, path, binary, force, write)
        except (SetError, InteropUsageError) as exc:
            fail(str(exc), EXIT_USAGE if isinstance(exc, InteropUsageError) else EXIT_INPUT)
        except OSError as exc:  # a full disk, a folder that may not be written
            fail(f"cannot write {write_error(Path(exc.filename or path), exc)}")
    written = ", ".join(str(f) for f in files)
    stream = is_stream(path)  # the summary must not run into the export
    (err if stream else out).print(
        Text.assemble(
            f"{items} items, {votes} votes of set ", one_line(set_name), " -> ", one_line(written)
        )
    )
    if fmt == "label-studio" and stream:
        warn(
            f"no labeling config written: {path} is not a file to write it beside;"
            f" `curator export label-studio {set_name} --out FILE.json` writes it as"
            " FILE.label-config.xml"
        )


def export_prodigy_command(
    set_name: Annotated[str, typer.Argument(help="The set to export.")],
    out_file: OutOption,
    binary: Annotated[
        bool,
        typer.Option("--binary", help="Binary tasks on the set's first label (two-label sets)."),
    ] = False,
    force: ForceOption = False,
    db: DbOption = None,
) -> None:
    """Write a set as Prodigy JSONL: one task per live vote, unvoted items as open tasks."""
    _export("prodigy", set_name, out_file, binary, force, db)


def export_label_studio_command(
    set_name: Annotated[str, typer.Argument(help="The set to export.")],
    out_file: OutOption,
    force: ForceOption = False,
    db: DbOption = None,
) -> None:
    """Write a set as Label Studio JSON tasks, and its labeling config (FILE.label-config.xml;
    not when --out is standard output, a device or a FIFO)."""
    _export("label-studio", set_name, out_file, False, force, db)
