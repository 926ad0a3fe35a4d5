"""``curator mine commits``: sources in, deduplicated and pre-labeled commits stored.

The driver resolves each source, resumes from its checkpoint, runs the miner, labels
survivors in batches and writes each batch with its checkpoint in one transaction,
so a run killed at any point restarts exactly where its last batch ended. The cluster
driver (``cluster.py``) shares the start step, the miner, the labeling and the writes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.commits.gitlog import (
    BranchNotFound,
    GitError,
    count_commits,
    newest_commit,
    tree_suffixes,
)
from engines.commits.labeling import label_rows
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.sources import SourceError, source_name
from engines.commits.start import finished_in, start_source
from engines.labelers.base import Labeler
from engines.reporting import SilentReporter, SourceReporter, cumulative_counts, tally
from store import Store
from store.commits import load_checkpoints, save_checkpoint, save_commit_batch
from store.records import Checkpoint, CommitRow, SaveResult

KIND = "commit"
BATCH_ROWS = 200
BATCH_SECONDS = 2.0


@dataclass
class SourceSummary:
    """What one source contributed in this run."""

    source: str
    branch: str | None = None
    seen: int = 0
    stored: int = 0
    duplicates: int = 0
    known: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    failed: str | None = None
    reason: str | None = None  # the failure's category: clone, not-found, git, ...
    resumed_after: str | None = None
    requeued: int = 0  # slices run again after a worker was lost (cluster runs)
    undated: int = 0  # kept commits whose author date git could not read (stored undated)


# the reasons the file list alone decides: a walk with no other kept no commit to read
_FILE_LIST_REASONS = frozenset({"no-files", "too-many-files", "language"})


def _no_language_note(
    path: Path, source: str, rev: str, options: MineOptions, summary: SourceSummary
) -> str | None:
    """A line for a branch whose tip holds no file of the chosen languages, when the
    file lists filtered every commit of the walk (a Rust or Go repository under the
    default ``--lang``): its summary, all ``language`` and ``too-many-files``, does not
    say that the repository is of another language."""
    if not summary.seen or summary.stored or summary.duplicates or summary.known:
        return None
    if not set(summary.filtered) <= _FILE_LIST_REASONS:
        return None
    try:
        found = tree_suffixes(path, rev)
    except GitError:  # a tree git cannot list: the run said what it had to
        return None
    if any(language_of(f"x{ext}") in options.languages for ext in found):
        return None
    chosen = ", ".join(sorted(options.languages))
    common = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:3]
    most = ", ".join(f"{ext or 'no extension'} {n}" for ext, n in common)
    return (
        f"{source}: no file of the chosen languages ({chosen}) at the tip of {rev}"
        f" (its files: {most or 'none'}); nothing in it to mine"
    )


_COUNTS = ("seen", "stored", "duplicates", "known", "undated")


def _counts(summary: SourceSummary) -> tuple[tuple[int, ...], Counter[str]]:
    """A summary's counters, to restore when a run is interrupted."""
    return tuple(getattr(summary, name) for name in _COUNTS), Counter(summary.filtered)


def _restore(summary: SourceSummary, counts: tuple[tuple[int, ...], Counter[str]]) -> None:
    values, filtered = counts
    for name, value in zip(_COUNTS, values, strict=True):
        setattr(summary, name, value)
    summary.filtered = Counter(filtered)


# every commit checkpoint of a store: by source, then by scope
Checkpoints = Mapping[str, Mapping[str, Checkpoint]]


def source_checkpoints(store: Store, source: str) -> dict[str, Checkpoint]:
    """A source's checkpoints by scope."""
    return {cp.scope: cp for cp in load_checkpoints(store, KIND, source)}


def _saved_up_to(store: Store, source: str, scope: str, sha: str) -> bool:
    """Whether the source's checkpoint in ``scope`` stands at ``sha``: the batch that
    ends there was committed."""
    checkpoint = source_checkpoints(store, source).get(scope)
    return checkpoint is not None and checkpoint.last_key == sha


