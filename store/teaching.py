"""What the teacher reads (commit texts by item id, commit items no human has labeled)
and which teachers have answered."""

from __future__ import annotations

from collections.abc import Sequence

from store.connection import Store

TEXT_FIELDS = ("message", "model_input")
FILE_FIELD = "file"
# The file a mined or imported commit changes ("" when none) lives on its items row.
_FROM = {
    "message": "SELECT c.item_id, c.message FROM commits c",
    "model_input": "SELECT c.item_id, c.model_input FROM commits c",
    FILE_FIELD: "SELECT c.item_id, i.path FROM commits c JOIN items i ON i.id = c.item_id",
}


def commit_texts(store: Store, item_ids: Sequence[int], field: str) -> dict[int, str]:
    """``message``, ``model_input`` or ``file`` of the given commit items; other items
    are absent."""
    if field not in _FROM:
        known = " or ".join((*TEXT_FIELDS, FILE_FIELD))
        raise ValueError(f"unknown commit text field {field!r}; use {known}")
    found: dict[int, str] = {}
    ids = list(item_ids)
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        for item_id, text in store._conn.execute(
            f"{_FROM[field]} WHERE c.item_id IN ({marks})", chunk
        ):
            found[int(item_id)] = text or ""
    return found


def commits_with_diff(store: Store, item_ids: Sequence[int]) -> set[int]:
    """The given commit items whose diff is not blank."""
    found: set[int] = set()
    ids = list(dict.fromkeys(item_ids))
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        for (item_id,) in store._conn.execute(
            f"SELECT item_id FROM commits WHERE item_id IN ({marks}) AND TRIM(diff) != ''",
            chunk,
        ):
            found.add(int(item_id))
    return found


def commit_diff_counts(store: Store, item_ids: Sequence[int]) -> tuple[int, int]:
    """(commit items among ``item_ids``, those of them without a diff)."""
    commits = without = 0
    ids = list(dict.fromkeys(item_ids))
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        n, blank = store._conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(TRIM(diff) = ''), 0) FROM commits"
            f" WHERE item_id IN ({marks})",
            chunk,
        ).fetchone()
        commits += int(n)
        without += int(blank)
    return commits, without


def unvoted_commit_ids(store: Store, limit: int | None, without_labeler: str | None) -> list[int]:
    """Commit items without any human vote, oldest first; with ``without_labeler``, only
    those that labeler has not predicted yet (so successive runs move on)."""
    sql = (
        "SELECT i.id FROM items AS i WHERE i.kind = 'commit'"
        " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = i.id)"
    )
    params: list[object] = []
    if without_labeler is not None:
        sql += (
            " AND NOT EXISTS (SELECT 1 FROM predictions AS p"
            " WHERE p.item_id = i.id AND p.labeler = ?)"
        )
        params.append(without_labeler)
    sql += " ORDER BY i.id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return [int(r[0]) for r in store._conn.execute(sql, params)]


def teacher_names(store: Store) -> list[str]:
    """Teachers with stored answers (``teacher:MODEL``), the most answers first."""
    rows = store._conn.execute(
        "SELECT labeler, COUNT(*) AS n FROM predictions WHERE labeler LIKE 'teacher:%'"
        " GROUP BY labeler ORDER BY n DESC, labeler"
    ).fetchall()
    return [r[0] for r in rows]
