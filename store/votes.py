"""Votes: the append-only history, the live vote per (item, annotator, role), and undo.

Every vote and every undo appends a row to ``votes``; ``live_votes`` holds the state the
latest row left behind, updated in the same transaction, so queues and agreement read one
row per annotator instead of replaying history.

Undo also takes back an answer on a hidden gold item (``gold_answers``, written by
``store.routing``) when it is the annotator's latest: the answer moves to
``gold_answers_undone``, kept with the time it was undone.

A live vote counts toward a set only when its label is one of the set's labels or skip
(:func:`counts_toward`, and :func:`in_set_labels` for SQL): sets with the same labels
share votes on their common items, a set with other labels does not see them.

When several adjudicators voted on an item, the latest adjudication is the one in force:
readers list an item's adjudications after its annotators' votes, oldest first
(:func:`vote_order`), so the last one read settles it, and files written in that order
keep it last when they are imported again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from store.connection import Store, utc_now
from store.decisions import SKIP

ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"


@dataclass(frozen=True)
class VoteRow:
    """One vote to append. ``label`` None means "no vote" (what an undo may restore)."""

    item_id: int
    annotator: str
    label: str | None
    category: str | None = None
    note: str | None = None
    role: str = ANNOTATOR
    set_id: int | None = None
    origin: str = "cli"


@dataclass(frozen=True)
class LiveVote:
    item_id: int
    annotator: str
    role: str
    label: str
    category: str | None
    note: str | None


@dataclass(frozen=True)
class UndoResult:
    """The vote an undo took back and the state it restored (label None: no vote).
    ``gold``: it was an answer on a hidden gold item (``undone_vote_id`` is the gold
    answer's id), which the annotator is not told."""

    undone_vote_id: int
    item_id: int
    undone_label: str | None
    restored_label: str | None
    gold: bool = False


def counts_toward(label: str | None, labels: Collection[str]) -> bool:
    """Whether a live vote labelled ``label`` counts toward a set with ``labels``."""
    return label is not None and (label == SKIP or label in labels)


def in_set_labels(set_id: str, vote: str = "lv") -> str:
    """SQL condition saying :func:`counts_toward` for the live vote aliased ``vote`` and
    the set whose id is the SQL expression ``set_id``. Give a placeholder, not a column:
    SQLite then reads the set's labels once per statement instead of once per row."""
    return (
        f"({vote}.label = '{SKIP}' OR {vote}.label IN (SELECT value FROM json_each("
        f"(SELECT labels FROM sets WHERE id = {set_id}))))"
    )


def vote_order(vote: str = "lv") -> str:
    """SQL ORDER BY terms for an item's live votes (aliased ``vote``): the annotators' by
    name, then the adjudications oldest first, the one in force last."""
    return (
        f"{vote}.role = '{ADJUDICATOR}', CASE WHEN {vote}.role = '{ADJUDICATOR}'"
        f" THEN {vote}.vote_id END, {vote}.annotator"
    )


def append_votes(store: Store, rows: Sequence[VoteRow], undoes: int | None = None) -> list[int]:
    """Append votes in one transaction and move the live votes; returns the new row ids."""
    from store.routing import VoteChange, track_votes

    now = utc_now()
    ids: list[int] = []
    changed: list[VoteChange] = []
    with store.transaction() as conn:
        for row in rows:
            old = _live_label(conn, row)
            cur = conn.execute(
                "INSERT INTO votes (item_id, annotator, label, category, note, created_at, role,"
                " undoes, set_id, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.item_id,
                    row.annotator,
                    row.label,
                    row.category,
                    row.note,
                    now,
                    row.role,
                    undoes,
                    row.set_id,
                    row.origin,
                ),
            )
            vote_id = int(cur.lastrowid or 0)
            ids.append(vote_id)
            _set_live(conn, row, vote_id)
            changed.append(VoteChange(row.item_id, row.annotator, row.role, old, row.label))
        track_votes(conn, changed)
    return ids