def all_checkpoints(store: Store) -> dict[str, dict[str, Checkpoint]]:
    """Every commit checkpoint of the store, by source then scope: read once by a run
    that chooses its sources by them, then handed to the driver."""
    return _by_source(load_checkpoints(store, KIND))


def _by_source(checkpoints: Iterable[Checkpoint]) -> dict[str, dict[str, Checkpoint]]:
    grouped: dict[str, dict[str, Checkpoint]] = {}
    for cp in checkpoints:
        grouped.setdefault(cp.source, {})[cp.scope] = cp
    return grouped


def finished_sources(
    store: Store,
    specs: Sequence[str],
    options: MineOptions,
    checkpoints: Checkpoints | None = None,
) -> set[str]:
    """The specs whose branch an earlier run walked to the end under these options
    (``checkpoints``: the store's, when the caller has read them already)."""
    wanted = {source_name(spec): spec for spec in specs}
    known = all_checkpoints(store) if checkpoints is None else checkpoints
    done = {
        source
        for source in wanted
        if any(finished_in(cp, options) for cp in known.get(source, {}).values())
    }
    return {wanted[source] for source in done}


def _checkpoints_of(
    store: Store, source: str, checkpoints: Checkpoints | None
) -> Mapping[str, Checkpoint]:
    return source_checkpoints(store, source) if checkpoints is None else checkpoints.get(source, {})


def save_rows(
    store: Store,
    rows: Sequence[CommitRow],
    summary: SourceSummary,
    checkpoint: Callable[[], Checkpoint],
    batch_rows: int = BATCH_ROWS,
) -> None:
    """Write rows in batches, counting what happened to each in ``summary``; the
    checkpoint (built once the counts are in) moves with the last batch."""
    if not rows:
        save_checkpoint(store, checkpoint())
        return

    def tally_then_checkpoint(results: list[SaveResult]) -> Checkpoint:
        tally(summary, results)
        return checkpoint()

    for start in range(0, len(rows), batch_rows):
        batch = rows[start : start + batch_rows]
        if start + batch_rows >= len(rows):
            save_commit_batch(store, batch, tally_then_checkpoint)
        else:
            tally(summary, save_commit_batch(store, batch))


def cumulative(base: dict[str, Any], summary: SourceSummary, **state: Any) -> dict[str, Any]:
    """Counters over every run of this source and scope, stored with the checkpoint,
    with where the walk stands (``branch``, ``finished``, ...)."""
    return {**cumulative_counts(base, summary), "branch": summary.branch, **state}


def walk_state(tip: str | None, shallow: Sequence[str], **state: Any) -> dict[str, Any]:
    """What a checkpoint keeps of the walk beside its counters: the tip it walked (a
    later run walks only what that tip's history lacks) and, for a shallow clone, its
    edge (a deepened clone is walked again: see :func:`engines.commits.start.start_source`)."""
    kept = {**state, "tip": tip} if tip is not None else dict(state)
    if shallow:
        kept["shallow"] = list(shallow)
    return kept


def mine_commits(
    store: Store,
    specs: Sequence[str],
    options: MineOptions,
    labelers: Sequence[Labeler] = (),
    reporter: SourceReporter | None = None,
    clone_dir: Path | None = None,
    batch_rows: int = BATCH_ROWS,
    checkpoints: Checkpoints | None = None,
    into: list[SourceSummary] | None = None,
) -> list[SourceSummary]:
    """Mine every source in turn; a failing source is reported and skipped.
    ``checkpoints``: the store's (:func:`all_checkpoints`), when the caller read them
    to choose the sources; else each source's are read as it starts. ``into``: a list
    each source's summary is added to as it starts, so that a caller interrupted
    (Ctrl-C, SIGTERM) still holds what was saved so far: the summary of the source
    mined then counts the commits up to its last saved batch."""
    report = reporter or SilentReporter()
    summaries = [] if into is None else into
    for spec in specs:
        summary = SourceSummary(spec)
        summaries.append(summary)
        resumes = _checkpoints_of(store, source_name(spec), checkpoints)
        try:
            _mine_source(
                store, spec, options, labelers, report, clone_dir, batch_rows, summary, resumes
            )
        except SourceError as exc:
            summary.failed, summary.reason = str(exc), exc.reason
        except GitError as exc:
            summary.failed, summary.reason = str(exc), exc.reason
            if isinstance(exc, BranchNotFound):
                summary.branch = exc.branch  # the summary names the branch it lacks
        report.source_finished(summary)
    return summaries


