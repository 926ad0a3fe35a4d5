"""Run any batch labeler (``heuristics@1``, ``keyword@1``...) over stored commits and keep
its predictions: items it already labeled are skipped, each batch is one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engines.labelers.base import Labeler, Prediction, input_fields, run_labeler
from store import Store
from store.predictions import add_predictions, predicted_item_ids
from store.records import PredictionRow
from store.teaching import commit_texts

BATCH = 500


@dataclass(frozen=True)
class StoredRun:
    labeler: str
    stored: int
    already: int
    not_commits: int


def label_and_store(
    store: Store, labeler: Labeler, item_ids: Sequence[int], batch: int = BATCH
) -> StoredRun:
    """Predict with ``labeler`` on the items of ``item_ids`` it has not labeled yet."""
    unique = list(dict.fromkeys(item_ids))
    done = predicted_item_ids(store, labeler.name, unique)
    todo = [i for i in unique if i not in done]
    stored = 0
    missing = 0
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        found = predict_stored(store, labeler, chunk)
        missing += len(chunk) - len(found)
        stored += add_predictions(
            store,
            [(i, PredictionRow(labeler.name, p.label, p.score, p.details)) for i, p in found],
        )
    return StoredRun(labeler.name, stored, len(done), missing)


def predict_stored(
    store: Store, labeler: Labeler, item_ids: Sequence[int]
) -> list[tuple[int, Prediction]]:
    """``labeler``'s predictions on the stored commits among ``item_ids`` (in that order),
    each fed every text field the labeler reads; other items are left out."""
    texts = {f: commit_texts(store, item_ids, f) for f in input_fields(labeler)}
    present = [i for i in item_ids if all(i in found for found in texts.values())]
    if not present:
        return []
    predictions = run_labeler(labeler, lambda f: [texts[f][i] for i in present])
    return list(zip(present, predictions, strict=True))
