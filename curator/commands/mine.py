"""``curator mine commits``: headless mining of git repositories into the store."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from curator.commands.options import DbOption, open_db
from curator.commands.output import fail
from curator.commands.progress import SourceReporter, source_progress
from curator.console import err, out
from curator.safe_text import one_line
from engines.commits.languages import parse_languages
from engines.commits.options import MineOptions
from engines.commits.pipeline import BATCH_ROWS, SourceSummary, mine_commits
from engines.labelers.base import Labeler
from engines.labelers.keyword import KeywordLabeler
from engines.labelers.registry import LabelerError, load_labeler
from store import Store

app = typer.Typer(help="Mine candidates into the store.", no_args_is_help=True)


def _date(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date; use YYYY-MM-DD") from None
    return value


def _summary_table(summaries: list[SourceSummary]) -> Table:
    table = Table(title="Mining summary", title_justify="left")
    table.add_column("source", overflow="fold")
    table.add_column("branch")
    for name in ("seen", "filtered", "duplicates", "stored"):
        table.add_column(name, justify="right")
    for s in summaries:
        if s.failed:
            table.add_row(one_line(s.source, 60), "-", "-", "-", "-", Text("failed", "red"))
            continue
        table.add_row(
            one_line(s.source, 60),
            one_line(s.branch or "-"),
            str(s.seen),
            str(sum(s.filtered.values())),
            str(s.duplicates),
            str(s.stored),
        )
    return table


def _labelers(store: Store, names: list[str]) -> list[Labeler]:
    """The keyword labeler plus each named one (loaded once; a bad name exits 1)."""
    chosen: list[Labeler] = [KeywordLabeler()]
    for name in names:
        try:
            labeler = load_labeler(store, name)
        except (LabelerError, ValueError, OSError) as exc:
            store.close()
            fail(str(exc))
        if labeler.name not in {x.name for x in chosen}:
            chosen.append(labeler)
    return chosen


@app.command("commits")
def commits(
    sources: list[str] = typer.Argument(
        ..., help="Repository paths or git URLs.", show_default=False
    ),
    lang: str = typer.Option(
        "python,cpp,java", "--lang", help="Languages to keep (by file extension)."
    ),
    since: str | None = typer.Option(
        None, "--since", callback=_date, help="Only commits after this date."
    ),
    until: str | None = typer.Option(
        None, "--until", callback=_date, help="Only commits before this date."
    ),
    max_files: int = typer.Option(
        1, "--max-files", min=1, help="Drop commits touching more files."
    ),
    max_functions: int = typer.Option(
        1, "--max-functions", min=1, help="Drop commits changing more functions."
    ),
    branch: str | None = typer.Option(
        None, "--branch", help="Branch to walk (default: the repository's default branch)."
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Examine at most N commits per source in this run."
    ),
    token_budget: int = typer.Option(
        512, "--token-budget", min=0, help="Tokens kept in the model input text (0: all)."
    ),
    max_diff_mb: float = typer.Option(5.0, "--max-diff-mb", min=0.001, help="Skip larger diffs."),
    clone_dir: Path | None = typer.Option(
        None, "--clone-dir", help="Where URLs are cloned (default: ~/.cache/curator/repos)."
    ),
    batch_size: int = typer.Option(BATCH_ROWS, "--batch-size", min=1, hidden=True),
    labeler_names: list[str] = typer.Option(
        [],
        "--labeler",
        help="Also pre-label with this labeler, e.g. student@latest (repeatable).",
    ),
    db: Path | None = DbOption,
) -> None:
    """Mine single-file, single-function commits and pre-label them with keywords (and
    any --labeler)."""
    try:
        languages = parse_languages(lang)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lang") from None
    options = MineOptions(
        languages=languages,
        branch=branch,
        since=since,
        until=until,
        max_files=max_files,
        max_functions=max_functions,
        limit=limit,
        token_budget=token_budget,
        max_diff_bytes=int(max_diff_mb * 1024 * 1024),
    )
    store = open_db(db)
    labelers = _labelers(store, labeler_names)
    progress = source_progress("commits")
    reporter = SourceReporter(progress)
    try:
        with progress:
            summaries = mine_commits(
                store, sources, options, labelers, reporter, clone_dir, batch_size
            )
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted[/]: everything up to the last batch is saved; run again to resume"
        )
        raise typer.Exit(130) from None
    finally:
        store.close()
    out.print(_summary_table(summaries))
    filtered: Counter[str] = Counter()
    for s in summaries:
        filtered.update(s.filtered)
    if filtered:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(filtered.items()))
        out.print(f"filtered by reason: {reasons}")
    stored = sum(s.stored for s in summaries)
    seen = sum(s.seen for s in summaries)
    dups = sum(s.duplicates for s in summaries)
    out.print(f"seen {seen}, filtered {sum(filtered.values())}, duplicates {dups}, stored {stored}")
    if any(s.failed for s in summaries):
        raise typer.Exit(1)
