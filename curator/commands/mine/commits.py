"""``curator mine commits``: headless mining of git repositories into the store (the work
is in ``curator.mining``)."""

from __future__ import annotations

import signal
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from curator.cli_context import open_db, settings
from curator.commands.options import (
    CloneDirOption,
    DbOption,
    JsonOption,
    finite,
    given_path,
    given_source,
)
from curator.console import err, out
from curator.mining import (
    CommitRun,
    MiningError,
    Sources,
    from_repos_file,
    labeler_specs,
    run_in_process,
    run_on_cluster,
    sources_to_mine,
)
from curator.presentation.cli_output import fail, print_json
from curator.presentation.format import MISSING
from curator.presentation.progress import (
    ClusterProgress,
    SourceReporter,
    cluster_progress,
    source_progress,
)
from curator.presentation.text import flat, labelled, one_line
from engines.commits.cluster import DEFAULT_CHUNK
from engines.commits.languages import parse_languages
from engines.commits.options import MineOptions
from engines.commits.pipeline import BATCH_ROWS, SourceSummary
from engines.dask_cluster import Terminated, sigterm_as_interrupt
from store import Store


def _date(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date; use YYYY-MM-DD") from None
    return value


def _refuse_conflicts(
    sources: bool,
    repos_file: bool,
    min_stars: int | None,
    workers: int | None,
    scheduler: str | None,
    window: tuple[str | None, str | None],
) -> None:
    """Usage errors between options, before the database is touched."""
    if scheduler is not None and not scheduler.strip():
        raise typer.BadParameter("the address is empty", param_hint="--scheduler")
    if workers is not None and scheduler:
        raise typer.BadParameter("give --workers or --scheduler, not both", param_hint="--workers")
    if min_stars is not None and not repos_file:
        raise typer.BadParameter(
            "it filters the --repos-file list; give one", param_hint="--min-stars"
        )
    if not sources and not repos_file:
        raise typer.BadParameter("name repositories, or give --repos-file", param_hint="SOURCES")
    since, until = window
    if since and until:
        # dates with and without a time zone are compared as UTC
        start, end = (datetime.fromisoformat(v) for v in window)
        start, end = (d if d.tzinfo else d.replace(tzinfo=UTC) for d in (start, end))
        if end < start:
            raise typer.BadParameter(
                f"{until} is before --since {since}: no commit could match", param_hint="--until"
            )


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
            branch = one_line(s.branch or MISSING)  # a --branch it lacks names it here
            table.add_row(one_line(s.source, 60), branch, *[MISSING] * 3, failed)
            continue
        table.add_row(
            one_line(s.source, 60),
            one_line(s.branch or MISSING),
            str(s.seen),
            str(sum(s.filtered.values())),
            str(s.duplicates),
            str(s.stored),
        )
    return table


def mine_commits_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            parser=given_source, help="Repository paths or git URLs.", show_default=False
        ),
    ] = None,
    repos_file: Annotated[
        Path | None,
        typer.Option(
            "--repos-file",
            parser=given_path,
            help="CSV of repositories: URL or path, stars, language (header optional).",
        ),
    ] = None,
    min_stars: Annotated[
        int | None,
        typer.Option(
            "--min-stars", min=0, help="Only repositories of the list with this many stars."
        ),
    ] = None,
    lang: Annotated[
        str,
        typer.Option(
            "--lang",
            help="Languages to keep: files by extension, and the list's repositories by language.",
        ),
    ] = "python,cpp,java",
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            callback=_date,
            help="Only commits from this date on (YYYY-MM-DD: its midnight, UTC; or an ISO time).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            callback=_date,
            help="Only commits before this date (YYYY-MM-DD: its midnight, UTC; or an ISO time).",
        ),
    ] = None,
    max_files: Annotated[
        int, typer.Option("--max-files", min=1, help="Drop commits touching more files.")
    ] = 1,
    max_functions: Annotated[
        int, typer.Option("--max-functions", min=1, help="Drop commits changing more functions.")
    ] = 1,
    branch: Annotated[
        str | None,
        typer.Option("--branch", help="Branch to walk (default: the repository's default branch)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Examine at most N commits per source in this run."),
    ] = None,
    token_budget: Annotated[
        int,
        typer.Option("--token-budget", min=0, help="Tokens kept in the model input text (0: all)."),
    ] = 512,
    max_diff_mb: Annotated[
        float,
        typer.Option(
            "--max-diff-mb", min=0.001, max=1_000_000, callback=finite, help="Skip larger diffs."
        ),
    ] = 5.0,
    clone_dir: CloneDirOption = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers", min=1, help="Mine on a local Dask cluster of N worker processes."
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Mine on an existing Dask cluster, e.g. tcp://host:8786."),
    ] = None,
    chunk: Annotated[
        int,
        typer.Option(
            "--task-commits",
            min=1,
            help="Commits per cluster task (a lost worker costs at most one task).",
        ),
    ] = DEFAULT_CHUNK,
    refresh: Annotated[
        bool,
        typer.Option(
            "--refresh",
            help="Also revisit repositories of --repos-file that an earlier run finished.",
        ),
    ] = False,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, hidden=True)] = BATCH_ROWS,
    labeler_names: Annotated[
        list[str] | None,
        typer.Option(
            "--labeler", help="Also pre-label with this labeler, e.g. student@latest (repeatable)."
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Mine single-file, single-function commits and pre-label them with keywords (and
    any --labeler), in this process or on a Dask cluster."""
    try:
        languages = parse_languages(lang)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--lang") from None
    _refuse_conflicts(
        bool(sources), repos_file is not None, min_stars, workers, scheduler, (since, until)
    )
    listed = _from_repos_file(repos_file, min_stars, languages) if repos_file else []
    windows = (branch, since, until, limit)
    options = _options(languages, windows, max_files, max_functions, token_budget, max_diff_mb)
    store = open_db(db)
    partial: list[SourceSummary] = []  # what an interrupted run saved, source by source
    started, skipped = time.monotonic(), 0
    try:
        label_specs = labeler_specs(store, labeler_names or [])
        chosen = sources_to_mine(store, list(sources or []), listed, options, refresh)
        specs, skipped = chosen.specs, chosen.skipped
        _say_choices(chosen)
        if not specs:
            _print_summary([], 0.0, skipped, as_json)
            return
        run = CommitRun(
            specs,
            options,
            label_specs,
            clone_dir or settings().clone_dir,
            batch_size,
            workers,
            scheduler,
            chunk,
            chosen.checkpoints,
        )
        started = time.monotonic()
        with sigterm_as_interrupt():
            summaries, seconds = _run(store, run, partial)
    except MiningError as exc:
        if partial:  # the cluster went mid-run (its scheduler lost): say what was saved
            err.print(labelled("error", "red", one_line(str(exc), 400)), soft_wrap=True)
            seconds = time.monotonic() - started
            _print_summary(partial, seconds, skipped, as_json, interrupted=True, error=str(exc))
            raise typer.Exit(1) from None
        fail(str(exc))
    except KeyboardInterrupt as stop:
        terminated = isinstance(stop, Terminated)
        what = "[yellow]terminated[/] (SIGTERM)" if terminated else "[yellow]interrupted[/]"
        err.print(f"{what}: everything up to the last batch is saved; run again to resume")
        # the summary of what was saved, so that a script reading --json has its answer
        _print_summary(partial, time.monotonic() - started, skipped, as_json, interrupted=True)
        raise typer.Exit(128 + signal.SIGTERM if terminated else 130) from None
    finally:
        store.close()
    _print_summary(summaries, seconds, skipped, as_json)
    if any(s.failed for s in summaries):
        raise typer.Exit(1)


def _options(
    languages: frozenset[str],
    windows: tuple[str | None, str | None, str | None, int | None],
    max_files: int,
    max_functions: int,
    token_budget: int,
    max_diff_mb: float,
) -> MineOptions:
    """The filters as the engine takes them (``windows``: branch, since, until, limit)."""
    branch, since, until, limit = windows
    return MineOptions(
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


def _say_choices(chosen: Sources) -> None:
    """One line per source given twice, per source the store holds in another spelling,
    and one for the listed sources an earlier run finished."""
    for spec, mined in chosen.repeated:
        same = "given twice" if spec == mined else f"the same repository as {mined}"
        err.print(labelled("warning", "yellow", one_line(f"{spec}: {same}; skipped", 300)))
    for spec, stored in chosen.stored_as:
        err.print(
            one_line(f"{spec}: the store holds this repository as {stored}; mining that", 300),
            markup=False,
        )
    if chosen.skipped:
        err.print(
            f"skipping {_repositories(chosen.skipped)} an earlier run finished"
            " (--refresh revisits them)",
            markup=False,
        )


def _run(
    store: Store, run: CommitRun, partial: list[SourceSummary]
) -> tuple[list[SourceSummary], float]:
    """The run with its progress display: a bar per source, or two rows of totals for a
    long list or a cluster. ``partial`` gets the summaries as the run goes."""
    if run.on_cluster:
        progress = cluster_progress()
        with progress:
            return run_on_cluster(store, run, ClusterProgress(progress), partial)
    # drawn by the reporter, not a thread of its own: the run's extraction workers
    # are forked only from a process that runs one thread
    reporter: SourceReporter | ClusterProgress
    if len(run.specs) > SUMMARY_ROWS:
        progress = cluster_progress(drawn_by_reporter=True)
        reporter = ClusterProgress(progress)
        reporter.run_started(len(run.specs), 0, None)
    else:
        progress = source_progress("commits", drawn_by_reporter=True)
        reporter = SourceReporter(progress)
    with progress:
        return run_in_process(store, run, reporter, partial)


def _from_repos_file(path: Path, min_stars: int | None, languages: frozenset[str]) -> list[str]:
    """The chosen repositories of a list; each bad line is reported and skipped."""
    try:
        selection = from_repos_file(path, min_stars, languages)
    except MiningError as exc:
        fail(str(exc))
    for problem in selection.problems:
        err.print(labelled("warning", "yellow", one_line(problem, 300)))
    dropped = ", ".join(f"{k} {v}" for k, v in selection.dropped.items())
    err.print(
        f"{path}: {_repositories(selection.listed)} listed, {len(selection.specs)} chosen"
        + (f" (dropped by {dropped})" if dropped else ""),
        markup=False,
    )
    return selection.specs


def _repositories(n: int) -> str:
    return f"{n:,} repositor{'y' if n == 1 else 'ies'}"


def _totals(summaries: list[SourceSummary]) -> tuple[Counter[str], Counter[str]]:
    """Commits filtered by reason, and failed sources by reason."""
    filtered: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    for s in summaries:
        filtered.update(s.filtered)
        if s.failed:
            failures[s.reason or "error"] += 1
    return filtered, failures


def _summary_json(
    summaries: list[SourceSummary],
    seconds: float,
    skipped: int,
    interrupted: bool = False,
    error: str | None = None,
) -> dict[str, object]:
    filtered, failures = _totals(summaries)
    errors = [flat(f"{s.source}: {s.failed}") for s in summaries if s.failed]
    return {
        "interrupted": interrupted,
        "sources": [
            {
                "source": s.source,
                "branch": s.branch,
                "seen": s.seen,
                "filtered": dict(sorted(s.filtered.items())),
                "duplicates": s.duplicates,
                "known": s.known,
                "stored": s.stored,
                "undated": s.undated,
                "failed": s.reason or "error" if s.failed else None,
            }
            for s in summaries
        ],
        "seen": sum(s.seen for s in summaries),
        "filtered": dict(sorted(filtered.items())),
        "duplicates": sum(s.duplicates for s in summaries),
        "known": sum(s.known for s in summaries),
        "stored": sum(s.stored for s in summaries),
        "undated": sum(s.undated for s in summaries),
        "failed": dict(sorted(failures.items())),
        "requeued": sum(s.requeued for s in summaries),
        "skipped_finished": skipped,
        "seconds": round(seconds, 3),
        "errors": [*errors, flat(error)] if error else errors,
    }


def _print_summary(
    summaries: list[SourceSummary],
    seconds: float,
    skipped: int,
    as_json: bool,
    interrupted: bool = False,
    error: str | None = None,
) -> None:
    """The run's summary; an interrupted run's counts what it saved (the commits after
    the last saved batch are mined again by the next run). ``error``: what stopped it,
    added to the JSON's ``errors`` (the text form has it on stderr already)."""
    if as_json:
        print_json(_summary_json(summaries, seconds, skipped, interrupted, error))
        return
    if not summaries and interrupted:
        return  # stopped before any source started: the line on stderr says it all
    if not summaries:
        out.print(
            "nothing to mine: every chosen repository was finished by an earlier run"
            if skipped
            else "nothing to mine: no repository was chosen (an empty list, or filters"
            " such as --min-stars or --lang that none passes)"
        )
        return
    out.print(_summary_table(summaries))
    filtered, failures = _totals(summaries)
    if filtered:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(filtered.items()))
        out.print(f"filtered by reason: {reasons}")
    if failures:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(failures.items()))
        out.print(f"failed repositories by reason: {reasons}")
    undated = sum(s.undated for s in summaries)
    if undated:
        out.print(f"kept without a date (author date unreadable, see the warnings): {undated}")
    requeued = sum(s.requeued for s in summaries)
    if requeued:
        out.print(f"slices run again after a lost worker: {requeued} (no rows lost or doubled)")
    stored = sum(s.stored for s in summaries)
    seen = sum(s.seen for s in summaries)
    dups = sum(s.duplicates for s in summaries)
    # commits stored from this source by an earlier run (another window or filters):
    # without them seen would not add up to filtered + duplicates + stored
    known = sum(s.known for s in summaries)
    already = f", already stored {known}" if known else ""
    rate = f", {seen / seconds:,.0f} commits/s" if seconds > 0 and seen else ""
    saved = "saved before the interruption: " if interrupted else ""
    out.print(
        f"{saved}seen {seen}, filtered {sum(filtered.values())}, duplicates {dups}{already},"
        f" stored {stored} in {seconds:,.1f} s{rate}"
    )
