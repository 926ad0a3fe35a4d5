"""``curator mine kernels``: OpenCL kernels scraped, filtered, normalised and stored."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from curator.cli_context import kernel_worker, open_db, settings
from curator.commands.options import CloneDirOption, DbOption, JsonOption, given_source
from curator.console import err, out
from curator.presentation.cli_output import print_json
from curator.presentation.format import MISSING
from curator.presentation.progress import SourceReporter, source_progress
from curator.presentation.text import flat, one_line
from engines.kernels.compile import MIN_INSTRUCTIONS
from engines.kernels.pipeline import (
    RefilterSummary,
    SourceSummary,
    mine_kernels,
    refilter_kernels,
)

if TYPE_CHECKING:
    from engines.kernels.checker import KernelWorker
    from store import Store

_Summary = TypeVar("_Summary", SourceSummary, RefilterSummary)


def mine_kernels_command(
    sources: Annotated[
        list[str],
        typer.Argument(
            parser=given_source,
            help="Files, directories or git URLs holding OpenCL code.",
            show_default=False,
        ),
    ],
    min_instructions: Annotated[
        int, typer.Option("--min-instructions", min=0, help="Refuse kernels with fewer.")
    ] = MIN_INSTRUCTIONS,
    refilter: Annotated[
        bool,
        typer.Option(
            "--refilter",
            help="Run the rejection filter and rewriter again on the stored kernels found in"
            " the sources (refused ones, or all with --all) and write what they give now;"
            " nothing new is stored.",
        ),
    ] = False,
    everything: Annotated[
        bool, typer.Option("--all", help="With --refilter: accepted kernels too.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="With --refilter: count what would change; write nothing."),
    ] = False,
    clone_dir: CloneDirOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Scrape OpenCL kernels, filter, normalise, featurise and store them.

    With --refilter, kernels stored by an earlier Curator are filtered again as this one
    filters them: give the same sources they were mined from (the tree is read again for
    the headers and build options a kernel uses)."""
    for flag, given in (("--all", everything), ("--dry-run", dry_run)):
        if given and not refilter:
            raise typer.BadParameter(f"{flag} goes with --refilter", param_hint=flag)
    if refilter:
        _refilter_command(sources, min_instructions, everything, dry_run, clone_dir, as_json, db)
        return
    summaries = _on_sources(
        db,
        True,
        "every saved batch is kept; run again to resume",
        lambda store, reporter, worker: mine_kernels(
            store, sources, min_instructions, reporter, clone_dir or settings().clone_dir, worker
        ),
    )
    if as_json:
        print_json(_summary_json(summaries))
    else:
        _print_summary(summaries)
    if any(s.failed or s.unreadable for s in summaries):
        raise typer.Exit(1)


def _on_sources(
    db: Path | None,
    create: bool,
    interrupted: str,
    run: Callable[[Store, SourceReporter, KernelWorker], list[_Summary]],
) -> list[_Summary]:
    """``run`` on the store (``create``: a new one may be made) with a bar per source and
    the compile worker; Ctrl-C ends the command with ``interrupted`` (exit 130)."""
    store = open_db(db, create=create)
    progress = source_progress("files")
    try:
        with progress, kernel_worker() as worker:
            return run(store, SourceReporter(progress), worker)
    except KeyboardInterrupt:
        err.print(f"[yellow]interrupted[/]: {interrupted}")
        raise typer.Exit(130) from None
    finally:
        store.close()


def _refused(summaries: list[SourceSummary]) -> Counter[str]:
    refused: Counter[str] = Counter()
    for s in summaries:
        refused.update(s.filtered)
    return refused


def _summary_json(summaries: list[SourceSummary]) -> dict[str, object]:
    return {
        "sources": [
            {
                "source": s.source,
                "files": s.files,
                "kernels": s.seen,
                "refused": dict(sorted(s.filtered.items())),
                "duplicates": s.duplicates,
                "known": s.known,
                "stored": s.stored,
                "unreadable": s.unreadable,
                "failed": s.failed is not None,
            }
            for s in summaries
        ],
        "files": sum(s.files for s in summaries),
        "kernels": sum(s.seen for s in summaries),
        "refused": dict(sorted(_refused(summaries).items())),
        "duplicates": sum(s.duplicates for s in summaries),
        "stored": sum(s.stored for s in summaries),
        "errors": [flat(f"{s.source}: {s.failed}") for s in summaries if s.failed],
    }


