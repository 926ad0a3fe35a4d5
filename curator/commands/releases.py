"""``curator export``, ``curator validate`` and ``curator import release``: releases as
versioned JSONL with a manifest and a datasheet (see docs/releases.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from curator.cli_context import open_db, settings
from curator.commands.options import DbOption, JsonOption, given_path
from curator.console import err, out
from curator.presentation.cli_output import EXIT_INPUT, EXIT_USAGE, fail, print_json, warn
from curator.presentation.progress import RateColumn
from curator.presentation.tables import table
from curator.presentation.text import flat, labelled, one_line
from curator.releases.export import (
    ExportError,
    ExportOptions,
    ExportUsageError,
    export_release,
)
from curator.releases.files import ReleaseExistsError
from curator.releases.import_release import (
    ImportResult,
    ReleaseImportError,
    import_release,
)
from curator.releases.signing import SigningError, generate_keys, load_public_key
from curator.releases.splits import parse_split, part_names
from curator.releases.validate import validate_release

SHOWN_PROBLEMS = 20


class _Counter:
    """A spinner with records written per kind and the rate (stderr)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, kind: str, count: int) -> None:
        if kind not in self.tasks:
            self.tasks[kind] = self.progress.add_task(f"{kind} records", total=None)
        self.progress.advance(self.tasks[kind], count)


def _progress() -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        TextColumn("{task.completed:,.0f}"),
        RateColumn("records"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # off a terminal, a transient bar leaves a blank line
    )


