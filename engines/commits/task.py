"""The unit of work a Dask worker runs: mine one slice of one repository's history.

A task resolves its source (cloning or fetching into the worker's cache), walks up to
``budget`` commits of the branch through the same start step, miner and labelers the
in-process driver uses, and returns the kept rows with its counters. It never opens
the store: the driver alone writes. The first task of a repository in a run starts
from the repository's checkpoint; each later one continues a window of history pinned
to the tip the first one saw, so a long history costs no re-walk per slice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.commits.gitlog import BranchNotFound, CommitWindow, GitError, list_commits, tip_of
from engines.commits.labeling import label_rows, labelers_for
from engines.commits.options import MineOptions
from engines.commits.sources import LocalRepo, SourceError, resolve_source
from engines.commits.start import start_source
from engines.labelers.registry import LabelerError, LabelerSpec
from store.records import Checkpoint, CommitRow


@dataclass(frozen=True)
class Continuation:
    """Where the previous slice of this run stopped: the next commit's position in the
    history of ``tip`` (``total`` non-merge commits), on ``branch``."""

    branch: str
    tip: str
    start: int
    total: int


@dataclass(frozen=True)
class ChunkTask:
    spec: str
    options: MineOptions
    budget: int
    labelers: tuple[LabelerSpec, ...] = ()
    clone_dir: str | None = None
    checkpoints: Mapping[str, Checkpoint] = field(default_factory=dict)  # by scope; 1st slice
    continuation: Continuation | None = None  # set for every later slice


@dataclass
class ChunkResult:
    """What one slice found. ``rows`` are in commit order, labeled, not yet deduplicated
    against the store; ``counters`` are the checkpoint's counters the first slice
    resumed from (empty when it started over)."""

    spec: str
    source: str
    branch: str | None = None
    scope: str | None = None
    tip: str | None = None
    total: int = 0
    start: int = 0
    seen: int = 0
    last_sha: str | None = None
    resumed_after: str | None = None
    counters: dict[str, Any] = field(default_factory=dict)
    rows: list[CommitRow] = field(default_factory=list)
    filtered: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    failed: str | None = None
    reason: str | None = None
    worker: str | None = None
    shallow: tuple[str, ...] = ()  # the clone's shallow edge, seen by the first slice

    @property
    def position(self) -> int:
        return self.start + self.seen

    @property
    def finished(self) -> bool:
        """The walk reached the end of the branch (as of the tip this run started from)."""
        return self.failed is None and self.position >= self.total

    def continuation(self) -> Continuation:
        assert self.branch is not None and self.tip is not None
        return Continuation(self.branch, self.tip, self.position, self.total)


def mine_chunk(task: ChunkTask) -> ChunkResult:
    """Mine the next ``task.budget`` commits of one source; failures come back in the
    result (``failed`` and ``reason``), never as an exception."""
    # Imported here: PyDriller loads on the worker that mines, not where tasks are built.
    from engines.commits.miner import file_outcome, mine_repository

    result = ChunkResult(task.spec, task.spec, worker=_worker_address())
    clone_dir = Path(task.clone_dir) if task.clone_dir else None
    try:
        try:
            labelers = labelers_for(task.labelers)
        except OSError as exc:
            raise LabelerError(str(exc)) from exc
        if task.continuation is None:
            repo, rev, window = _first_window(task, clone_dir, result)
        else:
            repo, rev, window = _next_window(task, clone_dir, result)
        result.source = repo.source
        for outcome in mine_repository(repo.path, repo.source, rev, task.options, window=window):
            result.seen += 1
            result.last_sha = outcome.sha
            file_outcome(outcome, repo.source, result.rows, result.filtered, result.problems.append)
        label_rows(result.rows, labelers)
    except SourceError as exc:
        result.failed, result.reason = str(exc), exc.reason
    except GitError as exc:
        result.failed, result.reason = str(exc), exc.reason
        if isinstance(exc, BranchNotFound):
            result.branch = exc.branch  # the summary names the branch it lacks
    except LabelerError as exc:
        result.failed, result.reason = f"cannot load a labeler: {exc}", "labeler"
    except OSError as exc:  # the clone cache or the disk, as the worker sees it
        result.failed, result.reason = f"{type(exc).__name__}: {exc}", "io"
    return result


def _first_window(
    task: ChunkTask, clone_dir: Path | None, result: ChunkResult
) -> tuple[LocalRepo, str, CommitWindow]:
    options = task.options
    start = start_source(task.spec, options, task.checkpoints, clone_dir)
    result.problems += start.warnings
    result.branch, result.scope = start.branch, start.scope
    result.counters, result.resumed_after = start.counters, start.after
    result.shallow = start.shallow
    tip = start.tip or tip_of(start.repo.path, start.branch)
    shas = list_commits(start.repo.path, tip, options.since, options.until)
    begin = 0
    if start.after is not None:
        if start.examined is not None:
            # the branch moved: from the first commit the earlier walk did not examine
            # (a merged branch's commits are listed before the checkpoint); the examined
            # ones after it are examined again, and recognised as stored
            begin = next((k for k, sha in enumerate(shas) if sha not in start.examined), len(shas))
        elif start.after in shas:
            begin = shas.index(start.after) + 1
        else:  # on the branch but outside --since/--until: nothing to go by
            result.problems.append(
                f"{start.repo.source}: checkpoint {start.after[:12]} is outside the walked"
                " range; walking it all again, stored commits are skipped"
            )
            result.counters, result.resumed_after = {}, None
    return start.repo, start.branch, _window(tip, begin, len(shas), task.budget, result)


def _next_window(
    task: ChunkTask, clone_dir: Path | None, result: ChunkResult
) -> tuple[LocalRepo, str, CommitWindow]:
    cont = task.continuation
    assert cont is not None
    repo = resolve_source(task.spec, clone_dir, fetch=False)
    try:
        tip_of(repo.path, cont.tip)
    except GitError:
        raise SourceError(
            f"commit {cont.tip[:12]} this run started from is not in the clone", "git"
        ) from None
    result.branch, result.scope = cont.branch, task.options.scope(cont.branch)
    return repo, cont.branch, _window(cont.tip, cont.start, cont.total, task.budget, result)


def _window(tip: str, start: int, total: int, budget: int, result: ChunkResult) -> CommitWindow:
    result.tip, result.start, result.total = tip, start, total
    return CommitWindow(tip, start, max(0, min(budget, total - start)), total)


def _worker_address() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None
