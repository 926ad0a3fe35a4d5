"""``curator predict`` as a function: label the commits not yet labeled by one labeler,
in chunks written per transaction (an interrupt loses at most one chunk; a rerun
resumes). The command parses and prints; tests call :func:`predict_items` directly."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from annotation.sets import resolve_latest
from engines.labelers.base import Labeler, Prediction
from engines.labelers.inputs import input_mismatch, recorded_input
from engines.labelers.registry import check_labeler
from engines.labelers.storing import predict_stored
from store import Store
from store.models import get_model
from store.predictions import (
    add_predictions,
    forced_inputs,
    has_predictions,
    predicted_item_ids,
)
from store.records import PredictionRow
from store.teaching import commit_diff_counts

if TYPE_CHECKING:
    from distributed import Client

    from engines.labelers.on_cluster import ClusterPredictOutcome
    from engines.labelers.registry import LabelerSpec

CHUNK = 2048
"""Items read, labeled and written per transaction: an interrupt loses at most one chunk
(a kill cannot half-write one: SQLite rolls an unfinished transaction back). Large
enough that the student's pipeline stays busy across the chunk and the store's share
stays small (over 100,000 predictions written a second, ``bench_predict_store.py``)."""


@dataclass
class PredictSummary:
    labeler: str
    items: int
    already_predicted: int
    labels: Counter[str] = field(default_factory=Counter)
    cluster: ClusterPredictOutcome | None = None
    """Set when the run used Dask workers."""

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "labeler": self.labeler,
            "items": self.items,
            "already_predicted": self.already_predicted,
            "predicted": sum(self.labels.values()),
            "labels": dict(sorted(self.labels.items())),
        }
        if self.cluster is not None:
            data["requeued_chunks"] = self.cluster.requeued
            data["lost_workers"] = self.cluster.lost_workers
            data["failed_chunks"] = self.cluster.failed
            data["failed_items"] = self.cluster.failed_items
        return data

    def not_labeled(self) -> str | None:
        """One line when chunks failed on the workers (their items stay unlabeled; a
        rerun labels them), else None."""
        if self.cluster is None or not self.cluster.failed:
            return None
        chunks = len(self.cluster.failed)
        failed = f"{chunks} chunk{'s' if chunks != 1 else ''} failed"
        if not self.labels:
            return f"{self.labeler}: no item was labeled ({failed}: see the warnings above)"
        return (
            f"{self.labeler}: {self.cluster.failed_items:,} items were not labeled ({failed}:"
            " see the warnings above); the same command again labels only those"
        )


def items_to_predict(
    store: Store, labeler: Labeler | str, ids: Sequence[int], limit: int | None = None
) -> tuple[list[int], int]:
    """The items ``labeler`` (or the labeler of that name) has not labeled yet (at most
    ``limit``), and how many it had: one indexed query over ``ids`` alone, whatever the
    store holds beside them."""
    name = labeler if isinstance(labeler, str) else labeler.name
    done = predicted_item_ids(store, name, ids)
    todo = [i for i in ids if i not in done]
    return (todo[:limit] if limit is not None else todo), len(done)


def predict_items(
    store: Store,
    labeler: Labeler,
    todo: Sequence[int],
    summary: PredictSummary,
    advance: Callable[[int], None] = lambda n: None,
    forced: str | None = None,
) -> PredictSummary:
    """Label ``todo`` chunk by chunk and store each chunk's predictions; counts the labels
    into ``summary`` and calls ``advance`` with each chunk's size. ``forced``: the text
    field the labeler was made to read instead of the one it learned from, recorded in
    each prediction's details under ``forced_input`` (see :func:`forced_input`)."""
    for start in range(0, len(todo), CHUNK):
        chunk = list(todo[start : start + CHUNK])
        found = predict_stored(store, labeler, chunk)
        _write(store, labeler.name, found, summary, forced)
        advance(len(chunk))
    return summary


