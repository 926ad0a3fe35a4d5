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

import logging
import uuid
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.commits.options import MineOptions
from engines.commits.pipeline import (
    BATCH_ROWS,
    KIND,
    SourceSummary,
    cumulative,
    save_rows,
)
from engines.commits.sources import source_name
from engines.commits.task import ChunkResult, ChunkTask, mine_chunk
from engines.labelers.registry import LabelerSpec
from engines.reporting import ClusterReporter, SilentClusterReporter
from store import Store
from store.commits import load_checkpoints
from store.records import Checkpoint

if TYPE_CHECKING:
    from distributed import Client, Future

DEFAULT_CHUNK = 2000  # commits per task: a lost worker costs at most this much work
POLL_S = 0.5


class ClusterError(Exception):
    """The cluster cannot be started or reached; the message says why in one line."""


@contextmanager
def dask_client(
    workers: int | None = None,
    scheduler: str | None = None,
    dashboard_address: str | None = ":8787",
) -> Iterator[Client]:
    """A client of an existing scheduler (``scheduler``; given up on after Dask's
    ``distributed.comm.timeouts.connect``, 30 s unless configured), or of a LocalCluster
    of ``workers`` single-threaded worker processes started for the block and closed after.

    The LocalCluster's dashboard takes ``dashboard_address`` (another port if that one
    is busy; None: no dashboard).
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with warnings.catch_warnings():  # "port 8787 is in use, using another": we print the link
        warnings.simplefilter("ignore", UserWarning)
        cluster = LocalCluster(
            n_workers=workers or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=dashboard_address,
            silence_logs=logging.ERROR,
        )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def dashboard_link(client: Client) -> str | None:
    """The Dask dashboard's address, or None when the scheduler serves none."""
    try:
        link = client.dashboard_link
    except (KeyError, AttributeError, OSError):
        return None
    return str(link) if link else None


@dataclass
class _Source:
    index: int
    spec: str
    summary: SourceSummary
    base: dict[str, Any] = field(default_factory=dict)
    last_key: str | None = None
    slices: int = 0


class _Watch:
    """Notices workers joining and leaving between polls."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.workers: dict[str, int] = dict(client.nthreads())

    @property
    def threads(self) -> int:
        return sum(self.workers.values())

    def poll(self) -> tuple[list[str], bool]:
        """Workers that left since the last poll, and whether the set changed at all."""
        now = dict(self.client.nthreads())
        gone = sorted(set(self.workers) - set(now))
        changed = set(now) != set(self.workers)
        self.workers = now
        return gone, changed


def _suspicious(dask_scheduler: Any, keys: list[str]) -> dict[str, int]:
    """Runs on the scheduler: how many workers died while running each task."""
    found = {}
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        if ts is not None:
            found[key] = int(ts.suspicious)
    return found


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
) -> list[SourceSummary]:
    """Mine every source on the cluster behind ``client``; summaries in ``specs`` order."""
    from distributed import KilledWorker, wait
    from distributed.client import FutureCancelledError

    report = reporter or SilentClusterReporter()
    token = uuid.uuid4().hex[:8]
    sources = [_Source(i, spec, SourceSummary(source_name(spec))) for i, spec in enumerate(specs)]
    waiting = deque(sources)
    running: dict[str, tuple[_Source, Future]] = {}
    watch = _Watch(client)
    report.run_started(len(sources), len(watch.workers), dashboard_link(client))

    def submit(src: _Source, result: ChunkResult | None = None) -> None:
        done = src.summary.seen
        budget = chunk if options.limit is None else min(chunk, options.limit - done)
        task = ChunkTask(
            spec=src.spec,
            options=options,
            budget=budget,
            labelers=tuple(labelers),
            clone_dir=str(clone_dir) if clone_dir else None,
            checkpoints=() if result else tuple(load_checkpoints(store, KIND, src.summary.source)),
            continuation=result.continuation() if result else None,
        )
        key = f"mine-commits-{token}-{src.index}-{src.slices}"
        src.slices += 1
        near = [result.worker] if result is not None and result.worker else None
        future = client.submit(
            mine_chunk, task, key=key, workers=near, allow_other_workers=near is not None
        )
        running[key] = (src, future)

    def finish(src: _Source) -> None:
        report.source_finished(src.summary)
        if waiting:
            submit(waiting.popleft())

    def failed(src: _Source, reason: str, message: str) -> None:
        src.summary.failed, src.summary.reason = message, reason
        finish(src)

    def absorb(src: _Source, result: ChunkResult) -> None:
        summary = src.summary
        if src.slices == 1:
            summary.source, summary.branch = result.source, result.branch
            summary.resumed_after = result.resumed_after
            src.base, src.last_key = result.counters, result.resumed_after
        for text in result.problems:
            report.problem(text)
        if result.failed:
            failed(src, result.reason or "error", result.failed)
            return
        summary.seen += result.seen
        summary.filtered.update(result.filtered)
        src.last_key = result.last_sha or src.last_key
        assert result.scope is not None

        def checkpoint() -> Checkpoint:
            counters = cumulative(
                src.base,
                summary,
                finished=result.finished,
                tip=result.tip,
                position=result.position,
            )
            return Checkpoint(KIND, summary.source, result.scope or "", src.last_key, counters)

        save_rows(store, result.rows, summary, checkpoint, batch_rows)
        report.advance(summary.source, result.seen)
        limited = options.limit is not None and summary.seen >= options.limit
        if result.finished or limited or result.seen == 0:
            finish(src)
        else:
            submit(src, result)

    try:
        while waiting and len(running) < max(2, 2 * watch.threads):
            submit(waiting.popleft())
        while running:
            with suppress(TimeoutError):
                wait([f for _, f in running.values()], POLL_S, "FIRST_COMPLETED")
            ready = [key for key, (_, f) in running.items() if f.done()]
            redone = _redone(client, [k for k in ready if running[k][1].status == "finished"])
            for key in ready:
                src, future = running.pop(key)
                if redone.get(key):
                    src.summary.requeued += redone[key]
                    report.requeued(src.summary.source, redone[key])
                try:
                    result = future.result()
                except KilledWorker:
                    failed(
                        src,
                        "killed-worker",
                        "its task took down one worker after another (out of memory?);"
                        " giving up on this repository",
                    )
                    continue
                except (FutureCancelledError, Exception) as exc:  # a bug, or the cluster went
                    text = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
                    failed(src, "error", f"task failed: {text}")
                    continue
                finally:
                    future.release()
                absorb(src, result)
            gone, changed = watch.poll()
            for address in gone:
                report.worker_lost(address)
            if changed:
                report.workers_changed(len(watch.workers))
            while waiting and len(running) < max(2, 2 * watch.threads):
                submit(waiting.popleft())
    finally:
        if running:
            client.cancel([f for _, f in running.values()])
    return [src.summary for src in sources]


def _redone(client: Client, keys: list[str]) -> dict[str, int]:
    """How many times each finished task was started again after losing its worker."""
    if not keys:
        return {}
    try:
        return dict(client.run_on_scheduler(_suspicious, keys=keys))
    except Exception:  # an old or locked-down scheduler: the counts are only informative
        return {}
