"""``curator import items|votes|release``: bring in items, votes and releases made elsewhere."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from annotation.importing import (
    FileImportError,
    ItemImport,
    ParsedVotes,
    import_items_file,
    import_votes_file,
)
from annotation.labels import LabelError, parse_labels
from annotation.votes import displaced_line
from curator.cli_context import open_db
from curator.commands.interop import import_label_studio_command, import_prodigy_command
from curator.commands.labeled import (
    file_progress,
    interrupted,
    keyword_prelabel,
    labeled_items,
    labeled_spec,
    report_errors,
    report_other_messages,
)
from curator.commands.options import (
    MAX_VOTES_PER_ITEM,
    DbOption,
    JsonOption,
    KindOption,
    check_kind,
    check_new_set_name,
    given_path,
)
from curator.commands.releases import import_release_command
from curator.console import err, out
from curator.import_reading import ImportReading
from curator.presentation.cli_output import (
    EXIT_INPUT,
    EXIT_USAGE,
    fail,
    load_optional_set,
    print_json,
    warn,
)
from curator.presentation.text import flat, labelled, one_line

app = typer.Typer(
    help="Import items or votes from JSONL/CSV files, Prodigy or Label Studio, or a release.",
    no_args_is_help=True,
)
app.command("release")(import_release_command)
app.command("prodigy")(import_prodigy_command)
app.command("label-studio")(import_label_studio_command)


@app.command("items")
def items(
    files: Annotated[
        list[Path],
        typer.Argument(
            parser=given_path,
            help="JSONL files (one object per line with 'id' and 'message', or a commit as"
            " PyDriller or GitHub's API writes it) or CSV/TSV files with a header; gzip too.",
        ),
    ],
    kind: KindOption = "commit",
    set_name: Annotated[
        str | None,
        typer.Option(
            "--set",
            callback=check_new_set_name,
            help="Put the items in this set (created if needed).",
        ),
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option("--labels", help="Labels of a set created here, e.g. perf,non-perf."),
    ] = None,
    prelabel: Annotated[
        bool,
        typer.Option("--prelabel/--no-prelabel", help="Run the keyword labeler on new commits."),
    ] = True,
    votes_per_item: Annotated[
        int | None,
        typer.Option(
            "--votes-per-item",
            min=1,
            max=MAX_VOTES_PER_ITEM,
            help="Votes an item of a set created here needs to settle (default 2; 1 with"
            " --label-field, so imported labels settle).",
        ),
    ] = None,
    label_field: Annotated[
        str | None,
        typer.Option(
            "--label-field",
            help="Rows carry a label in this field: they become settled items, voted by"
            " --annotator (bad rows are reported and left out, the rest goes in).",
        ),
    ] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option(
            "--map",
            help="With --label-field: label values to the set's labels, e.g."
            " 1=perf,0=non-perf (repeatable; a set created here gets the labels named).",
        ),
    ] = None,
    annotator: Annotated[
        str, typer.Option("--annotator", help="Who the imported labels are recorded as.")
    ] = "gold",
    text_field: Annotated[
        str | None,
        typer.Option(
            "--text-field",
            help="With --label-field: the message field (default: message, commit_message).",
        ),
    ] = None,
    id_field: Annotated[
        str | None,
        typer.Option(
            "--id-field",
            help="With --label-field: the id field (default: id, else idx, else a hash).",
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Import items that did not come from mining; each file is all or nothing, except
    labeled files (--label-field), where each bad row is left out alone."""
    try:
        allowed = parse_labels(labels, kind) if labels else None
    except LabelError as exc:
        fail(str(exc), EXIT_USAGE)
    if label_field:
        spec = labeled_spec(
            kind, set_name, label_field, mapping, annotator, text_field, id_field, allowed
        )
        spec = replace(spec, votes_per_item=votes_per_item or 1)
        labeled_items(files, spec, prelabel, as_json, db)
        return
    _refuse_labeled_options(text_field=text_field, id_field=id_field, map=mapping)
    report: list[dict[str, object]] = []
    failed = 0
    with open_db(db) as store:
        for path in files:
            reading = ImportReading()
            try:
                with file_progress(path) as progress:
                    result = import_items_file(
                        store,
                        path,
                        kind,
                        reading,
                        set_name,
                        allowed,
                        keyword_prelabel if kind == "commit" and prelabel else None,
                        votes_per_item or 2,
                        progress,
                    )
            except KeyboardInterrupt:
                raise interrupted(path) from None
            except FileImportError as exc:
                report_errors(exc.errors)
                err.print(labelled("skipped", "yellow", one_line(str(path)), ": nothing imported"))
                failed += 1
                continue
            report_other_messages(result.other_message)
            reading.tell(str(path))
            report.append({"file": str(path), **asdict(result)})
            _print_file_result(path, result, set_name, as_json)
    if as_json:
        print_json(report)
    if failed:
        raise typer.Exit(EXIT_INPUT)


