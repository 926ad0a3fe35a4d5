"""``curator mine commits``: headless mining of git repositories into the store."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from curator.commands.options import DbOption, open_db
from curator.commands.output import fail
from curator.commands.progress import (
    ClusterProgress,
    SourceReporter,
    cluster_progress,
    source_progress,
)
from curator.console import err, out
from curator.safe_text import labelled, one_line
from engines.commits.cluster import DEFAULT_CHUNK, ClusterError, dask_client, mine_on_cluster
from engines.commits.languages import parse_languages
from engines.commits.options import MineOptions
from engines.commits.pipeline import BATCH_ROWS, SourceSummary, finished_sources, mine_commits
from engines.commits.repo_list import RepoListError, read_repo_list, select
from engines.labelers.base import Labeler
from engines.labelers.registry import LabelerError, LabelerSpec, build_labeler, resolve_labeler
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


SUMMARY_ROWS = 30  # beyond this many sources the table lists failures only


def _summary_table(summaries: list[SourceSummary]) -> Table:
    shown = summaries
    title = "Mining summary"
    if len(summaries) > SUMMARY_ROWS:
        shown = [s for s in summaries if s.failed][:SUMMARY_ROWS]
        title = f"Mining summary: {len(summaries):,} repositories, failed ones listed"
    table = Table(title=title, title_justify="left")
    table.add_column("source", overflow="fold")
    table.add_column("branch")
    for name in ("seen", "filtered", "duplicates", "stored"):
        table.add_column(name, justify="right")
    for s in shown:
        if s.failed:
            failed = Text(f"failed: {s.reason or 'error'}", "red")
            table.add_row(one_line(s.source, 60), "-", "-", "-", "-", failed)
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


def _labeler_specs(store: Store, names: list[str]) -> list[LabelerSpec]:
    """The keyword labeler plus each named one, resolved (a bad name exits 1)."""
    chosen: list[LabelerSpec] = []
    for name in ["keyword@latest", *names]:
        try:
            spec = resolve_labeler(store, name)
        except (LabelerError, ValueError, OSError) as exc:
            store.close()
            fail(str(exc))
        if spec.name not in {x.name for x in chosen}:
            chosen.append(spec)
    return chosen


def _build(store: Store, specs: list[LabelerSpec]) -> list[Labeler]:
    built = []
    for spec in specs:
        try:
            built.append(build_labeler(spec))
        except (LabelerError, ValueError, OSError) as exc:
            store.close()
            fail(str(exc))
    return built


def _repositories(n: int) -> str:
    return f"{n:,} repositor{'y' if n == 1 else 'ies'}"


def _from_repos_file(path: Path, min_stars: int | None, languages: frozenset[str]) -> list[str]:
    """The repositories of a list that pass the star and language filters; each bad
    line is reported and skipped."""
    try:
        listing = read_repo_list(path)
    except RepoListError as exc:
        fail(str(exc))
    for problem in listing.problems:
        err.print(labelled("warning", "yellow", one_line(problem, 300)))
    selection = select(listing.entries, min_stars, languages)
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(selection.dropped.items()))
    err.print(
        f"{path}: {_repositories(len(listing.entries))} listed, {len(selection.chosen)} chosen"
        + (f" (dropped by {dropped})" if dropped else ""),
        markup=False,
    )
    return [entry.spec for entry in selection.chosen]


@app.command("commits")
def commits(
    sources: list[str] | None = typer.Argument(
        None, help="Repository paths or git URLs.", show_default=False
    ),
    repos_file: Path | None = typer.Option(
        None,
        "--repos-file",
        help="CSV of repositories: URL or path, stars, language (header optional).",
    ),
    min_stars: int | None = typer.Option(
        None, "--min-stars", min=0, help="Only repositories of the list with this many stars."
    ),
    lang: str = typer.Option(
        "python,cpp,java",
        "--lang",
        help="Languages to keep: files by extension, and the list's repositories by language.",
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
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Mine on a local Dask cluster of N worker processes."
    ),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Mine on an existing Dask cluster, e.g. tcp://host:8786."
    ),
    chunk: int = typer.Option(
        DEFAULT_CHUNK,
        "--task-commits",
        min=1,
        help="Commits per cluster task (a lost worker costs at most one task).",
    ),
    refresh: bool = typer.Option(
        False,
        "--refresh",
        help="Also revisit repositories of --repos-file that an earlier run finished.",
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
    any --labeler), in this process or on a Dask cluster."""
    try:
        languages = parse_languages(lang)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lang") from None
    if workers is not None and scheduler:
        raise typer.BadParameter("give --workers or --scheduler, not both", param_hint="--workers")
    if min_stars is not None and repos_file is None:
        raise typer.BadParameter(
            "it filters the --repos-file list; give one", param_hint="--min-stars"
        )
    specs = list(sources or [])
    listed: list[str] = []
    if repos_file is not None:
        listed = _from_repos_file(repos_file, min_stars, languages)
    if not specs and repos_file is None:
        raise typer.BadParameter("name repositories, or give --repos-file", param_hint="SOURCES")
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
    label_specs = _labeler_specs(store, labeler_names)
    if listed and not refresh:
        done = finished_sources(store, listed, options)
        if done:
            err.print(
                f"skipping {_repositories(len(done))} an earlier run finished"
                " (--refresh revisits them)",
                markup=False,
            )
            listed = [spec for spec in listed if spec not in done]
    named = set(specs)
    specs += [spec for spec in listed if spec not in named]
    if not specs:
        store.close()
        out.print("nothing to mine: every chosen repository was finished by an earlier run")
        return
    try:
        if workers is None and not scheduler:
            summaries, seconds = _in_process(
                store, specs, options, label_specs, clone_dir, batch_size
            )
        else:
            summaries, seconds = _on_cluster(
                store, specs, options, label_specs, clone_dir, batch_size, workers, scheduler, chunk
            )
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted[/]: everything up to the last batch is saved; run again to resume"
        )
        raise typer.Exit(130) from None
    finally:
        store.close()
    _print_summary(summaries, seconds)
    if any(s.failed for s in summaries):
        raise typer.Exit(1)


