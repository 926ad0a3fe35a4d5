"""Which label each exported record carries: settled human labels or a labeler's.

Adjudicated labels come from :func:`annotation.adjudication.decisions_for_set` over
every set of the kind (or the sets asked for). A record carries one label: when the
sets that settle an item agree, that label is released with the votes counting toward
any of them; when they settle it with different labels, :class:`LabelConflictError`
names those items and nothing is released (``--set NAME`` releases one set's labels).
Labels are few (what people voted on), so they are held in memory; the corpus itself is
never loaded whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from annotation.adjudication import decisions_for_set
from annotation.labels import SKIP
from store import Store
from store.items import find_by_id
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
SHOWN_CONFLICTS = 5


class LabelConflictError(ValueError):
    """Items that two sets settle with different labels: a record holds only one."""

    def __init__(self, kind: str, conflicts: list[tuple[str, dict[str, str]]]) -> None:
        self.kind = kind
        self.conflicts = conflicts  # (item key, {set name: label}) in key order
        shown = "; ".join(
            f"{key!r} ({', '.join(f'{name}: {label}' for name, label in by_set.items())})"
            for key, by_set in conflicts[:SHOWN_CONFLICTS]
        )
        more = len(conflicts) - SHOWN_CONFLICTS
        super().__init__(
            f"{len(conflicts)} {kind} item(s) settled with different labels by their sets:"
            f" {shown}{f' and {more} more' if more > 0 else ''}; a record carries one label:"
            " release each set's labels on its own with --set NAME"
        )


def _category(label: str, votes: list[dict[str, Any]]) -> str | None:
    """The category of the adjudication in force (the latest, listed last among the
    adjudications), else the commonest among votes for the final label."""
    deciding = [v for v in votes if v["role"] == ADJUDICATOR]
    if deciding and deciding[-1]["category"]:
        return str(deciding[-1]["category"])
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
    Raises :class:`LabelConflictError` when sets settle an item with different labels.
    """
    by_set: dict[int, dict[str, str]] = {}  # item id -> {set name: settled label}
    set_labels: dict[int, list[list[str]]] = {}  # item id -> labels of its settling sets
    for set_row in all_sets(store):
        if set_row.kind != kind or (set_ids and set_row.id not in set_ids):
            continue
        for decision in decisions_for_set(store, set_row):
            if decision.settled and decision.label is not None:
                by_set.setdefault(decision.item_id, {})[set_row.name] = decision.label
                set_labels.setdefault(decision.item_id, []).append(set_row.labels)
    conflicts = sorted(
        (_key(store, item_id), names)
        for item_id, names in by_set.items()
        if len(set(names.values())) > 1
    )
    if conflicts:
        raise LabelConflictError(kind, conflicts)
    settled = {item_id: next(iter(names.values())) for item_id, names in by_set.items()}
    votes: dict[int, list[dict[str, Any]]] = {}
    for item_id, annotator, role, label, category in live_votes_of_kind(store, kind):
        if item_id in settled and any(counts_toward(label, ls) for ls in set_labels[item_id]):
            votes.setdefault(item_id, []).append(
                {"annotator": annotator, "role": role, "label": label, "category": category}
            )
    result: dict[int, LabelInfo] = {}
    for item_id, label in settled.items():
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


def _key(store: Store, item_id: int) -> str:
    ref = find_by_id(store, item_id)
    return ref.key if ref is not None else f"#{item_id}"


def predicted_label(labeler: str, label: str | None, score: float | None) -> LabelInfo:
    if label is None:
        return UNLABELED
    return LabelInfo(label=label, source="predicted", labeler=labeler, confidence=score)
