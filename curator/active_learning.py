"""Active learning that keeps learning: every K votes on a set, refit the in-loop model
(TF-IDF + logistic regression, ``engines.labelers.inloop``) on the set's votes so far and
re-rank the next items of the queue, most uncertain first. With ``labeler`` (a retrained
student), its stored predictions give the uncertainty instead of a refit.

Only the window of unvoted items after the annotator's current one is re-ranked (their
positions are permuted among themselves), so a re-rank costs the same on a set of a
million items, and items already voted or on screen never move."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from annotation.labels import POSITIVE_LABEL, SKIP
from annotation.sampling import uncertainty
from annotation.sets import resolve_latest
from engines.labelers.inloop import fit_inloop
from store import Store
from store.reranking import annotator_labels_in_set, reorder, unvoted_after
from store.sets import SetRow, latest_predictions
from store.teaching import commit_texts

EVERY = 20
"""Votes between two re-ranks (``rerank_every`` in a set's params changes it; 0: never)."""
WINDOW = 1_000
"""How many of the next unvoted items a re-rank orders."""
TEXT_FIELD = "model_input"


@dataclass(frozen=True)
class Rerank:
    """What one re-rank did: the model it used, how many votes it learned from, how
    many items it scored and moved, and how long it took."""

    model: str
    trained_on: int
    scored: int
    moved: int
    seconds: float


def reranks(set_row: SetRow) -> int:
    """Votes between re-ranks for this set: its ``rerank_every`` parameter, else
    :data:`EVERY` for a set drawn by uncertainty (``--prefer uncertain``), else 0."""
    if "rerank_every" in set_row.params:
        return int(set_row.params["rerank_every"] or 0)
    draw = set_row.params.get("draw") or {}
    return EVERY if draw.get("prefer") == "uncertain" and set_row.kind == "commit" else 0


def training_labels(store: Store, set_row: SetRow) -> dict[int, str]:
    """Item -> the label most of its annotators gave (skips aside, ties left out)."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for item_id, label in annotator_labels_in_set(store, set_row.id):
        if label != SKIP:
            votes[item_id][label] += 1
    found = {}
    for item_id, counts in votes.items():
        ranked = counts.most_common(2)
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            found[item_id] = ranked[0][0]
    return found


def rerank_queue(
    store: Store,
    set_row: SetRow,
    after_position: int,
    window: int = WINDOW,
    labeler: str | None = None,
) -> Rerank | None:
    """Re-rank the next ``window`` unvoted items after ``after_position``; None when there
    is nothing to learn from yet (no votes of two labels) or nothing to order."""
    started = time.perf_counter()
    tail = unvoted_after(store, set_row.id, after_position, window)
    if len(tail) < 2 or set_row.kind != "commit":
        return None
    ids = [item_id for _, item_id in tail]
    if labeler is not None:
        name = resolve_latest(store, labeler)
        scores = latest_predictions(store, name)
        unsure = {i: uncertainty(scores[i][1], True) if i in scores else 0.0 for i in ids}
        model, trained_on = name, 0
    else:
        labels = training_labels(store, set_row)
        texts = commit_texts(store, list(labels), TEXT_FIELD)
        known = [i for i in labels if texts.get(i)]
        fitted = fit_inloop(
            [texts[i] for i in known], [labels[i] for i in known], POSITIVE_LABEL[set_row.kind]
        )
        if fitted is None:
            return None
        pool = commit_texts(store, ids, TEXT_FIELD)
        scored = fitted.uncertainty([pool.get(i, "") for i in ids])
        unsure = dict(zip(ids, scored, strict=True))
        model, trained_on = "tfidf-lr (in-loop)", fitted.trained_on
    order = sorted(ids, key=lambda i: -unsure[i])  # stable: ties keep the queue order
    moved = reorder(store, set_row.id, order)
    return Rerank(model, trained_on, len(ids), moved, time.perf_counter() - started)
