"""The stored model input of commits, read in id order and written again: what
``curator mine reread`` needs to bring commits stored by an earlier Curator to the text
the models read now."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from store.connection import Store


@dataclass(frozen=True)
class StoredCommitText:
    """What a commit's model input is made from, and the text stored for it now."""

    item_id: int
    message: str
    diff: str
    path: str | None  # the commit's file (the item's path when the commit has none)
    model_input: str


_SELECT = (
    "SELECT c.item_id, c.message, c.diff, COALESCE(NULLIF(c.file, ''), i.path), c.model_input"
    " FROM commits c JOIN items i ON i.id = c.item_id"
)


def count_commits(store: Store, source: str | None = None) -> int:
    """How many commits are stored (of ``source`` only, when given)."""
    if source is None:
        return int(store._scalar("SELECT COUNT(*) FROM commits") or 0)
    return int(
        store._scalar(
            "SELECT COUNT(*) FROM commits c JOIN items i ON i.id = c.item_id WHERE i.source = ?",
            (source,),
        )
        or 0
    )


def stored_commit_texts(
    store: Store, source: str | None = None, chunk: int = 500
) -> Iterator[list[StoredCommitText]]:
    """Every stored commit (of ``source`` only, when given) in item id order, ``chunk``
    at a time; each chunk is read on its own, so writes between chunks are safe."""
    where = "" if source is None else " AND i.source = ?"
    after = 0
    while True:
        params: tuple[object, ...] = (after, *(() if source is None else (source,)), chunk)
        rows = store._query(
            f"{_SELECT} WHERE c.item_id > ?{where} ORDER BY c.item_id LIMIT ?",
            params,
        )
        if not rows:
            return
        yield [StoredCommitText(r[0], r[1], r[2], r[3], r[4]) for r in rows]
        after = rows[-1][0]


def commit_texts_of(store: Store, item_ids: Sequence[int]) -> list[StoredCommitText]:
    """The stored texts of the given commit items (other items are absent), in id order."""
    found: list[StoredCommitText] = []
    ids = list(item_ids)
    for start in range(0, len(ids), 900):
        part = ids[start : start + 900]
        marks = ",".join("?" * len(part))
        rows = store._query(
            f"{_SELECT} WHERE c.item_id IN ({marks})",
            tuple(part),
        )
        found += [StoredCommitText(r[0], r[1], r[2], r[3], r[4]) for r in rows]
    return sorted(found, key=lambda row: row.item_id)


def write_model_inputs(store: Store, texts: Sequence[tuple[int, str]]) -> None:
    """Store each ``(item id, model input)`` pair, all in one transaction."""
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE commits SET model_input = ? WHERE item_id = ?",
            [(text, item_id) for item_id, text in texts],
        )


def predicted_items(store: Store, item_ids: Sequence[int]) -> int:
    """How many of ``item_ids`` have a stored prediction of a labeler other than the
    keyword rules (which read the message, not the model input)."""
    found = 0
    ids = list(item_ids)
    for start in range(0, len(ids), 900):
        part = ids[start : start + 900]
        marks = ",".join("?" * len(part))
        found += int(
            store._scalar(
                "SELECT COUNT(DISTINCT item_id) FROM predictions"
                f" WHERE item_id IN ({marks}) AND labeler NOT LIKE 'keyword@%'",
                tuple(part),
            )
            or 0
        )
    return found