def export_command(
    version: Annotated[str, typer.Argument(help="Release version, e.g. v1.0 (the folder's name).")],
    out_dir: Annotated[
        Path,
        typer.Option("--out", parser=given_path, help="Folder the release folder is made in."),
    ],
    kinds: Annotated[
        list[str] | None,
        typer.Option(
            "--kind", help="commit, kernel or ir; repeat for several (default: every kind)."
        ),
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels",
            help="adjudicated: only items with a settled human label; predicted: a labeler's"
            " labels (--labeler). Default: every item, with its settled label when it has one.",
        ),
    ] = None,
    labeler: Annotated[
        str | None,
        typer.Option(
            "--labeler", help="Labeler for --labels predicted, e.g. student@3 or keyword@latest."
        ),
    ] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option("--min-confidence", help="With --labels predicted: keep scores >= this."),
    ] = None,
    audited_only: Annotated[
        bool, typer.Option("--audited-only", help="Only items drawn into an audit set.")
    ] = False,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Only this set's items, labeled as it settles them; repeat for several.",
        ),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option("--split", help="repo:80/10/10 (train/dev/test), repositories kept disjoint."),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the split's tie-breaking order.")
    ] = 0,
    gzip: Annotated[bool, typer.Option("--gzip", help="Write KIND.jsonl.gz files.")] = False,
    file_format: Annotated[
        str,
        typer.Option("--format", help="jsonl, or parquet (KIND.parquet: the same records, typed)."),
    ] = "jsonl",
    force: Annotated[
        bool, typer.Option("--force", help="Replace a release of that version.")
    ] = False,
    created_at: Annotated[
        str | None,
        typer.Option(
            "--created-at",
            help="Creation time written in the manifest (default: $SOURCE_DATE_EPOCH, else now).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
    sign: Annotated[
        Path | None,
        typer.Option(
            "--sign",
            parser=given_path,
            help="Ed25519 private key (curator keys generate): write manifest.json.sig.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write a release: one JSONL (or Parquet) file per kind (and split), schemas,
    DATASHEET.md, the dataset card README.md and manifest.json, in a temporary folder
    renamed into place when complete (the default command of curator export)."""
    options = ExportOptions(
        version=version,
        kinds=tuple(kinds or ()),
        labels=labels,
        labeler=labeler,
        min_confidence=min_confidence,
        audited_only=audited_only,
        sets=tuple(sets or ()),
        split=split,
        seed=seed,
        gzip=gzip,
        file_format=file_format,
        force=force,
        created_at=created_at,
        sign_key=sign,
    )
    with open_db(db, create=False) as store:
        try:
            with _progress() as progress:
                result = export_release(store, out_dir, options, _Counter(progress))
        except ReleaseExistsError as exc:
            fail(str(exc))
        except ExportUsageError as exc:
            fail(str(exc), EXIT_USAGE)
        except ExportError as exc:
            fail(str(exc))
    if result.records == 0:
        warn(f"release {version} holds no records: no item matched the filters")
    elif split is not None:
        _warn_empty_parts(split, result.manifest["counts"])
    if as_json:
        print_json(result.manifest)
        return
    counts = result.manifest["counts"]
    rows = [
        [kind, n, ", ".join(f"{k} {v}" for k, v in counts["by_label"][kind].items())]
        for kind, n in counts["by_kind"].items()
    ]
    out.print(table(f"release {version}", ["kind", "records", "labels"], rows))
    out.print(Text.assemble("written to ", one_line(str(result.path), 300)))


def _warn_empty_parts(split: str, counts: dict[str, Any]) -> None:
    """One warning line per kind whose split left parts without a record (repositories
    go whole to one part, so a kind from few repositories cannot fill every part)."""
    names = part_names(parse_split(split))
    for kind, found in counts.get("by_split", {}).items():
        empty = [str(name) for name in names if not found.get(name)]
        if empty:
            many = len(empty) > 1
            warn(
                f"--split {split}: the {kind} part{'s' if many else ''} {', '.join(empty)}"
                f" hold{'' if many else 's'} no records: each repository goes whole to one"
                f" part, and too few repositories hold {kind} records to fill every part"
            )


KeyOption = Annotated[
    Path | None,
    typer.Option(
        "--key",
        parser=given_path,
        help="Ed25519 public key: the release must carry a valid signature by it.",
    ),
]


def _checked_key(key: Path | None) -> None:
    """A --key that is not a usable public key is a usage error (exit 2)."""
    if key is not None:
        try:
            load_public_key(key)
        except SigningError as exc:
            fail(f"--key: {exc}", EXIT_USAGE)


def validate_command(
    release: Annotated[
        Path, typer.Argument(parser=given_path, help="A release folder (holding manifest.json).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    key: KeyOption = None,
) -> None:
    """Check a release: manifest, every record against Curator's schema, counts and sha256
    (and with --key, its signature)."""
    _checked_key(key)
    report = validate_release(release, key)
    if as_json:
        print_json(
            {
                "release": str(release),
                "valid": report.ok,
                "records": report.records,
                "files": report.files,
                "signed_by": report.signed_by,
                "problems": report.problems,
            }
        )
    else:
        for line in report.problems[:SHOWN_PROBLEMS]:
            err.print(labelled("error", "red", one_line(line, 400)))
        if len(report.problems) > SHOWN_PROBLEMS:
            err.print(f"... and {len(report.problems) - SHOWN_PROBLEMS} more problems")
        if report.ok:
            out.print(
                Text.assemble(
                    one_line(str(release), 300),
                    f": valid ({report.records} records in {report.files} files)",
                    f", signed by key {report.signed_by}" if report.signed_by else "",
                )
            )
    if not report.ok:
        raise typer.Exit(EXIT_INPUT)


def import_release_command(
    release: Annotated[
        Path,
        typer.Argument(parser=given_path, help="A release folder written by `curator export`."),
    ],
    require_signature: Annotated[
        bool,
        typer.Option(
            "--require-signature", help="Refuse a release not signed by --key (needs --key)."
        ),
    ] = False,
    key: KeyOption = None,
    allow_new_labels: Annotated[
        bool,
        typer.Option(
            "--allow-new-labels",
            help="Accept labels outside the release set's labels, widening the set.",
        ),
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Load a release into a store (validated first; all or nothing)."""
    if require_signature and key is None:
        fail("--require-signature needs --key PUBLIC_KEY (curator keys generate)", EXIT_USAGE)
    _checked_key(key)
    target = Path(settings(db=db).db)
    if target.resolve().is_relative_to(release.resolve()):
        fail(
            f"--db {target} lies inside the release {release}: the database (and its"
            " journal) would be files its manifest does not list; choose a --db outside it",
            EXIT_USAGE,
        )
    report = validate_release(release, key)  # before the database is opened (or made)
    if not report.ok:
        _refuse_import(release, report.problems, as_json)
    with open_db(db) as store:
        try:
            with _progress() as progress:
                result = import_release(
                    store, release, _Counter(progress), key, allow_new_labels, report
                )
        except ReleaseImportError as exc:
            _refuse_import(release, exc.problems, as_json)
    _print_release_import(release, result, as_json)


def _refuse_import(release: Path, problems: list[str], as_json: bool) -> NoReturn:
    for line in problems[:SHOWN_PROBLEMS]:
        err.print(labelled("error", "red", one_line(line, 400)))
    if as_json:
        print_json(
            {"release": str(release), "imported": False, "errors": [flat(p) for p in problems]}
        )
    fail(f"{release}: not imported, nothing was stored")


def _print_release_import(release: Path, result: ImportResult, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "release": str(release),
                "imported": True,
                "version": result.version,
                "records": {
                    kind: {"stored": 0, "known": 0, "duplicate": 0, **outcome}
                    for kind, outcome in sorted(result.outcomes.items())
                },
                "votes": result.votes,
                "predictions": result.predictions,
                "sets": list(result.sets),
                "errors": [],
            }
        )
        return
    rows = [
        [kind, *(outcome.get(s, 0) for s in ("stored", "known", "duplicate"))]
        for kind, outcome in sorted(result.outcomes.items())
    ]
    for where, labels in result.new_labels.items():
        warn(f"--allow-new-labels: widened {where} with the labels {', '.join(labels)}")
    if result.signed_by:
        out.print(Text(f"signature by key {result.signed_by} verified"))
    out.print(table(f"release {result.version}", ["kind", "stored", "known", "duplicate"], rows))
    extra = f"{result.votes} votes, {result.predictions} predictions"
    if result.sets:
        extra += " (sets: " + ", ".join(result.sets) + ")"
    out.print(Text(extra))


keys_app = typer.Typer(help="Ed25519 keys that sign releases.", no_args_is_help=True)


@keys_app.command("generate")
def keys_generate(
    directory: Annotated[
        Path,
        typer.Argument(parser=given_path, help="Folder for release.key (private) and release.pub."),
    ],
) -> None:
    """Make a key pair: sign with `curator export --sign DIR/release.key`, check with
    `--key DIR/release.pub`. Existing keys are never overwritten."""
    try:
        pair = generate_keys(directory)
    except SigningError as exc:
        fail(str(exc))
    out.print(Text.assemble("private key ", one_line(str(pair.private), 300), " (keep it secret)"))
    out.print(Text.assemble("public key  ", one_line(str(pair.public), 300), f" id {pair.key_id}"))
