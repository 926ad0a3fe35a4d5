"""What trained labelers read besides texts (those come from :mod:`store.teaching`): the
repository of each item, and the commit items a pre-labeling run walks."""

from __future__ import annotations

from collections.abc import Iterable

from store.connection import Store


def item_sources(store: Store, item_ids: Iterable[int]) -> dict[int, str]:
    """Item id -> its source (the repository it came from)."""
    wanted = list(dict.fromkeys(item_ids))
    found: dict[int, str] = {}
    for start in range(0, len(wanted), 900):
        chunk = wanted[start : start + 900]
        marks = ",".join("?" * len(chunk))
        for item_id, source in store._conn.execute(
            f"SELECT id, source FROM items WHERE id IN ({marks})", chunk
        ):
            found[int(item_id)] = source
    return found


def commit_item_ids(store: Store, unvoted_only: bool = False) -> list[int]:
    """Every commit item's id in id order; with ``unvoted_only``, those nobody voted on."""
    sql = "SELECT i.id FROM items AS i WHERE i.kind = 'commit'"
    if unvoted_only:
        sql += " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = i.id)"
    return [int(r[0]) for r in store._conn.execute(sql + " ORDER BY i.id")]
