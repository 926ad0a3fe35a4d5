"""``curator mine ir``: LLVM IR files, or C/C++ built to IR, deduplicated into the store."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    Progress,
    TaskID,
)
from rich.table import Table
from rich.text import Text

from curator.cli_context import open_db
from curator.commands.options import DbOption, finite_with, given_path
from curator.console import err, out
from curator.presentation.cli_output import warn
from curator.presentation.progress import source_progress
from curator.presentation.text import labelled, one_line, path_line
from engines.ir.build import CompilerNotFound, parse_flags
from engines.ir.ingest import stored_text_hash
from engines.ir.pipeline import BATCH_ROWS, IROptions, IRRunSummary, mine_ir
from store.ir_rehash import RehashSummary, rehash_ir

SHOWN_REJECTIONS = 20
MAX_JOBS = 256  # clangs at once: more would only thrash the machine


class RichIRReporter:
    """One progress bar over all inputs; problems printed above it."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def started(self, total: int) -> None:
        self.task = self.progress.add_task("IR modules", total=max(total, 1))

    def advance(self, count: int) -> None:
        if self.task is not None:
            self.progress.advance(self.task, count)

    def problem(self, text: str) -> None:
        warn(text, self.progress.console, 300)


def _summary_table(summary: IRRunSummary) -> Table:
    table = Table(title="IR summary", title_justify="left")
    table.add_column("outcome")
    table.add_column("inputs", justify="right")
    rows = [
        ("seen", summary.seen),
        ("stored", summary.stored),
        ("duplicates (linked)", summary.duplicates),
        ("already stored (skipped)", summary.known),
        ("filtered by license", sum(summary.filtered.values())),
        ("rejected", sum(summary.rejected.values())),
    ]
    for name, count in rows:
        table.add_row(name, str(count))
    for reason, count in sorted(summary.rejected.items()):
        table.add_row(Text(f"  rejected: {reason}", "red"), str(count))
    for reason, count in sorted(summary.filtered.items()):
        table.add_row(Text.assemble("  filtered: ", one_line(reason, 60)), str(count))
    if summary.missing:
        table.add_row(Text("missing paths", "red"), str(len(summary.missing)))
    return table


def _rejections_table(summary: IRRunSummary) -> Table:
    table = Table(title="Rejected inputs", title_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("reason")
    table.add_column("message", overflow="fold")
    for rejection in summary.rejections[:SHOWN_REJECTIONS]:
        table.add_row(
            path_line(rejection.path, 80), one_line(rejection.reason), one_line(rejection.message)
        )
    if len(summary.rejections) > SHOWN_REJECTIONS:
        table.caption = f"{len(summary.rejections) - SHOWN_REJECTIONS} more not shown"
    return table


def _as_json(summary: IRRunSummary) -> str:
    return json.dumps(
        {
            "seen": summary.seen,
            "stored": summary.stored,
            "duplicates": summary.duplicates,
            "known": summary.known,
            "filtered": dict(sorted(summary.filtered.items())),
            "rejected": dict(sorted(summary.rejected.items())),
            "rejections": [
                {"path": r.path, "reason": r.reason, "message": r.message}
                for r in summary.rejections
            ],
            "missing": summary.missing,
        },
        indent=2,
        ensure_ascii=True,
    )


def mine_ir_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PATH",
            parser=given_path,
            help=".ll or .bc files, or folders holding them.",
            show_default=False,
        ),
    ] = None,
    build: Annotated[
        list[Path] | None,
        typer.Option(
            "--build",
            metavar="SRC_DIR",
            parser=given_path,
            help="Compile every C/C++ translation unit under SRC_DIR to IR before"
            " optimization (repeat for several trees).",
        ),
    ] = None,
    cc: Annotated[str, typer.Option("--cc", help="The compiler --build runs.")] = "clang",
    flags: Annotated[
        str,
        typer.Option(
            "--flags", help='Compiler flags for --build, one string (e.g. "-O2 -Iinclude").'
        ),
    ] = "-O0",
    permissive_only: Annotated[
        bool,
        typer.Option(
            "--permissive-only",
            help="Keep only projects licensed MIT, Apache-2.0, BSD-2-Clause or BSD-3-Clause.",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1, max=MAX_JOBS, help="Compiles run at once (--build), at most 256."
        ),
    ] = max(1, os.cpu_count() or 1),
    max_mb: Annotated[
        float,
        typer.Option(
            "--max-mb",
            min=0.001,
            max=1024 * 1024,
            callback=finite_with("megabytes"),
            help="Skip larger IR files.",
        ),
    ] = 256.0,
    rehash: Annotated[
        bool,
        typer.Option(
            "--rehash",
            help="Compute every stored module's structural hash again from its IR text and"
            " bring keys up to date, merging modules that now match (no PATH).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --rehash: count what would change; write nothing."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, hidden=True)] = BATCH_ROWS,
    db: DbOption = None,
) -> None:
    """Ingest LLVM IR modules: structural-hash dedup, provenance, license, statistics."""
    if dry_run and not rehash:
        raise typer.BadParameter("--dry-run goes with --rehash", param_hint="--dry-run")
    if rehash:
        if paths or build:
            raise typer.BadParameter("--rehash reads the store only: give no PATH or --build")
        _rehash_command(db, dry_run, as_json)
        return
    if not paths and not build:
        raise typer.BadParameter("give IR files or folders, or --build SRC_DIR", param_hint="PATH")
    for folder in build or ():
        if not folder.is_dir():
            why = "not a folder" if folder.exists() else "no such folder"
            raise typer.BadParameter(f"{folder}: {why}", param_hint="--build")
    try:
        flag_list = parse_flags(flags)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--flags") from None
    options = IROptions(
        permissive_only=permissive_only,
        cc=cc,
        flags=flag_list,
        jobs=jobs,
        max_bytes=int(max_mb * 1024 * 1024),
    )
    store = open_db(db)
    progress = source_progress()
    try:
        with progress:
            summary = mine_ir(
                store, paths or [], build, options, RichIRReporter(progress), batch_size
            )
    except CompilerNotFound as exc:
        err.print(labelled("error", "red", one_line(str(exc))))
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: finished batches are saved; run again to resume")
        raise typer.Exit(130) from None
    finally:
        store.close()
    if as_json:
        typer.echo(_as_json(summary))
    else:
        out.print(_summary_table(summary))
        if summary.rejections:
            out.print(_rejections_table(summary))
        out.print(
            f"ir: seen {summary.seen}, stored {summary.stored}, duplicates {summary.duplicates},"
            f" known {summary.known}, filtered {sum(summary.filtered.values())},"
            f" rejected {sum(summary.rejected.values())}"
        )
    if summary.failed:
        raise typer.Exit(1)


