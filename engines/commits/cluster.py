"""``curator mine commits --workers N | --scheduler ADDRESS``: mining on Dask distributed.

The per-repository work (clone or fetch into a cache, walk, filter, pre-label) runs as
tasks on Dask workers (:func:`engines.commits.task.mine_chunk`), one slice of up to
``chunk`` commits of one repository at a time. The driver keeps a bounded number of
tasks in flight and is the only writer of the store: each returned slice is
deduplicated against everything stored (so dedup holds across workers) and written in
batches, the repository's checkpoint moving with the last one; then the repository's
next slice is submitted, preferably to the worker that holds its clone.

A worker lost mid-slice costs only that slice: nothing of it was written, and the
scheduler runs it again on another worker. A slice that keeps killing workers is
reported as failed (``killed-worker``) and the run goes on. A run stopped at any point
restarts from the checkpoints, and repositories a run finished are not revisited
unless asked (see :func:`engines.commits.pipeline.finished_sources`).
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.commits.options import MineOptions
from engines.commits.pipeline import (
    BATCH_ROWS,
    KIND,
    Checkpoints,
    SourceSummary,
    cumulative,
    save_rows,
    source_checkpoints,
    walk_state,
)
from engines.commits.sources import source_name
from engines.commits.task import ChunkResult, ChunkTask, mine_chunk
from engines.dask_cluster import WorkerWatch, dashboard_link, drive, error_line, scheduler_lost
from engines.labelers.registry import LabelerSpec
from engines.reporting import ClusterReporter, SilentClusterReporter
from store import Store
from store.records import Checkpoint

if TYPE_CHECKING:
    from distributed import Client, Future

DEFAULT_CHUNK = 2000  # commits per task: a lost worker costs at most this much work


@dataclass
class _Source:
    index: int
    spec: str
    summary: SourceSummary
    base: dict[str, Any] = field(default_factory=dict)
    last_key: str | None = None
    slices: int = 0
    shallow: tuple[str, ...] = ()


def mine_on_cluster(
    store: Store,
    specs: Sequence[str],
    options: MineOptions,
    client: Client,
    labelers: Sequence[LabelerSpec] = (),
    reporter: ClusterReporter | None = None,
    clone_dir: Path | None = None,
    chunk: int = DEFAULT_CHUNK,
    batch_rows: int = BATCH_ROWS,
    checkpoints: Checkpoints | None = None,
    into: list[SourceSummary] | None = None,
) -> list[SourceSummary]:
    """Mine every source on the cluster behind ``client``; summaries in ``specs`` order.
    ``checkpoints``: the store's, when the caller read them to choose the sources.
    ``into``: a list the summaries are added to as the run starts, so that a caller
    interrupted (Ctrl-C) still holds what was saved so far."""
    report = reporter or SilentClusterReporter()
    run = _ClusterRun(store, options, client, tuple(labelers), report, clone_dir, chunk, batch_rows)
    return run.mine(specs, checkpoints, into)


class _ClusterRun:
    """One run of the driver: what waits, what runs where, and what came back."""

    def __init__(
        self,
        store: Store,
        options: MineOptions,
        client: Client,
        labelers: tuple[LabelerSpec, ...],
        report: ClusterReporter,
        clone_dir: Path | None,
        chunk: int,
        batch_rows: int,
    ) -> None:
        self.store, self.options, self.client = store, options, client
        self.labelers, self.report = labelers, report
        self.clone_dir = str(clone_dir) if clone_dir else None
        self.chunk, self.batch_rows = chunk, batch_rows
        self.token = uuid.uuid4().hex[:8]  # keys stay unique on a long-lived scheduler
        self.waiting: deque[_Source] = deque()
        self.running: dict[str, tuple[_Source, Future]] = {}
        self.watch = WorkerWatch(client)
        self.checkpoints: Checkpoints | None = None  # None: each source's read as it starts

    def mine(
        self,
        specs: Sequence[str],
        checkpoints: Checkpoints | None = None,
        into: list[SourceSummary] | None = None,
    ) -> list[SourceSummary]:
        self.checkpoints = checkpoints
        sources = [_Source(i, s, SourceSummary(source_name(s))) for i, s in enumerate(specs)]
        if into is not None:
            into.extend(src.summary for src in sources)
        self.waiting.extend(sources)
        self.report.run_started(len(sources), len(self.watch.workers), dashboard_link(self.client))
        if not self.watch.workers:
            self.report.problem(
                "the Dask scheduler has no workers: the run waits until one joins"
                " (start `dask worker SCHEDULER-ADDRESS` on a machine with Curator)"
            )
        drive(self.client, self.running, self._turn)
        return [src.summary for src in sources]

    def _turn(self) -> None:
        self._collect()
        gone, changed = self.watch.poll()
        for address in gone:
            self.report.worker_lost(address)
        if changed:
            self.report.workers_changed(len(self.watch.workers))
        self._fill()

    def _fill(self) -> None:
        """Keep about two slices per worker thread in flight: enough to never starve a
        worker, few enough that results do not pile up waiting for the one writer."""
        while self.waiting and len(self.running) < max(2, 2 * self.watch.threads):
            self._submit(self.waiting.popleft())

    def _submit(self, src: _Source, after: ChunkResult | None = None) -> None:
        limit, done = self.options.limit, src.summary.seen
        task = ChunkTask(
            spec=src.spec,
            options=self.options,
            budget=self.chunk if limit is None else min(self.chunk, limit - done),
            labelers=self.labelers,
            clone_dir=self.clone_dir,
            checkpoints={} if after else self._checkpoints(src.summary.source),
            continuation=after.continuation() if after else None,
        )
        key = f"mine-commits-{self.token}-{src.index}-{src.slices}"
        src.slices += 1
        near = [after.worker] if after is not None and after.worker else None
        future = self.client.submit(
            mine_chunk, task, key=key, workers=near, allow_other_workers=near is not None
        )
        self.running[key] = (src, future)

    def _checkpoints(self, source: str) -> dict[str, Checkpoint]:
        if self.checkpoints is None:
            return source_checkpoints(self.store, source)
        return dict(self.checkpoints.get(source, {}))

    def _collect(self) -> None:
        """Take in every finished slice (or failed task) since the last look."""
        from distributed import KilledWorker
        from distributed.client import FutureCancelledError

        ready = [key for key, (_, f) in self.running.items() if f.done()]
        redone = self.watch.redone([k for k in ready if self.running[k][1].status == "finished"])
        for key in ready:
            src, future = self.running.pop(key)
            if redone.get(key):
                src.summary.requeued += redone[key]
                self.report.requeued(src.summary.source, redone[key])
            try:
                result = future.result()
            except KilledWorker:
                self._fail(
                    src,
                    "killed-worker",
                    "its task took down one worker after another (out of memory?);"
                    " giving up on this repository",
                )
                continue
            except (FutureCancelledError, Exception) as exc:  # a bug, or the cluster went
                if lost := scheduler_lost(self.client):
                    raise lost from exc
                self._fail(src, "error", f"task failed: {error_line(exc)}")
                continue
            finally:
                future.release()
            self._absorb(src, result)

    def _absorb(self, src: _Source, result: ChunkResult) -> None:
        """Write a returned slice with its checkpoint, then submit the next one."""
        summary = src.summary
        if src.slices == 1:
            summary.source, summary.branch = result.source, result.branch
            summary.resumed_after = result.resumed_after
            src.base, src.last_key = result.counters, result.resumed_after
            src.shallow = result.shallow
        for text in result.problems:
            self.report.problem(text)
        if result.failed:
            self._fail(src, result.reason or "error", result.failed)
            return
        summary.seen += result.seen
        summary.filtered.update(result.filtered)
        summary.undated += sum(1 for row in result.rows if row.author_date is None)
        src.last_key = result.last_sha or src.last_key

        def checkpoint() -> Checkpoint:
            at = walk_state(
                result.tip, src.shallow, finished=result.finished, position=result.position
            )
            counters = cumulative(src.base, summary, **at)
            return Checkpoint(KIND, summary.source, result.scope or "", src.last_key, counters)

        save_rows(self.store, result.rows, summary, checkpoint, self.batch_rows)
        self.report.advance(summary.source, result.seen)
        limited = self.options.limit is not None and summary.seen >= self.options.limit
        if result.finished or limited or result.seen == 0:
            self._finish(src)
        else:
            self._submit(src, result)

    def _fail(self, src: _Source, reason: str, message: str) -> None:
        src.summary.failed, src.summary.reason = message, reason
        self._finish(src)

    def _finish(self, src: _Source) -> None:
        self.report.source_finished(src.summary)
        self._fill()
