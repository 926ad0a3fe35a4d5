"""Which label each exported record carries: settled human labels or a labeler's.

Adjudicated labels come from :func:`annotation.adjudication.decisions_for_set` over
every set of the kind (sets in name order; the first set that settles an item gives
its label, and the votes kept with it are those counting toward that set). They are
few (what people voted on), so they are held in memory; the corpus itself is never
loaded whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from annotation.adjudication import decisions_for_set
from annotation.labels import SKIP
from store import Store
from store.releases import live_votes_of_kind
from store.sets import all_sets
from store.votes import ADJUDICATOR, counts_toward


@dataclass(frozen=True)
class LabelInfo:
    label: str | None = None
    source: str | None = None
    labeler: str | None = None
    confidence: float | None = None
    category: str | None = None
    votes: list[dict[str, Any]] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "label_source": self.source,
            "labeler": self.labeler,
            "confidence": self.confidence,
            "category": self.category,
            "votes": self.votes,
        }


UNLABELED = LabelInfo()


def _category(label: str, votes: list[dict[str, Any]]) -> str | None:
    """The adjudicator's category, else the commonest among votes for the final label."""
    for vote in votes:
        if vote["role"] == ADJUDICATOR and vote["category"]:
            return str(vote["category"])
    found = Counter(v["category"] for v in votes if v["label"] == label and v["category"])
    if not found:
        return None
    return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def adjudicated_labels(
    store: Store, kind: str, set_ids: Collection[int] = ()
) -> dict[int, LabelInfo]:
    """Item id -> settled label, with the live votes (annotator ids kept) that settled it;
    with ``set_ids``, the labels those sets settled (else every set of the kind's).

    ``confidence`` is the share of annotators' non-skip votes that chose the label.
    """
    settled: dict[int, tuple[str, list[str]]] = {}
    for set_row in all_sets(store):
        if set_row.kind != kind or (set_ids and set_row.id not in set_ids):
            continue
        for decision in decisions_for_set(store, set_row):
            if decision.settled and decision.label is not None:
                settled.setdefault(decision.item_id, (decision.label, set_row.labels))
    votes: dict[int, list[dict[str, Any]]] = {}
    for item_id, annotator, role, label, category in live_votes_of_kind(store, kind):
        if item_id in settled and counts_toward(label, settled[item_id][1]):
            votes.setdefault(item_id, []).append(
                {"annotator": annotator, "role": role, "label": label, "category": category}
            )
    result: dict[int, LabelInfo] = {}
    for item_id, (label, _) in settled.items():
        item_votes = votes.get(item_id, [])
        counted = [v for v in item_votes if v["role"] != ADJUDICATOR and v["label"] != SKIP]
        agreeing = sum(1 for v in counted if v["label"] == label)
        result[item_id] = LabelInfo(
            label=label,
            source="adjudicated",
            confidence=round(agreeing / len(counted), 6) if counted else None,
            category=_category(label, item_votes),
            votes=item_votes,
        )
    return result


def predicted_label(labeler: str, label: str | None, score: float | None) -> LabelInfo:
    if label is None:
        return UNLABELED
    return LabelInfo(label=label, source="predicted", labeler=labeler, confidence=score)