def _rehash_command(db: Path | None, dry_run: bool, as_json: bool) -> None:
    """``--rehash``: stored modules' hashes computed again (:mod:`store.ir_rehash`)."""
    store = open_db(db, create=False)
    progress = source_progress("modules")
    try:
        with progress:
            task = progress.add_task("rehashing", total=None)
            summary = rehash_ir(
                store,
                stored_text_hash,
                dry_run,
                lambda done, total: progress.update(task, completed=done, total=total),
            )
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: nothing was written; run again")
        raise typer.Exit(130) from None
    finally:
        store.close()
    if as_json:
        typer.echo(json.dumps(_rehash_json(summary, dry_run), indent=2, ensure_ascii=True))
    else:
        for pair in summary.kept:
            warn(
                f"IR item #{pair.item_id} repeats item #{pair.repeats} under the new hash but"
                f" {pair.reason}: kept apart under its old key (merge it by hand)"
            )
        for item_id, why in [*summary.unreadable, *summary.blocked]:
            warn(f"IR item #{item_id}: kept its key: {why}")
        out.print(_rehash_line(summary, dry_run), markup=False, highlight=False, soft_wrap=True)
    if summary.unreadable:
        raise typer.Exit(1)


def _rehash_json(summary: RehashSummary, dry_run: bool) -> dict[str, object]:
    return {
        "examined": summary.examined,
        "current": summary.current,
        "rehashed": summary.rehashed,
        "merged": summary.merged,
        "kept": [
            {"item_id": p.item_id, "repeats": p.repeats, "reason": p.reason} for p in summary.kept
        ],
        "unreadable": [{"item_id": i, "error": why} for i, why in summary.unreadable],
        "blocked": [{"item_id": i, "reason": why} for i, why in summary.blocked],
        "dry_run": dry_run,
        "written": summary.written and summary.changed > 0,
    }


def _rehash_line(summary: RehashSummary, dry_run: bool) -> str:
    if not summary.examined:
        return "no IR modules stored: nothing to rehash"
    verb = "would be" if dry_run else "were"
    parts = [
        f"{summary.examined:,} IR modules: {summary.current:,} already current",
        f"{summary.rehashed:,} {verb} rehashed",
        f"{summary.merged:,} {verb} merged into the module they repeat",
    ]
    if summary.kept:
        parts.append(f"{len(summary.kept):,} kept apart (they have votes or other rows)")
    if summary.unreadable:
        parts.append(f"{len(summary.unreadable):,} unreadable (kept their key)")
    if summary.blocked:
        parts.append(f"{len(summary.blocked):,} blocked (kept their key)")
    line = ", ".join(parts)
    return line + (" (dry run, nothing written)" if dry_run else "")
