"""``curator predict --workers N | --scheduler ADDRESS``: one labeler run on Dask workers.

The driver reads each chunk's texts from the store and sends them, with the labeler's
:class:`~engines.labelers.registry.LabelerSpec`, to a worker. Each worker process builds
the labeler once (a student loads its model once, then serves every chunk it is sent)
and returns the chunk's predictions; the driver, the store's only writer, writes each
chunk in one transaction as it comes back. About two chunks per worker thread are in
flight: no worker waits for work, and results do not pile up ahead of the writer.

A worker lost mid-chunk costs that chunk only: nothing of it was written, and the
scheduler runs it again on another worker (a LocalCluster's nanny also starts a
replacement worker). A chunk that keeps killing workers is reported and skipped; its
items stay unlabeled, and a rerun labels exactly what is missing. A labeler that fails
on a worker (a damaged model file, say) fails its chunk with one line, sent back as the
chunk's result: the worker logs no traceback.
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engines.dask_cluster import WorkerWatch, drive, error_line, scheduler_lost
from engines.labelers.base import Labeler, Prediction, run_labeler
from engines.labelers.registry import LabelerSpec, build_labeler
from store import Store
from store.teaching import commit_texts

if TYPE_CHECKING:
    from distributed import Client, Future

Written = Callable[[list[tuple[int, Prediction]]], None]


@dataclass(frozen=True)
class LabelTask:
    """One chunk for a worker: the texts of each field the labeler reads, in item order."""

    spec: LabelerSpec
    texts: dict[str, list[str]]
    input_field: str | None = None
    """Overrides the text a single-field labeler reads (``curator predict --input``)."""


_BUILT: dict[tuple[LabelerSpec, str | None], Labeler] = {}
"""The labelers this worker process has built, kept for the chunks that follow."""


@dataclass(frozen=True)
class ChunkFailed:
    """A worker's answer for a chunk its labeler could not label: why, in one line."""

    reason: str


def label_chunk(task: LabelTask) -> list[Prediction] | ChunkFailed:
    """Runs on a worker: the chunk's predictions, in the order of its texts, or why
    there are none."""
    try:
        key = (task.spec, task.input_field)
        labeler = _BUILT.get(key)
        if labeler is None:
            labeler = build_labeler(task.spec)
            if task.input_field is not None:
                labeler.input_field = task.input_field
            _BUILT[key] = labeler
        return run_labeler(labeler, lambda f: task.texts[f])
    except Exception as exc:  # the driver reports it, one line per chunk
        return ChunkFailed(failure_line(exc))


def failure_line(exc: BaseException) -> str:
    """One line for a labeler's failure: our own errors (ValueError, OSError) by their
    message, which names the model or file; anything else by its type too."""
    text = " ".join(str(exc).split())
    if isinstance(exc, ValueError | OSError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class ClusterPredictOutcome:
    """What the cluster did beside labeling: chunks run again after their worker was
    lost, workers lost, chunks given up on (one line each) and the items they held."""

    requeued: int = 0
    lost_workers: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    failed_items: int = 0


def predict_on_cluster(
    store: Store,
    spec: LabelerSpec,
    fields: Sequence[str],
    todo: Sequence[int],
    client: Client,
    written: Written,
    chunk: int,
    input_field: str | None = None,
    on_lost: Callable[[str], None] = lambda address: None,
    on_skipped: Callable[[int], None] = lambda n: None,
) -> ClusterPredictOutcome:
    """Label ``todo`` on the cluster behind ``client``, ``chunk`` items per task, reading
    the commit texts of ``fields``. ``written`` stores one chunk's predictions (called on
    this thread, one chunk at a time); ``on_lost`` hears of each worker that leaves,
    ``on_skipped`` how many items of a chunk have no commit text (nothing to label)."""
    waiting = deque(list(todo[start : start + chunk]) for start in range(0, len(todo), chunk))
    run = _Run(store, spec, tuple(fields), client, written, input_field, on_lost, on_skipped)
    return run.drain(waiting)


class _Run:
    def __init__(
        self,
        store: Store,
        spec: LabelerSpec,
        fields: tuple[str, ...],
        client: Client,
        written: Written,
        input_field: str | None,
        on_lost: Callable[[str], None],
        on_skipped: Callable[[int], None],
    ) -> None:
        self.store, self.spec, self.fields, self.client = store, spec, fields, client
        self.written, self.input_field, self.on_lost = written, input_field, on_lost
        self.on_skipped = on_skipped
        self.token = uuid.uuid4().hex[:8]  # keys stay unique on a long-lived scheduler
        self.running: dict[str, tuple[list[int], Future]] = {}
        self.watch = WorkerWatch(client)
        self.outcome = ClusterPredictOutcome()
        self.submitted = 0

    def drain(self, waiting: deque[list[int]]) -> ClusterPredictOutcome:
        drive(self.client, self.running, lambda: self._turn(waiting))
        return self.outcome

    def _turn(self, waiting: deque[list[int]]) -> None:
        self._collect()
        gone, _ = self.watch.poll()
        for address in gone:
            self.outcome.lost_workers.append(address)
            self.on_lost(address)
        self._fill(waiting)

    def _fill(self, waiting: deque[list[int]]) -> None:
        while waiting and len(self.running) < max(2, 2 * self.watch.threads):
            ids = waiting.popleft()
            texts = {f: commit_texts(self.store, ids, f) for f in self.fields}
            present = [i for i in ids if all(i in found for found in texts.values())]
            if len(present) < len(ids):
                self.on_skipped(len(ids) - len(present))
            if not present:
                continue
            task = LabelTask(
                self.spec,
                {f: [texts[f][i] for i in present] for f in self.fields},
                self.input_field,
            )
            key = f"predict-{self.spec.name}-{self.token}-{self.submitted}"
            self.submitted += 1
            self.running[key] = (present, self.client.submit(label_chunk, task, key=key))

    def _collect(self) -> None:
        from distributed import KilledWorker

        ready = [key for key, (_, f) in self.running.items() if f.done()]
        redone = self.watch.redone([k for k in ready if self.running[k][1].status == "finished"])
        for key in ready:
            ids, future = self.running.pop(key)
            self.outcome.requeued += redone.get(key, 0)
            where = f"items {ids[0]}..{ids[-1]}"
            try:
                predictions = future.result()
            except KilledWorker:
                self._failed(
                    ids,
                    f"{where}: the chunk took down one worker after another (out of memory?);"
                    " skipped, a rerun labels it",
                )
                continue
            except Exception as exc:  # the task failed outside the labeler: one line, go on
                if lost := scheduler_lost(self.client):
                    raise lost from exc
                self._failed(ids, f"{where}: {error_line(exc)}")
                continue
            finally:
                future.release()
            if isinstance(predictions, ChunkFailed):
                self._failed(ids, f"{where}: {predictions.reason}")
                continue
            self.written(list(zip(ids, predictions, strict=True)))

    def _failed(self, ids: list[int], line: str) -> None:
        self.outcome.failed.append(line)
        self.outcome.failed_items += len(ids)
