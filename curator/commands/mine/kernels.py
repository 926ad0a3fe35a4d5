"""``curator mine kernels``: OpenCL kernels scraped, filtered, normalised and stored."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

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
from engines.kernels.pipeline import SourceSummary, mine_kernels


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
    clone_dir: CloneDirOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Scrape OpenCL kernels, filter, normalise, featurise and store them."""
    store = open_db(db)
    progress = source_progress("files")
    reporter = SourceReporter(progress)
    try:
        with progress, kernel_worker() as worker:
            summaries = mine_kernels(
                store,
                sources,
                min_instructions,
                reporter,
                clone_dir or settings().clone_dir,
                worker,
            )
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: every saved batch is kept; run again to resume")
        raise typer.Exit(130) from None
    finally:
        store.close()
    if as_json:
        print_json(_summary_json(summaries))
    else:
        _print_summary(summaries)
    if any(s.failed or s.unreadable for s in summaries):
        raise typer.Exit(1)


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