def _live_label(conn: sqlite3.Connection, row: VoteRow) -> str | None:
    """The label of the live vote ``row`` replaces, or None when there is none."""
    found = conn.execute(
        "SELECT label FROM live_votes WHERE item_id = ? AND annotator = ? AND role = ?",
        (row.item_id, row.annotator, row.role),
    ).fetchone()
    return None if found is None else str(found[0])


def _set_live(conn: sqlite3.Connection, row: VoteRow, vote_id: int) -> None:
    if row.label is None:
        conn.execute(
            "DELETE FROM live_votes WHERE item_id = ? AND annotator = ? AND role = ?",
            (row.item_id, row.annotator, row.role),
        )
        return
    conn.execute(
        "INSERT INTO live_votes (item_id, annotator, role, vote_id, label, category, note)"
        " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (item_id, annotator, role) DO UPDATE SET"
        " vote_id = excluded.vote_id, label = excluded.label, category = excluded.category,"
        " note = excluded.note",
        (row.item_id, row.annotator, row.role, vote_id, row.label, row.category, row.note),
    )


def undo_last(
    store: Store, annotator: str, role: str = ANNOTATOR, set_id: int | None = None
) -> UndoResult | None:
    """Take back the annotator's latest vote that is still in effect (within a set if
    given: on one of its items, with a label that counts toward it): append a row
    restoring the state before it. Repeated undos walk further back.

    A vote is in effect while every later vote of the annotator on the item has been
    undone: a vote another set's label replaced is not, so undoing within a set never
    takes away the vote that replaced it.

    An answer on a hidden gold item (of the set if given) is taken back the same way
    when it is later than that vote (:func:`_undo_gold_answer`)."""
    with store.transaction() as conn:
        in_set = (
            " AND item_id IN (SELECT item_id FROM set_items WHERE set_id = :set)"
            f" AND {in_set_labels(':set', 'v')}"
            " AND NOT EXISTS (SELECT 1 FROM votes AS w WHERE w.item_id = v.item_id"
            "  AND w.annotator = v.annotator AND w.role = v.role AND w.id > v.id"
            "  AND w.undoes IS NULL"
            "  AND NOT EXISTS (SELECT 1 FROM votes AS x WHERE x.undoes = w.id))"
        )
        target = conn.execute(
            "SELECT id, item_id, label, created_at FROM votes AS v WHERE annotator = :who"
            " AND role = :role AND undoes IS NULL"
            " AND NOT EXISTS (SELECT 1 FROM votes AS u WHERE u.undoes = v.id)"
            + (in_set if set_id is not None else "")
            + " ORDER BY id DESC LIMIT 1",
            {"who": annotator, "role": role, "set": set_id},
        ).fetchone()
        gold = _latest_gold_answer(conn, annotator, set_id) if role == ANNOTATOR else None
        if gold is not None and (target is None or gold[1] >= target[3]):
            return _undo_gold_answer(conn, gold[0])
        if target is None:
            return None
        vote_id, item_id, label, _ = target
        before = conn.execute(
            "SELECT label, category, note FROM votes WHERE item_id = ? AND annotator = ?"
            " AND role = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (item_id, annotator, role, vote_id),
        ).fetchone()
        restored = VoteRow(
            item_id=item_id,
            annotator=annotator,
            label=before[0] if before else None,
            category=before[1] if before else None,
            note=before[2] if before else None,
            role=role,
            set_id=set_id,
            origin="undo",
        )
        append_votes(store, [restored], undoes=vote_id)
    return UndoResult(vote_id, item_id, label, restored.label)


