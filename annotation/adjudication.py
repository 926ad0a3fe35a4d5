"""Final labels derived from votes: unanimous and majority items settle by themselves,
ties and skips become conflicts, and an adjudicator's vote settles a conflict.

Nothing here is stored: a final label is always recomputed from the live votes, so it
can never disagree with them and is never typed twice.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from annotation.labels import SKIP
from store import Store
from store.decisions import RULES, SETTLED, Decision, decide
from store.sets import SetRow, set_item_ids
from store.votes import (
    ADJUDICATOR,
    ANNOTATOR,
    LiveVote,
    live_votes_for_items,
    live_votes_in_set,
)

__all__ = [
    "RULES",
    "SETTLED",
    "Decision",
    "Drift",
    "annotator_drift",
    "conflicts_for_set",
    "decide",
    "decisions_for_set",
    "final_labels",
    "summary",
]


def _decisions(
    live: Iterable[LiveVote], ids: Sequence[int], votes_per_item: int, rule: str
) -> list[Decision]:
    """A decision for each of ``ids`` from their live votes, with the annotators' notes."""
    votes: dict[int, dict[str, str]] = defaultdict(dict)
    notes: dict[int, dict[str, str]] = defaultdict(dict)
    adjudications: dict[int, tuple[str, str]] = {}
    for vote in live:
        if vote.role == ADJUDICATOR:
            # the latest adjudication, the one in force, comes last (store.votes.vote_order)
            adjudications[vote.item_id] = (vote.annotator, vote.label)
        elif vote.role == ANNOTATOR:
            votes[vote.item_id][vote.annotator] = vote.label
            if vote.note:
                notes[vote.item_id][vote.annotator] = vote.note
    result = []
    for item_id in ids:
        d = decide(item_id, votes.get(item_id, {}), votes_per_item, rule,
                   adjudications.get(item_id))  # fmt: skip
        result.append(replace(d, notes=notes[item_id]) if notes.get(item_id) else d)
    return result


def decisions_for_set(store: Store, set_row: SetRow, rule: str = "majority") -> list[Decision]:
    """A decision for every item of the set, in set order."""
    live = live_votes_in_set(store, set_row.id)
    return _decisions(live, set_item_ids(store, set_row.id), set_row.votes_per_item, rule)


def conflicts_for_set(store: Store, set_row: SetRow) -> list[Decision]:
    """The set's conflicts (majority rule), in set order, read through the per-item
    state routing keeps: only the conflicting items' votes are read."""
    from store.routing import is_tracked, members_in_state, rebuild_set

    if not is_tracked(store, set_row.id):
        rebuild_set(store, set_row.id)
    ids = members_in_state(store, set_row.id, "conflict")
    live = live_votes_for_items(store, ids, set_id=set_row.id)
    return _decisions(live, ids, set_row.votes_per_item, "majority")


def final_labels(store: Store, set_row: SetRow, rule: str = "majority") -> dict[int, str]:
    """Item id -> final label, for the settled items of a set."""
    return {
        d.item_id: d.label
        for d in decisions_for_set(store, set_row, rule)
        if d.settled and d.label is not None
    }


@dataclass(frozen=True)
class Drift:
    """How one annotator's votes compare with the final labels."""

    annotator: str
    items: int
    agreeing: int
    kappa: float | None

    @property
    def rate(self) -> float | None:
        return self.agreeing / self.items if self.items else None


def annotator_drift(decisions: list[Decision]) -> list[Drift]:
    """Per annotator: on settled items they labeled (skips aside), how often their vote is
    the final label, and Cohen's kappa against the final labels."""
    from annotation.agreement import cohen_kappa

    pairs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for d in decisions:
        if not d.settled or d.label is None:
            continue
        for annotator, label in d.votes.items():
            if label != SKIP:
                pairs[annotator].append((label, d.label))
    return [
        Drift(name, len(p), sum(a == b for a, b in p), cohen_kappa(p)[0])
        for name, p in sorted(pairs.items())
    ]


def summary(decisions: list[Decision]) -> dict[str, int]:
    counts = Counter(d.status for d in decisions)
    return {s: counts.get(s, 0) for s in (*SETTLED, "conflict", "pending")}
