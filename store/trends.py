"""Votes and predictions over one set as time series: what the charts draw (label
distributions, agreement per week, an audit's precision as votes arrive)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from store.connection import Store
from store.votes import in_set_labels


@dataclass(frozen=True)
class TimedVote:
    """One row of the vote history (undos included: they restore an earlier label)."""

    item_id: int
    annotator: str
    role: str
    label: str | None
    created_at: str


def set_vote_history(store: Store, set_id: int) -> list[TimedVote]:
    """Every vote row on the set's items, oldest first, with its label when the label
    counts toward the set and None when the row takes a vote away from it: an undo to
    no vote, or a vote with another set's label (it replaces the annotator's vote)."""
    return [
        TimedVote(int(r[0]), r[1], r[2], r[3], r[4])
        for r in store._conn.execute(
            "SELECT v.item_id, v.annotator, v.role,"
            f" CASE WHEN {in_set_labels(':set', 'v')} THEN v.label END, v.created_at"
            " FROM votes AS v"
            " JOIN set_items AS si ON si.item_id = v.item_id AND si.set_id = :set"
            " ORDER BY v.id",
            {"set": set_id},
        )
    ]


def labelers_in_set(store: Store, set_id: int) -> list[str]:
    """Labelers with a prediction on some item of the set, by name."""
    return [
        r[0]
        for r in store._conn.execute(
            "SELECT DISTINCT p.labeler FROM predictions AS p JOIN set_items AS si"
            " ON si.item_id = p.item_id AND si.set_id = ? ORDER BY p.labeler",
            (set_id,),
        )
    ]


def latest_scores_in_set(
    store: Store, set_id: int, labeler: str
) -> dict[int, tuple[str, float | None, dict[str, Any]]]:
    """Each set item's newest (label, score, details) from one labeler: one lookup per
    member in the (item, labeler) index, never the labeler's predictions store-wide."""
    return {
        int(r[0]): (r[1], r[2], json.loads(r[3] or "{}"))
        for r in store._conn.execute(
            "SELECT p.item_id, p.label, p.score, p.details FROM set_items AS si"
            " JOIN predictions AS p ON p.id = (SELECT MAX(q.id) FROM predictions AS q"
            "  WHERE q.item_id = si.item_id AND q.labeler = :labeler)"
            " WHERE si.set_id = :set",
            {"set": set_id, "labeler": labeler},
        )
    }