def _refuse_labeled_options(**given: object) -> None:
    """Options that only read a labeled file are a usage error without --label-field."""
    for name, value in given.items():
        if value:
            fail(
                f"--{name.replace('_', '-')} reads a labeled file: give --label-field FIELD too"
                " (an items file's rows carry 'id' and 'message')",
                EXIT_USAGE,
            )


def _print_file_result(path: Path, result: ItemImport, set_name: str | None, as_json: bool) -> None:
    if not result.stored + result.known:
        warn(f"{path}: no items in the file")
    if as_json:
        return
    parts = [f"{result.stored} new, {result.known} already stored"]
    if set_name:
        verb = "created set" if result.set_created else "set"
        parts.append(f"{result.added_to_set} added to {verb} ")
    out.print(Text.assemble(one_line(str(path)), ": ", ", ".join(parts), one_line(set_name or "")))


@app.command("votes")
def votes(
    files: Annotated[
        list[Path],
        typer.Argument(
            parser=given_path,
            help="JSONL or CSV (with a header), gzip too: item, annotator, label[, category,"
            " note].",
        ),
    ],
    kind: Annotated[
        str | None, typer.Option("--kind", help="Item kind, when ids are ambiguous.")
    ] = None,
    set_name: Annotated[
        str | None,
        typer.Option("--set", help="Check labels against this set (and require membership)."),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Import votes from another tool or a spreadsheet; each file is all or nothing."""
    if kind is not None:
        check_kind(kind)
    failed = 0
    report: list[dict[str, object]] = []
    with open_db(db) as store:
        in_set = load_optional_set(store, set_name)
        for path in files:
            try:
                with file_progress(path) as progress:
                    parsed = import_votes_file(store, path, kind, in_set, progress)
            except KeyboardInterrupt:
                raise interrupted(path) from None
            except FileImportError as exc:
                report_errors(exc.errors)
                err.print(labelled("skipped", "yellow", one_line(str(path)), ": nothing imported"))
                report.append(_votes_json(path, None, exc.errors))
                failed += 1
                continue
            if parsed.ignored_columns:
                warn(
                    f"{path}:1: column(s) {', '.join(parsed.ignored_columns)} ignored (a vote"
                    " reads item, annotator, label, category, note)"
                )
            if parsed.displaced:
                warn(displaced_line(str(path), parsed.displaced))
            report.append(_votes_json(path, parsed, []))
            if not parsed.votes and not parsed.unchanged:
                warn(f"{path}: no votes in the file; nothing imported")
                continue
            if not as_json:
                _print_votes(path, parsed)
    if as_json:
        print_json(report)
    if failed:
        raise typer.Exit(EXIT_INPUT)


def _votes_json(path: Path, parsed: ParsedVotes | None, errors: list[str]) -> dict[str, object]:
    """One file's outcome: the votes taken in, or the one-line reasons it was skipped."""
    return {
        "file": str(path),
        "imported": parsed is not None,
        "votes": parsed.votes if parsed else 0,
        "annotators": sorted(parsed.annotators) if parsed else [],
        "unchanged": parsed.unchanged if parsed else 0,
        "displaced": dict(parsed.displaced) if parsed else {},
        "errors": [flat(line) for line in errors],
    }


def _print_votes(path: Path, parsed: ParsedVotes) -> None:
    out.print(
        Text.assemble(
            one_line(str(path)),
            f": {parsed.votes} votes from {len(parsed.annotators)} annotators"
            f" ({parsed.unchanged} already recorded)",
        )
    )
