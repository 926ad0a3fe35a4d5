"""An annotator's queue over a set: the next items to label and what they may see.

Pages come from keyset pagination over the set's positions (never the whole set).
In a blind set an annotator sees only their own vote on an item until it is settled
by adjudication; in an open set they see everyone's.
"""

from __future__ import annotations

from dataclasses import dataclass

from annotation.adjudication import decide
from store import Store
from store.sets import SetRow, queue_page
from store.votes import ADJUDICATOR, ANNOTATOR, LiveVote, live_votes_for_items


@dataclass(frozen=True)
class QueueEntry:
    position: int
    item_id: int


def next_items(
    store: Store, set_row: SetRow, annotator: str, after_position: int = -1, limit: int = 50
) -> list[QueueEntry]:
    """The annotator's unlabeled items after a position, in set order."""
    return [
        QueueEntry(p, i) for p, i in queue_page(store, set_row.id, annotator, after_position, limit)
    ]


def visible_votes(store: Store, set_row: SetRow, item_id: int, annotator: str) -> list[LiveVote]:
    """The live votes counting toward the set that this annotator may see on an item."""
    votes = live_votes_for_items(store, [item_id], set_id=set_row.id)
    if not set_row.blind:
        return votes
    # the latest adjudication, the one in force, comes last (store.votes.vote_order)
    adjudication = next((v for v in reversed(votes) if v.role == ADJUDICATOR), None)
    decision = decide(
        item_id,
        {v.annotator: v.label for v in votes if v.role == ANNOTATOR},
        set_row.votes_per_item,
        adjudication=(adjudication.annotator, adjudication.label) if adjudication else None,
    )
    if decision.status == "adjudicated":
        return votes
    return [v for v in votes if v.annotator == annotator and v.role == ANNOTATOR]
