"""Gathering what a trained labeler learns from: teacher predictions above a confidence
threshold, final labels of human-voted sets, and the held-out sets they must not leak
into (repository-disjointness)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from annotation.adjudication import decisions_for_set, final_labels, summary
from annotation.labels import DEFAULT_LABELS, POSITIVE_LABEL
from store import Store
from store.labeling_inputs import commit_item_ids, item_sources
from store.sets import SetRow, latest_predictions

KIND = "commit"
POSITIVE = POSITIVE_LABEL[KIND]
BINARY = tuple(DEFAULT_LABELS[KIND])


@dataclass(frozen=True)
class LabeledItem:
    """An item with a label to learn: ``p_positive`` is 1/0 for hard labels, the teacher's
    belief in ``perf`` for soft ones; ``origin`` is ``teacher``, ``human`` or ``weak`` (a
    labeler's prediction on an unvoted commit); ``weight`` scales its loss."""

    item_id: int
    label: str
    p_positive: float
    origin: str
    weight: float = 1.0


@dataclass(frozen=True)
class TeacherSelection:
    """Teacher predictions kept at threshold ``tau`` (0..1), and why others were not."""

    items: list[LabeledItem]
    predicted: int
    below_tau: int
    other_label: int


def teacher_items(store: Store, labeler: str, tau: float) -> TeacherSelection:
    """Each item's latest prediction by ``labeler`` whose score (confidence 0..1) is at
    least ``tau``; labels outside perf/non-perf (refusals, categories) are not used."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must lie in 0..1 (confidence / 100), not {tau}")
    kept: list[LabeledItem] = []
    below = other = 0
    latest = latest_predictions(store, labeler)
    for item_id, (label, score) in sorted(latest.items()):
        if label not in BINARY:
            other += 1
        elif score is None or score < tau:
            below += 1
        else:
            confidence = min(1.0, max(0.0, float(score)))
            p = confidence if label == POSITIVE else 1.0 - confidence
            kept.append(LabeledItem(item_id, label, p, "teacher"))
    return TeacherSelection(kept, len(latest), below, other)


def human_items(store: Store, sets: Sequence[SetRow], rule: str = "majority") -> list[LabeledItem]:
    """Settled final labels (perf/non-perf) of commit sets; an item in several sets once."""
    found: dict[int, LabeledItem] = {}
    for set_row in sets:
        if set_row.kind != KIND:
            raise ValueError(f"set {set_row.name!r} holds {set_row.kind} items, not commits")
        for item_id, label in final_labels(store, set_row, rule).items():
            if label in BINARY:
                found[item_id] = LabeledItem(item_id, label, float(label == POSITIVE), "human")
    return [found[i] for i in sorted(found)]


def unsettled_text(store: Store, set_row: SetRow, rule: str = "majority") -> str | None:
    """Why a set's items hold no final label yet, in a few words with the command that
    changes it (``259 wait for more votes (...)``, ``3 are conflicts (...)``); None
    when nothing waits."""
    counts = summary(decisions_for_set(store, set_row, rule))
    parts = []
    if pending := counts.get("pending", 0):
        need = set_row.votes_per_item
        edit = f"`curator set edit {set_row.name} --votes-per-item 1` if one vote is enough"
        parts.append(
            f"{pending:,} wait for more votes (it needs {need} per item; {edit})"
            if need > 1
            else f"{pending:,} have no vote yet"
        )
    if conflict := counts.get("conflict", 0):
        parts.append(f"{conflict:,} are conflicts (`curator adjudicate {set_row.name}`)")
    return ", ".join(parts) if parts else None


def combine(teacher: Iterable[LabeledItem], human: Iterable[LabeledItem]) -> list[LabeledItem]:
    """Teacher and human items together; a human label wins over the teacher's."""
    merged = {x.item_id: x for x in teacher}
    merged.update({x.item_id: x for x in human})
    return [merged[i] for i in sorted(merged)]


def repository_overlap(
    store: Store, train_ids: Iterable[int], held_out_ids: Iterable[int]
) -> dict[str, int]:
    """Repositories shared by training and held-out items -> training items from each."""
    train_sources = item_sources(store, train_ids)
    held = set(item_sources(store, held_out_ids).values())
    counts = Counter(s for s in train_sources.values() if s in held)
    return dict(sorted(counts.items()))


def describe_overlap(overlap: dict[str, int], limit: int = 5) -> str:
    """``repo (N items), ...`` for the first ``limit`` shared repositories, then how many
    more: the middle of every refusal that names a repository leak."""
    shown = ", ".join(f"{src} ({n} items)" for src, n in list(overlap.items())[:limit])
    more = f" and {len(overlap) - limit} more" if len(overlap) > limit else ""
    return shown + more


def drop_sources(
    store: Store, items: Sequence[LabeledItem], sources: Iterable[str]
) -> list[LabeledItem]:
    """``items`` without those from the given repositories."""
    banned = set(sources)
    where = item_sources(store, [x.item_id for x in items])
    return [x for x in items if where.get(x.item_id) not in banned]


def label_counts(items: Iterable[LabeledItem]) -> dict[str, int]:
    counts = Counter(f"{x.origin}:{x.label}" for x in items)
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class WeakSelection:
    """A labeler's predictions kept as weak examples, and why others were not."""

    items: list[LabeledItem]
    predicted: int
    voted_or_held: int
    below_confidence: int
    other_label: int


def weak_items(
    store: Store,
    labeler: str,
    min_confidence: float,
    weight: float,
    exclude: Iterable[int] = (),
    limit: int | None = None,
) -> WeakSelection:
    """``labeler``'s latest predictions on commits nobody voted on and outside ``exclude``
    (the held-out sets), with a score of at least ``min_confidence``, as examples of
    origin ``weak`` and the given ``weight``; at most ``limit``, in item order. A weight
    of 0 keeps none."""
    latest = latest_predictions(store, labeler)
    unvoted = set(commit_item_ids(store, unvoted_only=True)) - set(exclude)
    kept: list[LabeledItem] = []
    skipped = below = other = 0
    for item_id, (label, score) in sorted(latest.items()):
        if item_id not in unvoted:
            skipped += 1
        elif label not in BINARY:
            other += 1
        elif score is None or score < min_confidence:
            below += 1
        elif weight > 0 and (limit is None or len(kept) < limit):
            kept.append(LabeledItem(item_id, label, float(label == POSITIVE), "weak", weight))
    return WeakSelection(kept, len(latest), skipped, below, other)
