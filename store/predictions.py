"""Predictions of machine labelers: batch writes and the lookups labeling runs resume from."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

from store.connection import Store, utc_now
from store.records import PredictionRow

_encode = json.JSONEncoder(sort_keys=True).encode


def _details_json(details: object) -> str:
    """``json.dumps(details, sort_keys=True)``, faster: a student's ``{"p_perf": p}``
    (one plain key, one finite float) is formatted directly, as json would write it, and
    everything else goes through one shared encoder (encoding took a third of the write
    path's time at 100,000 rows a second)."""
    if type(details) is dict and len(details) == 1:
        ((key, value),) = details.items()
        if (
            type(key) is str
            and key.isascii()
            and key.isidentifier()
            and type(value) is float
            and math.isfinite(value)
        ):
            return f'{{"{key}": {value!r}}}'
    return _encode(details)


def add_predictions(
    store: Store, rows: Sequence[tuple[int, PredictionRow]], now: str | None = None
) -> int:
    """Append ``(item_id, prediction)`` pairs in one transaction; nothing is overwritten."""
    stamp = now or utc_now()
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO predictions (item_id, labeler, label, score, details, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    item_id,
                    p.labeler,
                    p.label,
                    p.score,
                    _details_json(p.details),
                    stamp,
                )
                for item_id, p in rows
            ],
        )
    return len(rows)


DENSE = 3
"""Ids spread over at most this many times their number are looked up as one range of
the (labeler, item_id) index; sparser ones one by one (an index seek each)."""


def predicted_item_ids(
    store: Store, labeler: str, item_ids: Iterable[int] | None = None
) -> set[int]:
    """Items that already hold a prediction from ``labeler`` (optionally among
    ``item_ids``). Among ids, the work is bounded by how many ids are asked about, not
    by how many items the labeler (or the store) holds: one query that reads the index
    on (labeler, item_id) either over the ids' range, when they fill most of it (every
    commit, the new ones), or at each id (a set's members scattered over the store)."""
    cursor = store._conn.cursor()
    cursor.row_factory = None
    if item_ids is None:
        rows = cursor.execute(
            "SELECT DISTINCT item_id FROM predictions WHERE labeler = ?", (labeler,)
        )
        return {r[0] for r in rows}
    wanted = sorted(set(item_ids))
    if not wanted:
        return set()
    low, high = wanted[0], wanted[-1]
    if high - low < DENSE * len(wanted):
        rows = cursor.execute(
            "SELECT item_id FROM predictions WHERE labeler = ? AND item_id BETWEEN ? AND ?",
            (labeler, low, high),
        )
        return {r[0] for r in rows}.intersection(wanted)
    rows = cursor.execute(
        "SELECT j.value FROM json_each(?) AS j WHERE EXISTS (SELECT 1 FROM predictions AS p"
        " WHERE p.labeler = ? AND p.item_id = j.value)",
        (json.dumps(wanted), labeler),
    )
    return {r[0] for r in rows}


def has_predictions(store: Store, labeler: str) -> bool:
    """Whether any item holds a prediction from ``labeler``."""
    row = store._conn.execute(
        "SELECT 1 FROM predictions WHERE labeler = ? LIMIT 1", (labeler,)
    ).fetchone()
    return row is not None


def forced_inputs(store: Store, labeler: str, item_ids: Iterable[int]) -> dict[str, int]:
    """How many of ``labeler``'s predictions on ``item_ids`` record, under
    ``forced_input`` in their details, a text read other than the one the model learned
    from (``curator predict --input``): field -> count."""
    wanted = sorted(set(item_ids))
    if not wanted:
        return {}
    rows = store._conn.execute(
        "SELECT json_extract(p.details, '$.forced_input'), COUNT(*) FROM predictions AS p"
        " JOIN json_each(?) AS j ON p.item_id = j.value WHERE p.labeler = ?"
        " AND json_valid(p.details) AND json_extract(p.details, '$.forced_input') IS NOT NULL"
        " GROUP BY 1",
        (json.dumps(wanted), labeler),
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def below_version_item_ids(
    store: Store, labeler: str, key: str, version: int, item_ids: Iterable[int] | None = None
) -> set[int]:
    """Items (optionally among ``item_ids``) whose newest prediction from ``labeler``
    records under ``key`` in its details a number below ``version``, or records none
    (answers stored before the key existed): the answers of an older prompt or rule set.
    One lookup in the (labeler, item_id) index per item asked about."""
    cursor = store._conn.cursor()
    cursor.row_factory = None
    path = f'$."{key}"'
    stale = (
        " AND COALESCE(CASE WHEN json_valid(p.details) THEN json_extract(p.details, ?) END, 0) < ?"
    )
    if item_ids is None:
        rows = cursor.execute(
            "SELECT p.item_id FROM predictions AS p WHERE p.id IN (SELECT MAX(q.id)"
            " FROM predictions AS q WHERE q.labeler = ? GROUP BY q.item_id)" + stale,
            (labeler, path, version),
        )
        return {r[0] for r in rows}
    wanted = sorted(set(item_ids))
    if not wanted:
        return set()
    rows = cursor.execute(
        "SELECT j.value FROM json_each(?) AS j JOIN predictions AS p ON p.id = (SELECT"
        " MAX(q.id) FROM predictions AS q WHERE q.labeler = ? AND q.item_id = j.value)" + stale,
        (json.dumps(wanted), labeler, path, version),
    )
    return {r[0] for r in rows}