def _print_summary(summaries: list[SourceSummary]) -> None:
    table = Table(title="Kernel mining summary", title_justify="left")
    table.add_column("source", overflow="fold")
    for name in ("files", "kernels", "refused", "duplicates", "stored"):
        table.add_column(name, justify="right")
    for s in summaries:
        if s.failed:
            table.add_row(one_line(s.source, 60), *[MISSING] * 4, Text("failed", "red"))
            continue
        table.add_row(
            one_line(s.source, 60),
            str(s.files),
            str(s.seen),
            str(sum(s.filtered.values())),
            str(s.duplicates),
            str(s.stored),
        )
    out.print(table)
    refused = _refused(summaries)
    if refused:
        out.print("refused by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(refused.items())))


def _refilter_command(
    sources: list[str],
    min_instructions: int,
    everything: bool,
    dry_run: bool,
    clone_dir: Path | None,
    as_json: bool,
    db: Path | None,
) -> None:
    """``--refilter``: stored kernels filtered again (:func:`refilter_kernels`)."""
    summaries = _on_sources(
        db,
        False,
        "every batch written is kept"
        + (" (a dry run writes none)" if dry_run else "")
        + "; run again to finish",
        lambda store, reporter, worker: refilter_kernels(
            store,
            sources,
            min_instructions,
            reporter,
            clone_dir or settings().clone_dir,
            worker,
            everything,
            dry_run,
        ),
    )
    if as_json:
        print_json(_refilter_json(summaries, dry_run))
    else:
        for s in summaries:
            for line in s.kept:
                err.print(Text(line, "yellow"))
            if s.failed:  # the reporter named it on stderr already
                continue
            out.print(_refilter_line(s, dry_run), markup=False, highlight=False, soft_wrap=True)
    if any(s.failed or s.unreadable for s in summaries):
        raise typer.Exit(1)


def _reasons(counts: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _refilter_line(s: RefilterSummary, dry_run: bool) -> str:
    name = flat(s.source)
    if not s.refiltered:
        line = f"{name}: no stored kernel to re-filter ({s.seen:,} kernels found"
        line += f", {s.not_stored:,} not stored: mine them first" if s.not_stored else ""
        line += f", {s.skipped:,} accepted already" if s.skipped else ""
        return line + ")"
    still = sum(s.still_refused.values())
    line = f"{name}: {s.refiltered:,} re-filtered: {s.now_accepted:,} now accepted"
    if s.still_accepted:
        line += f", {s.still_accepted:,} still accepted"
    line += f", {still:,} still refused"
    if still:
        line += f" ({_reasons(s.still_refused)})"
    if s.now_refused:
        line += f", {sum(s.now_refused.values()):,} now refused ({_reasons(s.now_refused)})"
    if s.merged:
        line += f"; {s.merged:,} now repeat another kernel and were merged into it"
    if s.kept:
        line += f"; {len(s.kept):,} repeat another but have votes or other rows (kept apart)"
    if s.gone:
        line += f"; {s.gone:,} changed in the store meanwhile (left alone)"
    if s.not_stored:
        line += f"; {s.not_stored:,} found but not stored (mine them)"
    if dry_run:
        line = line.replace(" were merged", " would be merged") + " (dry run, nothing written)"
    return line


def _refilter_json(summaries: list[RefilterSummary], dry_run: bool) -> dict[str, object]:
    return {
        "sources": [
            {
                "source": s.source,
                "files": s.files,
                "kernels": s.seen,
                "not_stored": s.not_stored,
                "skipped_accepted": s.skipped,
                "refiltered": s.refiltered,
                "now_accepted": s.now_accepted,
                "still_accepted": s.still_accepted,
                "still_refused": dict(sorted(s.still_refused.items())),
                "now_refused": dict(sorted(s.now_refused.items())),
                "unchanged": s.unchanged,
                "merged": s.merged,
                "kept": s.kept,
                "gone": s.gone,
                "unreadable": s.unreadable,
                "failed": s.failed,
            }
            for s in summaries
        ],
        "refiltered": sum(s.refiltered for s in summaries),
        "now_accepted": sum(s.now_accepted for s in summaries),
        "dry_run": dry_run,
        "written": not dry_run and any(s.refiltered - s.unchanged for s in summaries),
    }