def _mine_source(
    store: Store,
    spec: str,
    options: MineOptions,
    labelers: Sequence[Labeler],
    report: SourceReporter,
    clone_dir: Path | None,
    batch_rows: int,
    summary: SourceSummary,
    checkpoints: Mapping[str, Checkpoint],
) -> None:
    start = start_source(spec, options, checkpoints, clone_dir)
    repo, rev = start.repo, start.branch
    summary.source, summary.branch = repo.source, rev
    for warning in start.warnings:
        report.problem(warning)
    after, base = start.after, start.counters
    summary.resumed_after = after
    total = count_commits(repo.path, rev, options.since, options.until)
    done = int(base.get("seen", 0))
    if options.limit is not None:
        total = min(total, done + options.limit)
    report.source_started(repo.source, total, done)

    pending: list[CommitRow] = []
    unflushed = 0
    last_sha = after
    finished = False
    flushed_at = time.monotonic()

    def checkpoint_for(results: list[SaveResult]) -> Checkpoint:
        tally(summary, results)
        state = walk_state(start.tip, start.shallow, finished=finished)
        return Checkpoint(
            KIND, repo.source, start.scope, last_sha, cumulative(base, summary, **state)
        )

    saved = _counts(summary)  # the summary as of the last saved batch
    saving: str | None = None  # the last commit of a batch being saved, until `saved` is

    def flush() -> None:
        nonlocal pending, unflushed, flushed_at, saved, saving
        if not unflushed:
            return
        label_rows(pending, labelers)
        saving = last_sha
        save_commit_batch(store, pending, checkpoint_for)
        saved, saving = _counts(summary), None
        report.advance(repo.source, unflushed)
        pending, unflushed, flushed_at = [], 0, time.monotonic()

    try:
        # Imported here: PyDriller (and GitPython) load when a run mines, not when the CLI starts.
        from engines.commits.miner import file_outcome, mine_repository

        walk = mine_repository(repo.path, repo.source, rev, options, after, examined=start.examined)
        for outcome in walk:
            summary.seen += 1
            unflushed += 1
            last_sha = outcome.sha
            kept = len(pending)
            file_outcome(outcome, repo.source, pending, summary.filtered, report.problem)
            summary.undated += sum(1 for row in pending[kept:] if row.author_date is None)
            if len(pending) >= batch_rows or time.monotonic() - flushed_at > BATCH_SECONDS:
                flush()
            if options.limit is not None and summary.seen >= options.limit:
                break
        else:
            finished = True
            if start.examined is not None:  # the walk skipped commits listed after its last one
                last_sha = newest_commit(repo.path, rev, options.since, options.until) or last_sha
        if finished and not unflushed:
            # the end came right after a batch, or the walk had no commit to examine (a
            # window without any): recorded as finished all the same, without a commit, so
            # that a list's next run skips the source as a cluster run does
            save_checkpoint(store, checkpoint_for([]))
        flush()
        if finished:
            note = _no_language_note(repo.path, repo.source, rev, options, summary)
            if note:
                report.problem(note)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM as the command raises it
        # interrupted: what was not saved is mined again by the next run, so the summary
        # counts only what was (a batch interrupted while it was saved is rolled back;
        # one whose transaction had committed when the interrupt came is counted)
        if saving is None or not _saved_up_to(store, repo.source, start.scope, saving):
            _restore(summary, saved)
        raise