def _latest_gold_answer(
    conn: sqlite3.Connection, annotator: str, set_id: int | None
) -> tuple[int, str] | None:
    """The id and time of the annotator's latest gold answer in force (in the set if
    given)."""
    row = conn.execute(
        "SELECT id, created_at FROM gold_answers WHERE annotator = ?"
        + (" AND set_id = ?" if set_id is not None else "")
        + " ORDER BY created_at DESC, id DESC LIMIT 1",
        (annotator,) if set_id is None else (annotator, set_id),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def _undo_gold_answer(conn: sqlite3.Connection, answer_id: int) -> UndoResult:
    """Move a gold answer to ``gold_answers_undone`` (history kept, with when it was
    undone), in the caller's transaction: it no longer counts as answered or in the
    annotator's gold accuracy, and routing may serve the item to them again. Their
    earlier answer on the item, if any, is then the one in force."""
    set_id, item_id, annotator, label = conn.execute(
        "SELECT set_id, item_id, annotator, label FROM gold_answers WHERE id = ?", (answer_id,)
    ).fetchone()
    conn.execute(
        "INSERT INTO gold_answers_undone (answer_id, set_id, item_id, annotator, label,"
        " expected, seconds, created_at, undone_at) SELECT id, set_id, item_id, annotator,"
        " label, expected, seconds, created_at, ? FROM gold_answers WHERE id = ?",
        (utc_now(), answer_id),
    )
    conn.execute("DELETE FROM gold_answers WHERE id = ?", (answer_id,))
    before = conn.execute(
        "SELECT label FROM gold_answers WHERE set_id = ? AND item_id = ? AND annotator = ?"
        " ORDER BY id DESC LIMIT 1",
        (set_id, item_id, annotator),
    ).fetchone()
    return UndoResult(answer_id, item_id, label, None if before is None else before[0], True)


def has_undoable(store: Store, annotator: str, role: str) -> bool:
    """Whether the annotator has a vote in ``role`` (or, as an annotator, a gold answer)
    that :func:`undo_last` could take back (anywhere in the store)."""
    gold = (
        " UNION ALL SELECT 1 FROM gold_answers WHERE annotator = :who" if role == ANNOTATOR else ""
    )
    return (
        store._scalar(
            "SELECT 1 FROM votes AS v WHERE annotator = :who AND role = :role"
            " AND undoes IS NULL AND NOT EXISTS (SELECT 1 FROM votes AS u WHERE u.undoes = v.id)"
            + gold
            + " LIMIT 1",
            {"who": annotator, "role": role},
        )
        is not None
    )


def live_votes_for_items(
    store: Store, item_ids: Iterable[int], role: str | None = None, set_id: int | None = None
) -> list[LiveVote]:
    """Live votes on the given items (all roles unless one is named; with ``set_id``,
    only those that count toward that set), each item's in :func:`vote_order`."""
    ids = list(item_ids)
    found: list[LiveVote] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        sql = (
            "SELECT item_id, annotator, role, label, category, note FROM live_votes AS lv"
            f" WHERE item_id IN ({marks})"
        )
        params: list[object] = list(chunk)
        if role is not None:
            sql += " AND role = ?"
            params.append(role)
        if set_id is not None:
            sql += " AND " + in_set_labels("?")
            params.append(set_id)
        found.extend(
            LiveVote(*row)
            for row in store._conn.execute(sql + f" ORDER BY item_id, {vote_order()}", params)
        )
    return found


def live_votes_in_set(store: Store, set_id: int, role: str | None = None) -> list[LiveVote]:
    """Live votes counting toward a set on every item of it, ordered by the item's
    position in the set, then :func:`vote_order`."""
    sql = (
        "SELECT lv.item_id, lv.annotator, lv.role, lv.label, lv.category, lv.note"
        " FROM set_items AS si JOIN live_votes AS lv ON lv.item_id = si.item_id"
        " WHERE si.set_id = ? AND " + in_set_labels("?")
    )
    params: list[object] = [set_id, set_id]
    if role is not None:
        sql += " AND lv.role = ?"
        params.append(role)
    return [
        LiveVote(*row)
        for row in store._conn.execute(sql + f" ORDER BY si.position, {vote_order()}", params)
    ]


def vote_history(store: Store, item_id: int) -> list[dict[str, object]]:
    """Every row ever written for an item, oldest first."""
    cur = store._conn.execute(
        "SELECT id, annotator, role, label, category, note, undoes, origin, created_at"
        " FROM votes WHERE item_id = ? ORDER BY id",
        (item_id,),
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]
