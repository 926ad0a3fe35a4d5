"""``curator mine commits``: sources in, deduplicated and pre-labeled commits stored.

The driver resolves each source, resumes from its checkpoint, runs the miner, labels
survivors in batches and writes each batch with its checkpoint in one transaction,
so a run killed at any point restarts exactly where its last batch ended.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.commits.gitlog import GitError, count_commits, is_ancestor, resolve_branch
from engines.commits.miner import Mined, Rejected, mine_repository
from engines.commits.options import MineOptions
from engines.commits.sources import SourceError, resolve_source
from engines.labelers.base import Labeler
from engines.reporting import SilentReporter, SourceReporter
from store import Store
from store.commits import load_checkpoint, save_commit_batch
from store.records import Checkpoint, CommitRow, PredictionRow, SaveResult

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
    resumed_after: str | None = None


def label_rows(rows: Sequence[CommitRow], labelers: Sequence[Labeler]) -> None:
    """Attach every labeler's prediction to every row (labelers choose their input field)."""
    for labeler in labelers:
        predictions = labeler.predict([getattr(row, labeler.input_field) for row in rows])
        for row, p in zip(rows, predictions, strict=True):
            row.predictions.append(PredictionRow(labeler.name, p.label, p.score, p.details))


def mine_commits(
    store: Store,
    specs: Sequence[str],
    options: MineOptions,
    labelers: Sequence[Labeler] = (),
    reporter: SourceReporter | None = None,
    clone_dir: Path | None = None,
    batch_rows: int = BATCH_ROWS,
) -> list[SourceSummary]:
    """Mine every source in turn; a failing source is reported and skipped."""
    report = reporter or SilentReporter()
    summaries = []
    for spec in specs:
        summary = SourceSummary(spec)
        summaries.append(summary)
        try:
            _mine_source(store, spec, options, labelers, report, clone_dir, batch_rows, summary)
        except (SourceError, GitError) as exc:
            summary.failed = str(exc)
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
) -> None:
    repo = resolve_source(spec, clone_dir)
    summary.source = repo.source
    if repo.warning:
        report.problem(f"{spec}: {repo.warning}")
    rev = resolve_branch(repo.path, options.branch)
    summary.branch = rev
    scope = options.scope(rev)
    checkpoint = load_checkpoint(store, KIND, repo.source, scope)
    after = checkpoint.last_key if checkpoint else None
    base: dict[str, Any] = checkpoint.counters if checkpoint else {}
    if after is not None and not is_ancestor(repo.path, after, rev):
        report.problem(
            f"{repo.source}: checkpoint {after[:12]} is no longer on {rev} (history rewritten?);"
            " walking the whole branch again, stored commits are skipped"
        )
        after, base = None, {}
    summary.resumed_after = after
    total = count_commits(repo.path, rev, options.since, options.until)
    done = int(base.get("seen", 0))
    if options.limit is not None:
        total = min(total, done + options.limit)
    report.source_started(repo.source, total, done)

    pending: list[CommitRow] = []
    unflushed = 0
    last_sha = after
    flushed_at = time.monotonic()

    def checkpoint_for(results: list[SaveResult]) -> Checkpoint:
        for result in results:
            if result.status == "stored":
                summary.stored += 1
            elif result.status == "duplicate":
                summary.duplicates += 1
            else:
                summary.known += 1
        return Checkpoint(KIND, repo.source, scope, last_sha, _cumulative(base, summary))

    def flush() -> None:
        nonlocal pending, unflushed, flushed_at
        if not unflushed:
            return
        label_rows(pending, labelers)
        save_commit_batch(store, pending, checkpoint_for)
        report.advance(repo.source, unflushed)
        pending, unflushed, flushed_at = [], 0, time.monotonic()

    for outcome in mine_repository(repo.path, repo.source, rev, options, after):
        summary.seen += 1
        unflushed += 1
        last_sha = outcome.sha
        if isinstance(outcome, Mined):
            pending.append(outcome.row)
            for warning in outcome.warnings:
                report.problem(f"{repo.source}@{outcome.sha[:12]}: {warning}")
        elif isinstance(outcome, Rejected):
            summary.filtered[outcome.reason] += 1
            report.problem(f"{repo.source}@{outcome.sha[:12]}: {outcome.message}")
        else:
            summary.filtered[outcome.reason] += 1
        if len(pending) >= batch_rows or time.monotonic() - flushed_at > BATCH_SECONDS:
            flush()
        if options.limit is not None and summary.seen >= options.limit:
            break
    flush()


def _cumulative(base: dict[str, Any], summary: SourceSummary) -> dict[str, Any]:
    """Counters over every run of this source and scope, stored with the checkpoint."""
    filtered = Counter(base.get("filtered", {}))
    filtered.update(summary.filtered)
    return {
        "seen": base.get("seen", 0) + summary.seen,
        "stored": base.get("stored", 0) + summary.stored,
        "duplicates": base.get("duplicates", 0) + summary.duplicates,
        "known": base.get("known", 0) + summary.known,
        "filtered": dict(sorted(filtered.items())),
    }