def _in_process(
    store: Store,
    specs: list[str],
    options: MineOptions,
    label_specs: list[LabelerSpec],
    clone_dir: Path | None,
    batch_size: int,
) -> tuple[list[SourceSummary], float]:
    labelers = _build(store, label_specs)
    reporter: SourceReporter | ClusterProgress
    if len(specs) > SUMMARY_ROWS:  # a long list: two rows of totals, not a bar per source
        progress = cluster_progress()
        reporter = ClusterProgress(progress)
        reporter.run_started(len(specs), 0, None)
    else:
        progress = source_progress("commits")
        reporter = SourceReporter(progress)
    started = time.monotonic()
    with progress:
        summaries = mine_commits(store, specs, options, labelers, reporter, clone_dir, batch_size)
    return summaries, time.monotonic() - started


def _on_cluster(
    store: Store,
    specs: list[str],
    options: MineOptions,
    label_specs: list[LabelerSpec],
    clone_dir: Path | None,
    batch_size: int,
    workers: int | None,
    scheduler: str | None,
    chunk: int,
) -> tuple[list[SourceSummary], float]:
    """Mine on the cluster; the time returned leaves out starting or joining it."""
    progress = cluster_progress()
    reporter = ClusterProgress(progress)
    try:
        with dask_client(workers, scheduler) as client, progress:
            started = time.monotonic()
            summaries = mine_on_cluster(
                store, specs, options, client, label_specs, reporter, clone_dir, chunk, batch_size
            )
            return summaries, time.monotonic() - started
    except ClusterError as exc:
        store.close()
        fail(str(exc))


def _print_summary(summaries: list[SourceSummary], seconds: float) -> None:
    out.print(_summary_table(summaries))
    filtered: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    for s in summaries:
        filtered.update(s.filtered)
        if s.failed:
            failures[s.reason or "error"] += 1
    if filtered:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(filtered.items()))
        out.print(f"filtered by reason: {reasons}")
    if failures:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(failures.items()))
        out.print(f"failed repositories by reason: {reasons}")
    requeued = sum(s.requeued for s in summaries)
    if requeued:
        out.print(f"slices run again after a lost worker: {requeued} (no rows lost or doubled)")
    stored = sum(s.stored for s in summaries)
    seen = sum(s.seen for s in summaries)
    dups = sum(s.duplicates for s in summaries)
    rate = f", {seen / seconds:,.0f} commits/s" if seconds > 0 and seen else ""
    out.print(
        f"seen {seen}, filtered {sum(filtered.values())}, duplicates {dups}, stored {stored}"
        f" in {seconds:,.1f} s{rate}"
    )
