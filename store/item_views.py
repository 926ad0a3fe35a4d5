"""Read-only lookups the annotation app needs to show one item and move around a set.

Every query touches a handful of rows through an index, whatever the size of the store:
the app calls these on each key press.
"""

from __future__ import annotations

import json
from typing import Any

from store.connection import Store
from store.items import MAX_ID
from store.votes import in_set_labels


def item_row(store: Store, item_id: int) -> dict[str, Any] | None:
    """The ``items`` row of one item, provenance decoded."""
    row = store._conn.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["provenance"] = json.loads(data.get("provenance") or "{}")
    return data


def commit_row(store: Store, item_id: int) -> dict[str, Any] | None:
    """The ``commits`` payload of one commit item, JSON lists decoded."""
    row = store._conn.execute("SELECT * FROM commits WHERE item_id = ?", (item_id,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    for name in ("files", "functions"):
        data[name] = json.loads(data[name] or "[]")
    return data


def latest_item_predictions(store: Store, item_id: int) -> list[dict[str, Any]]:
    """The newest prediction of each labeler on one item, ordered by labeler name."""
    rows = store._conn.execute(
        "SELECT p.labeler, p.label, p.score, p.details FROM predictions AS p"
        " WHERE p.item_id = ? AND p.id = (SELECT MAX(q.id) FROM predictions AS q"
        "  WHERE q.item_id = p.item_id AND q.labeler = p.labeler)"
        " ORDER BY p.labeler",
        (item_id,),
    )
    return [
        {"labeler": r[0], "label": r[1], "score": r[2], "details": json.loads(r[3] or "{}")}
        for r in rows
    ]


def set_position(store: Store, set_id: int, item_id: int) -> int | None:
    """Where an item sits in a set, or None when it is not a member."""
    if not 0 < item_id <= MAX_ID:
        return None
    row = store._conn.execute(
        "SELECT position FROM set_items WHERE set_id = ? AND item_id = ?", (set_id, item_id)
    ).fetchone()
    return None if row is None else int(row[0])


def annotator_votes_in_set(store: Store, set_id: int, annotator: str) -> int:
    """How many of the set's items hold a live vote of this annotator that counts
    toward the set."""
    return int(
        store._conn.execute(
            "SELECT COUNT(*) FROM live_votes AS lv JOIN set_items AS si"
            " ON si.item_id = lv.item_id AND si.set_id = :set"
            f" WHERE lv.annotator = :who AND lv.role = 'annotator' AND {in_set_labels(':set')}",
            {"set": set_id, "who": annotator},
        ).fetchone()[0]
    )


def search_set(store: Store, set_id: int, text: str, limit: int = 50) -> list[dict[str, Any]]:
    """Members of a set whose key starts with ``text`` or whose message or path holds it.

    Key prefixes go through the unique (kind, key) index; the text scan stops after
    ``limit`` hits.
    """
    needle = text.strip()
    if not needle:
        return []
    like = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = store._conn.execute(
        "SELECT si.position, i.id, i.kind, i.key, i.source, i.path, c.message"
        " FROM set_items AS si JOIN items AS i ON i.id = si.item_id"
        " LEFT JOIN commits AS c ON c.item_id = i.id"
        " WHERE si.set_id = ? AND (i.key LIKE ? ESCAPE '\\' OR i.path LIKE ? ESCAPE '\\'"
        "  OR c.message LIKE ? ESCAPE '\\')"
        " ORDER BY si.position LIMIT ?",
        (set_id, needle.replace("%", "") + "%", like, like, limit),
    )
    return [
        {
            "position": r[0],
            "item_id": r[1],
            "kind": r[2],
            "key": r[3],
            "source": r[4],
            "path": r[5],
            "title": (r[6] or "").splitlines()[0] if r[6] else (r[5] or r[3]),
        }
        for r in rows
    ]


def resume_position(store: Store, set_id: int, annotator: str) -> int | None:
    """Position of the item this annotator voted on last in this set: where a returning
    annotator picks up, without walking past everything they already labeled."""
    row = store._conn.execute(
        "SELECT si.position FROM votes AS v JOIN set_items AS si"
        " ON si.set_id = v.set_id AND si.item_id = v.item_id"
        " WHERE v.annotator = ? AND v.role = 'annotator' AND v.set_id = ?"
        " AND v.label IS NOT NULL ORDER BY v.id DESC LIMIT 1",
        (annotator, set_id),
    ).fetchone()
    return None if row is None else int(row[0])


def change_mark(store: Store) -> tuple[int, int]:
    """(newest vote id, newest set membership row): it moves whenever a vote is cast or
    undone or a set gains items, so figures computed under the same mark still hold."""
    row = store._conn.execute(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM votes),"
        " (SELECT COALESCE(MAX(rowid), 0) FROM set_items)"
    ).fetchone()
    return int(row[0]), int(row[1])
