"""What the teacher reads (commit texts by item id, commit items no human has labeled)
and which teachers have answered."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from store.connection import Store

TEXT_FIELDS = ("message", "model_input")
FILES_FIELD = "files"
_FROM = {
    "message": "SELECT c.item_id, c.message FROM commits c",
    "model_input": "SELECT c.item_id, c.model_input FROM commits c",
    # The diff is read only where neither the commit's file list nor the item's path
    # names a file (an imported commit that came with a diff alone).
    FILES_FIELD: (
        "SELECT c.item_id, c.files, i.path,"
        " CASE WHEN COALESCE(c.files, '') IN ('', '[]') AND COALESCE(i.path, '') = ''"
        " THEN c.diff END"
        " FROM commits c JOIN items i ON i.id = c.item_id"
    ),
}
_GIT_HEADER = re.compile(r"^diff --git a/.*? b/(.+)$", re.MULTILINE)
_FILE_HEADERS = re.compile(r"^--- (?:a/)?([^\t\n]+).*\n\+\+\+ (?:b/)?([^\t\n]+)", re.MULTILINE)


def commit_texts(store: Store, item_ids: Sequence[int], field: str) -> dict[int, str]:
    """``message``, ``model_input`` or ``files`` of the given commit items; other items
    are absent. ``files`` is the files a commit changes, one per line: the list a mined
    commit stores, else the item's path, else the files its diff names."""
    if field not in _FROM:
        known = " or ".join((*TEXT_FIELDS, FILES_FIELD))
        raise ValueError(f"unknown commit text field {field!r}; use {known}")
    found: dict[int, str] = {}
    ids = list(item_ids)
    for start in range(0, len(ids), 900):
        chunk = ids[start : start + 900]
        marks = ",".join("?" * len(chunk))
        for item_id, *row in store._conn.execute(
            f"{_FROM[field]} WHERE c.item_id IN ({marks})", chunk
        ):
            found[int(item_id)] = _changed_files(*row) if field == FILES_FIELD else row[0] or ""
    return found


def _changed_files(files: str | None, path: str | None, diff: str | None) -> str:
    try:
        listed = [str(f) for f in json.loads(files or "[]") if f]
    except (ValueError, TypeError):
        listed = []
    if listed:
        return "\n".join(listed)
    if path:
        return path
    return "\n".join(diff_files(diff or ""))


def diff_files(diff: str) -> list[str]:
    """The files a unified diff changes, in order (new names; old ones for deletions)."""
    named = _GIT_HEADER.findall(diff) or [
        new.strip() if new.strip() != "/dev/null" else old.strip()
        for old, new in _FILE_HEADERS.findall(diff)
    ]
    return list(dict.fromkeys(n for n in named if n and n != "/dev/null"))


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
