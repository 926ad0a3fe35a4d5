"""Re-ranking a set's queue as active learning learns: the unvoted items after a
position, the labels voted so far, and a new order for those items (their positions
permuted among themselves, so every other item keeps its place)."""

from __future__ import annotations

from collections.abc import Sequence

from store.connection import Store
from store.votes import in_set_labels


def unvoted_after(store: Store, set_id: int, position: int, limit: int) -> list[tuple[int, int]]:
    """(position, item id) of up to ``limit`` items after ``position`` that no annotator
    has a live vote on counting toward the set, in queue order."""
    return [
        (int(r[0]), int(r[1]))
        for r in store._conn.execute(
            "SELECT si.position, si.item_id FROM set_items AS si"
            " WHERE si.set_id = :set AND si.position > :after AND NOT EXISTS ("
            "  SELECT 1 FROM live_votes AS lv WHERE lv.item_id = si.item_id"
            f"  AND lv.role = 'annotator' AND {in_set_labels(':set')})"
            " ORDER BY si.position LIMIT :limit",
            {"set": set_id, "after": position, "limit": limit},
        )
    ]


def annotator_labels_in_set(store: Store, set_id: int) -> list[tuple[int, str]]:
    """(item id, label) of every live annotator vote counting toward the set."""
    return [
        (int(r[0]), r[1])
        for r in store._conn.execute(
            "SELECT lv.item_id, lv.label FROM set_items AS si JOIN live_votes AS lv"
            " ON lv.item_id = si.item_id AND lv.role = 'annotator'"
            f" WHERE si.set_id = :set AND {in_set_labels(':set')}",
            {"set": set_id},
        )
    ]


def reorder(store: Store, set_id: int, item_ids: Sequence[int]) -> int:
    """Give ``item_ids`` (members of the set) the positions they hold now, sorted, in the
    order given; returns how many items changed position. One transaction."""
    if not item_ids:
        return 0
    with store.transaction() as conn:
        marks = ",".join("?" * len(item_ids))
        held = {
            int(r[1]): int(r[0])
            for r in conn.execute(
                "SELECT position, item_id FROM set_items"
                f" WHERE set_id = ? AND item_id IN ({marks})",
                (set_id, *item_ids),
            )
        }
        order = [i for i in item_ids if i in held]
        target = dict(zip(order, sorted(held[i] for i in order), strict=True))
        moving = [i for i in order if target[i] != held[i]]
        # Out of the way first: positions are unique within a set.
        conn.executemany(
            "UPDATE set_items SET position = -1 - position WHERE set_id = ? AND item_id = ?",
            [(set_id, i) for i in moving],
        )
        conn.executemany(
            "UPDATE set_items SET position = ? WHERE set_id = ? AND item_id = ?",
            [(target[i], set_id, i) for i in moving],
        )
    return len(moving)
