"""How one item settles from its live votes: the rule behind every final label.

A pure function over plain data, kept here (not in ``annotation``) because the store
keeps each set item's state and the per-set counters up to date in the same transaction
as the vote that changes them (``store/routing.py``), and ``store`` imports nothing of
ours. ``annotation.adjudication`` re-exports :func:`decide` and :class:`Decision`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

SKIP = "skip"  # annotation.labels.SKIP (a test checks they agree)
RULES = ("majority", "unanimous")
SETTLED = ("unanimous", "majority", "adjudicated")


@dataclass(frozen=True)
class Decision:
    """One item's state: ``status`` is unanimous, majority, adjudicated, conflict or
    pending; ``reason`` says why an item is a conflict (tie, skipped, disagreement)."""

    item_id: int
    status: str
    label: str | None
    reason: str | None
    votes: dict[str, str]
    notes: dict[str, str] = field(default_factory=dict)
    adjudicated_by: str | None = None

    @property
    def settled(self) -> bool:
        return self.status in SETTLED


def decide(
    item_id: int,
    votes: Mapping[str, str],
    required: int,
    rule: str = "majority",
    adjudication: tuple[str, str] | None = None,
) -> Decision:
    """Settle one item from its annotators' live votes (``skip`` included)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}: use {' or '.join(RULES)}")
    votes = dict(votes)
    if adjudication is not None and adjudication[1] != SKIP:
        return Decision(item_id, "adjudicated", adjudication[1], None, votes, {}, adjudication[0])
    counted = Counter(label for label in votes.values() if label != SKIP)
    skipped = sum(1 for label in votes.values() if label == SKIP)
    real = sum(counted.values())
    if real < required:
        if skipped and len(votes) >= required:
            return Decision(item_id, "conflict", None, "skipped", votes)
        return Decision(item_id, "pending", None, None, votes)
    ranked = counted.most_common()
    if len(ranked) == 1:
        if rule == "unanimous" and skipped:
            return Decision(item_id, "conflict", None, "skipped", votes)
        return Decision(item_id, "unanimous", ranked[0][0], None, votes)
    if rule == "unanimous":
        return Decision(item_id, "conflict", None, "disagreement", votes)
    if ranked[0][1] == ranked[1][1]:
        return Decision(item_id, "conflict", None, "tie", votes)
    return Decision(item_id, "majority", ranked[0][0], None, votes)