def predict_items_on_cluster(
    store: Store,
    spec: LabelerSpec,
    fields: Sequence[str],
    todo: Sequence[int],
    summary: PredictSummary,
    client: Client,
    advance: Callable[[int], None] = lambda n: None,
    input_field: str | None = None,
    on_lost: Callable[[str], None] = lambda address: None,
    chunk: int = CHUNK,
    forced: str | None = None,
) -> PredictSummary:
    """:func:`predict_items` with the labeling done on Dask workers (see
    :mod:`engines.labelers.on_cluster`), ``chunk`` items per task; this process writes
    every chunk."""
    from engines.labelers.on_cluster import predict_on_cluster

    def written(found: list[tuple[int, Prediction]]) -> None:
        _write(store, spec.name, found, summary, forced)
        advance(len(found))

    summary.cluster = predict_on_cluster(
        store, spec, fields, todo, client, written, chunk, input_field, on_lost, advance
    )
    return summary


def _write(
    store: Store,
    name: str,
    found: Sequence[tuple[int, Prediction]],
    summary: PredictSummary,
    forced: str | None = None,
) -> None:
    """One chunk's predictions in one transaction, counted into ``summary``."""
    extra = {FORCED_KEY: forced} if forced else {}
    add_predictions(
        store,
        [(i, PredictionRow(name, v.label, v.score, {**v.details, **extra})) for i, v in found],
    )
    summary.labels.update(v.label for _, v in found)


FORCED_KEY = "forced_input"
"""The key in a prediction's details naming the text a model was made to read with
``curator predict --input`` when it learned from another."""


def forced_input(store: Store, name: str, text: str | None) -> str | None:
    """The field to record in ``name``'s predictions when ``curator predict --input
    text`` makes the registered model read another text than the one it learned from;
    None when it reads its own (or ``name`` is a rule labeler)."""
    row = get_model(store, name)
    if row is None or text is None:
        return None
    return text if text != recorded_input(row.params)["field"] else None


def forced_warning(store: Store, name: str, item_ids: Sequence[int], where: str) -> str | None:
    """One line when some of ``name``'s stored predictions on ``item_ids`` were made
    with ``curator predict --input`` reading another text than the model learned from:
    its scores on ``where`` then measure that reading, not the model as trained."""
    found = forced_inputs(store, name, item_ids)
    if not found:
        return None
    parts = " and ".join(
        f"{n:,} with --input {field} ({_READS.get(field, field)})"
        for field, n in sorted(found.items())
    )
    return (
        f"{name}: of its predictions on {where}, {parts} were made by `curator predict`"
        " reading another text than the model learned from: its scores there measure that"
        " reading, not the model as trained"
    )


_READS = {"message": "messages only", "model_input": "message || diff"}


def input_warning(
    store: Store, name: str, item_ids: Sequence[int], field: str | None = None
) -> str | None:
    """One line when the registered model ``name`` is given texts unlike those it
    learned from (see :func:`engines.labelers.inputs.input_mismatch`): ``field`` is the
    text it reads here (default: the one it learned from); None for rule labelers and
    when the inputs agree. ``curator predict`` and ``curator eval`` print it."""
    row = get_model(store, name)
    if row is None or not item_ids:
        return None
    record = recorded_input(row.params)
    n_items, n_without = commit_diff_counts(store, item_ids)
    return input_mismatch(name, record, field or record["field"], n_items, n_without)


def stored_labeler(store: Store, name: str) -> str:
    """The labeler whose stored predictions ``curator eval`` and ``curator export --labels
    predicted`` read, ``@latest`` and ``@current`` resolved. A name that holds no
    predictions must be one :func:`~engines.labelers.registry.resolve_labeler` knows (as
    ``curator predict`` checks it), else a ``LabelerError`` names what is registered
    (``SetError`` when ``@latest`` or ``@current`` names nothing)."""
    resolved = resolve_latest(store, name)
    if not has_predictions(store, resolved):
        check_labeler(store, resolved)
    return resolved
