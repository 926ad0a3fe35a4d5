"""Routing state kept beside every set: each member's vote count and state, the per-set
counters the home screen reads, annotators' claims (leases) on items, timings, and
hidden gold items with the answers given on them.

Everything here is written in the transaction of the change that causes it: a vote
(``store.votes.append_votes`` calls :func:`track_votes`), a new member
(``store.sets.add_set_items`` calls :func:`track_new_members`), a claim. A set whose
counters row is missing (a set made before this schema) is brought up to date once by
:func:`rebuild_set`, as is one whose labels or votes per item change.

Only live votes that count toward a set (``store.votes.counts_toward``: a label of the
set, or skip) enter its members' states and its counters.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from store.connection import Store
from store.decisions import decide
from store.votes import ANNOTATOR, counts_toward, in_set_labels, vote_order

STATES = ("unanimous", "majority", "adjudicated", "conflict", "pending")
_CHUNK = 500


@dataclass(frozen=True)
class SetCounters:
    """A set's figures as the counters hold them (no scan of the set)."""

    items: int
    voted_items: int
    votes: int
    unanimous: int
    majority: int
    adjudicated: int
    conflict: int
    pending: int

    @property
    def settled(self) -> int:
        return self.unanimous + self.majority + self.adjudicated

    def states(self) -> dict[str, int]:
        return {s: getattr(self, s) for s in STATES}


@dataclass(frozen=True)
class GoldItem:
    item_id: int
    label: str
    position: int


@dataclass(frozen=True)
class GoldAnswer:
    annotator: str
    item_id: int
    label: str
    expected: str
    seconds: float | None
    created_at: str


@dataclass(frozen=True)
class TimedVote:
    """One of an annotator's votes in a set, in order, with the seconds it took (None
    when the item was not claimed first)."""

    vote_id: int
    item_id: int
    label: str | None
    seconds: float | None
    created_at: str


# State and counters ---------------------------------------------------------------------


@dataclass(frozen=True)
class VoteChange:
    """One live vote moved: its label before and after (None: no live vote)."""

    item_id: int
    annotator: str
    role: str
    old: str | None
    new: str | None

    @property
    def withdrawn(self) -> bool:
        """An annotator's live vote taken away (an undo back to no vote)."""
        return self.role == ANNOTATOR and self.old is not None and self.new is None

    def count_change(self, labels: Sequence[str]) -> int:
        """How the annotator's count of votes in a set with ``labels`` moves."""
        if self.role != ANNOTATOR:
            return 0
        return int(counts_toward(self.new, labels)) - int(counts_toward(self.old, labels))


class _Deltas:
    """Counter changes gathered over a batch, written once per set."""

    def __init__(self) -> None:
        self.sets: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.annotators: dict[tuple[int, str], int] = defaultdict(int)

    def write(self, conn: sqlite3.Connection) -> None:
        columns = ("items", "voted_items", "votes", *STATES)
        for set_id, delta in self.sets.items():
            if not any(delta.values()):
                continue
            conn.execute(
                "UPDATE set_counters SET "
                + ", ".join(f"{c} = {c} + ?" for c in columns)
                + " WHERE set_id = ?",
                (*(delta.get(c, 0) for c in columns), set_id),
            )
        for (set_id, annotator), n in self.annotators.items():
            if n:
                conn.execute(
                    "INSERT INTO set_annotator_counts (set_id, annotator, votes) VALUES (?, ?, ?)"
                    " ON CONFLICT (set_id, annotator) DO UPDATE SET votes = votes + excluded.votes",
                    (set_id, annotator, n),
                )


def _live_by_item(
    conn: sqlite3.Connection, set_id: int, item_ids: Sequence[int]
) -> dict[int, tuple[dict[str, str], tuple[str, str] | None]]:
    """Each item's live votes that count toward the set: annotators' labels, and the
    adjudication if any."""
    found: dict[int, tuple[dict[str, str], tuple[str, str] | None]] = {}
    for start in range(0, len(item_ids), _CHUNK):
        chunk = item_ids[start : start + _CHUNK]
        rows = conn.execute(
            "SELECT item_id, annotator, role, label FROM live_votes AS lv"
            f" WHERE item_id IN ({','.join('?' * len(chunk))}) AND {in_set_labels('?')}"
            f" ORDER BY item_id, {vote_order()}",
            (*chunk, set_id),
        )
        for item_id, annotator, role, label in rows:
            votes, adjudication = found.get(item_id, ({}, None))
            if role == "annotator":
                votes[annotator] = label
            else:
                adjudication = (annotator, label)  # the latest comes last
            found[item_id] = (votes, adjudication)
    return found


def _restate(
    conn: sqlite3.Connection,
    set_id: int,
    required: int,
    members: Sequence[tuple[int, int, str]],
    deltas: _Deltas,
) -> None:
    """Recompute the state of members given as (item id, old votes, old status)."""
    live = _live_by_item(conn, set_id, [m[0] for m in members])
    updates = []
    delta = deltas.sets[set_id]
    for item_id, old_votes, old_status in members:
        votes, adjudication = live.get(item_id, ({}, None))
        status = decide(item_id, votes, required, adjudication=adjudication).status
        if (len(votes), status) == (old_votes, old_status):
            continue
        updates.append((len(votes), status, set_id, item_id))
        delta["votes"] += len(votes) - old_votes
        delta["voted_items"] += int(len(votes) > 0) - int(old_votes > 0)
        delta[old_status] -= 1
        delta[status] += 1
    conn.executemany(
        "UPDATE set_items SET votes = ?, status = ? WHERE set_id = ? AND item_id = ?", updates
    )


def _tracked_sets(
    conn: sqlite3.Connection, item_id: int
) -> list[tuple[int, int, list[str], int, str]]:
    """(set id, votes per item, labels, old votes, old status) of the tracked sets
    holding the item."""
    return [
        (set_id, required, json.loads(labels), votes, status)
        for set_id, required, labels, votes, status in conn.execute(
            "SELECT si.set_id, s.votes_per_item, s.labels, si.votes, si.status"
            " FROM set_items AS si JOIN set_counters AS c ON c.set_id = si.set_id"
            " JOIN sets AS s ON s.id = si.set_id WHERE si.item_id = ?",
            (item_id,),
        )
    ]


def track_votes(conn: sqlite3.Connection, changed: Sequence[VoteChange]) -> None:
    """After live votes moved: restates the items in every tracked set holding them,
    moves the counters (an annotator's count in a set follows whether their old and new
    labels count toward it), and ends the voters' claims on those items."""
    deltas = _Deltas()
    by_item: dict[int, list[VoteChange]] = defaultdict(list)
    for change in changed:
        by_item[change.item_id].append(change)
    for item_id, changes in by_item.items():
        for change in changes:
            if not change.withdrawn:
                conn.execute(
                    "DELETE FROM claims WHERE item_id = ? AND annotator = ?",
                    (item_id, change.annotator),
                )
        for set_id, required, labels, old_votes, old_status in _tracked_sets(conn, item_id):
            _restate(conn, set_id, required, [(item_id, old_votes, old_status)], deltas)
            for change in changes:
                deltas.annotators[(set_id, change.annotator)] += change.count_change(labels)
    deltas.write(conn)


def track_new_members(conn: sqlite3.Connection, set_id: int, item_ids: Sequence[int]) -> None:
    """New members of a tracked set: count them and state those that already have votes."""
    row = conn.execute(
        "SELECT s.votes_per_item FROM sets AS s JOIN set_counters AS c ON c.set_id = s.id"
        " WHERE s.id = ?",
        (set_id,),
    ).fetchone()
    if row is None or not item_ids:
        return
    deltas = _Deltas()
    deltas.sets[set_id]["items"] += len(item_ids)
    deltas.sets[set_id]["pending"] += len(item_ids)
    _add_members(conn, set_id, row[0], list(item_ids), deltas)
    deltas.write(conn)


def _add_members(
    conn: sqlite3.Connection, set_id: int, required: int, item_ids: list[int], deltas: _Deltas
) -> None:
    for start in range(0, len(item_ids), _CHUNK):
        chunk = item_ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        counted = in_set_labels("?")
        voted = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT item_id FROM live_votes AS lv"
                f" WHERE item_id IN ({marks}) AND {counted}",
                (*chunk, set_id),
            )
        ]
        _restate(conn, set_id, required, [(i, 0, "pending") for i in voted], deltas)
        for annotator, n in conn.execute(
            "SELECT annotator, COUNT(*) FROM live_votes AS lv WHERE role = 'annotator'"
            f" AND item_id IN ({marks}) AND {counted} GROUP BY annotator",
            (*chunk, set_id),
        ):
            deltas.annotators[(set_id, annotator)] += n


def members_in_state(store: Store, set_id: int, status: str) -> list[int]:
    """Item ids of a tracked set's members in one state (e.g. conflict), in set order,
    through the routing index (no scan of the set)."""
    return [
        r[0]
        for r in store._query(
            "SELECT item_id FROM set_items WHERE set_id = ? AND status = ? ORDER BY position",
            (set_id, status),
        )
    ]


def is_tracked(store: Store, set_id: int) -> bool:
    return store._scalar("SELECT 1 FROM set_counters WHERE set_id = ?", (set_id,)) is not None


def rebuild_set(store: Store, set_id: int) -> None:
    """Recompute every member's state and the set's counters from the live votes that
    count toward it (a set made before routing existed, or one whose votes per item or
    labels changed)."""
    with store.transaction() as conn:
        restate_set(conn, set_id)


def restate_set(conn: sqlite3.Connection, set_id: int) -> None:
    """:func:`rebuild_set` inside the caller's transaction (a migration's)."""
    (required,) = conn.execute("SELECT votes_per_item FROM sets WHERE id = ?", (set_id,)).fetchone()
    conn.execute("DELETE FROM set_counters WHERE set_id = ?", (set_id,))
    conn.execute("DELETE FROM set_annotator_counts WHERE set_id = ?", (set_id,))
    conn.execute(
        "UPDATE set_items SET votes = 0, status = 'pending' WHERE set_id = ?"
        " AND (votes <> 0 OR status <> 'pending')",
        (set_id,),
    )
    members = [
        r[0]
        for r in conn.execute(
            "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY position", (set_id,)
        )
    ]
    conn.execute(
        "INSERT INTO set_counters (set_id, items, pending) VALUES (?, ?, ?)",
        (set_id, len(members), len(members)),
    )
    deltas = _Deltas()
    _add_members(conn, set_id, required, members, deltas)
    deltas.write(conn)


def set_counters(store: Store, set_id: int) -> SetCounters | None:
    row = store._conn.execute(
        "SELECT items, voted_items, votes, unanimous, majority, adjudicated, conflict, pending"
        " FROM set_counters WHERE set_id = ?",
        (set_id,),
    ).fetchone()
    return None if row is None else SetCounters(*row)


def annotator_count(store: Store, set_id: int, annotator: str) -> int:
    """The annotator's live votes on the set's items, from the counters."""
    value = store._scalar(
        "SELECT votes FROM set_annotator_counts WHERE set_id = ? AND annotator = ?",
        (set_id, annotator),
    )
    return int(value or 0)


def annotator_to_do(store: Store, set_id: int, annotator: str, required: int) -> int:
    """Members of a routed set routing could still serve the annotator: pending, below
    ``required`` votes and without the annotator's own vote in this set (claims aside,
    since they lapse)."""
    value = store._scalar(
        "SELECT COUNT(*) FROM set_items AS si"
        " WHERE si.set_id = :set AND si.status = 'pending' AND si.votes < :need"
        " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = si.item_id"
        f"  AND lv.annotator = :who AND lv.role = 'annotator' AND {in_set_labels(':set')})",
        {"set": set_id, "who": annotator, "need": required},
    )
    return int(value or 0)


def member_state(store: Store, set_id: int, item_id: int) -> tuple[int, str] | None:
    row = store._conn.execute(
        "SELECT votes, status FROM set_items WHERE set_id = ? AND item_id = ?", (set_id, item_id)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def current_claim(store: Store, set_id: int, annotator: str, now: str) -> int | None:
    """The item the annotator holds an unexpired claim on in the set, if any."""
    value = store._scalar(
        "SELECT item_id FROM claims WHERE set_id = ? AND annotator = ? AND expires_at > ?"
        " ORDER BY claimed_at LIMIT 1",
        (set_id, annotator, now),
    )
    return None if value is None else int(value)


def routed_candidate(
    store: Store, set_id: int, annotator: str, required: int, now: str
) -> tuple[int, int] | None:
    """(position, item id) of the next item to serve the annotator: a pending item they
    have not voted on in this set whose votes plus others' live claims are below
    ``required``, the fewest votes first, then set order (items reach N votes before any
    gets N+1)."""
    row = store._conn.execute(
        "SELECT si.position, si.item_id FROM set_items AS si"
        " WHERE si.set_id = :set AND si.status = 'pending' AND si.votes < :need"
        " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = si.item_id"
        f"  AND lv.annotator = :who AND lv.role = 'annotator' AND {in_set_labels(':set')})"
        " AND si.votes + (SELECT COUNT(*) FROM claims AS c WHERE c.set_id = si.set_id"
        "  AND c.item_id = si.item_id AND c.annotator <> :who AND c.expires_at > :now) < :need"
        " ORDER BY si.votes, si.position LIMIT 1",
        {"set": set_id, "who": annotator, "need": required, "now": now},
    ).fetchone()
    return None if row is None else (row[0], row[1])


def others_claims(
    store: Store,
    set_id: int,
    item_id: int,
    annotator: str,
    now: str,
    before: str | None = None,
) -> int:
    """Unexpired claims other annotators hold on an item of the set; with ``before`` (the
    time the annotator's own live claim began) only those taken earlier, ties broken by
    name: the first claimers of an item that has more live claims than free slots (its
    votes per item lowered, or votes cast past routing) keep theirs."""
    sql = (
        "SELECT COUNT(*) FROM claims WHERE set_id = :set AND item_id = :item"
        " AND annotator <> :who AND expires_at > :now"
    )
    if before is not None:
        sql += " AND (claimed_at < :before OR (claimed_at = :before AND annotator < :who))"
    params = {"set": set_id, "item": item_id, "who": annotator, "now": now, "before": before}
    return int(store._scalar(sql, params) or 0)


def put_claim(
    store: Store, set_id: int, item_id: int, annotator: str, now: str, expires: str
) -> None:
    """Hold (or renew) the annotator's claim on an item; keeps the first claim time."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO claims (set_id, item_id, annotator, claimed_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (set_id, item_id, annotator)"
            " DO UPDATE SET expires_at = excluded.expires_at,"
            " claimed_at = CASE WHEN claims.expires_at > excluded.claimed_at"
            "  THEN claims.claimed_at ELSE excluded.claimed_at END",
            (set_id, item_id, annotator, now, expires),
        )


def drop_expired_claims(store: Store, set_id: int, now: str) -> int:
    with store.transaction() as conn:
        return conn.execute(
            "DELETE FROM claims WHERE set_id = ? AND expires_at <= ?", (set_id, now)
        ).rowcount


def drop_claim(store: Store, set_id: int, item_id: int, annotator: str) -> None:
    """End one claim of the annotator (an item that filled up or settled meanwhile)."""
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM claims WHERE set_id = ? AND item_id = ? AND annotator = ?",
            (set_id, item_id, annotator),
        )


def release_claims(store: Store, set_id: int, annotator: str) -> int:
    with store.transaction() as conn:
        return conn.execute(
            "DELETE FROM claims WHERE set_id = ? AND annotator = ?", (set_id, annotator)
        ).rowcount


def claimed_at(store: Store, set_id: int, item_id: int, annotator: str) -> str | None:
    value = store._scalar(
        "SELECT claimed_at FROM claims WHERE set_id = ? AND item_id = ? AND annotator = ?",
        (set_id, item_id, annotator),
    )
    return None if value is None else str(value)


def claim_expires(store: Store, set_id: int, item_id: int, annotator: str) -> str | None:
    value = store._scalar(
        "SELECT expires_at FROM claims WHERE set_id = ? AND item_id = ? AND annotator = ?",
        (set_id, item_id, annotator),
    )
    return None if value is None else str(value)


def record_timing(store: Store, vote_id: int, set_id: int, annotator: str, seconds: float) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR REPLACE INTO vote_timings (vote_id, set_id, annotator, seconds)"
            " VALUES (?, ?, ?, ?)",
            (vote_id, set_id, annotator, seconds),
        )


def timed_votes(store: Store, set_id: int) -> dict[str, list[TimedVote]]:
    """Each annotator's annotator-role votes on the set's items with a label that counts
    toward it, oldest first, undo rows aside, with their timings."""
    found: dict[str, list[TimedVote]] = defaultdict(list)
    for r in store._query(
        "SELECT v.annotator, v.id, v.item_id, v.label, t.seconds, v.created_at FROM votes AS v"
        " JOIN set_items AS si ON si.item_id = v.item_id AND si.set_id = :set"
        " LEFT JOIN vote_timings AS t ON t.vote_id = v.id"
        " WHERE v.role = 'annotator' AND v.undoes IS NULL"
        f" AND (v.label IS NULL OR {in_set_labels(':set', 'v')})"
        " AND NOT EXISTS (SELECT 1 FROM votes AS u WHERE u.undoes = v.id) ORDER BY v.id",
        {"set": set_id},
    ):
        found[r[0]].append(TimedVote(r[1], r[2], r[3], r[4], r[5]))
    return dict(found)


# Gold items ---------------------------------------------------------------------------


def add_gold_items(
    store: Store, set_id: int, items: Iterable[tuple[int, str]], from_set: str
) -> int:
    """Add hidden known-answer items (item id, expected label); returns how many were new."""
    added = 0
    with store.transaction() as conn:
        last = conn.execute(
            "SELECT COALESCE(MAX(position), -1) FROM gold_items WHERE set_id = ?", (set_id,)
        ).fetchone()[0]
        for item_id, label in items:
            cur = conn.execute(
                "INSERT OR IGNORE INTO gold_items (set_id, item_id, label, from_set, position)"
                " VALUES (?, ?, ?, ?, ?)",
                (set_id, item_id, label, from_set, last + 1),
            )
            if cur.rowcount:
                last += 1
                added += 1
    return added


# A gold item that later became a member of its set (``curator import items --set``) is
# a member: it is served, voted on and counted like one, never as hidden gold.
_NOT_MEMBER = (
    " AND NOT EXISTS (SELECT 1 FROM set_items AS si WHERE si.set_id = g.set_id"
    " AND si.item_id = g.item_id)"
)


def gold_item(store: Store, set_id: int, item_id: int) -> GoldItem | None:
    """The item as a hidden gold item of the set, or None (not gold, or now a member)."""
    row = store._conn.execute(
        "SELECT item_id, label, position FROM gold_items AS g WHERE set_id = ? AND item_id = ?"
        + _NOT_MEMBER,
        (set_id, item_id),
    ).fetchone()
    return None if row is None else GoldItem(*row)


def gold_claim_sets(store: Store, item_id: int, annotator: str) -> list[int]:
    """The sets (by name) in which the item is hidden gold and the annotator holds its
    claim, expired or not: the sets that served it to them as gold."""
    return [
        int(r[0])
        for r in store._conn.execute(
            "SELECT g.set_id FROM gold_items AS g JOIN claims AS c ON c.set_id = g.set_id"
            " AND c.item_id = g.item_id AND c.annotator = ?"
            " JOIN sets AS s ON s.id = g.set_id WHERE g.item_id = ?"
            + _NOT_MEMBER
            + " ORDER BY s.name",
            (annotator, item_id),
        )
    ]


def gold_labels(store: Store, set_id: int) -> set[str]:
    """The known answers of the set's gold items."""
    return {
        str(r[0])
        for r in store._query("SELECT DISTINCT label FROM gold_items WHERE set_id = ?", (set_id,))
    }


def gold_count(store: Store, set_id: int) -> int:
    """Hidden gold items of the set (not those that became members)."""
    return int(
        store._scalar(
            "SELECT COUNT(*) FROM gold_items AS g WHERE set_id = ?" + _NOT_MEMBER, (set_id,)
        )
        or 0
    )


def gold_answered(store: Store, set_id: int, annotator: str) -> int:
    return int(
        store._scalar(
            "SELECT COUNT(DISTINCT item_id) FROM gold_answers WHERE set_id = ? AND annotator = ?",
            (set_id, annotator),
        )
        or 0
    )


def next_gold(store: Store, set_id: int, annotator: str) -> GoldItem | None:
    """The first gold item the annotator has neither answered nor voted on elsewhere."""
    row = store._conn.execute(
        "SELECT g.item_id, g.label, g.position FROM gold_items AS g WHERE g.set_id = ?"
        " AND NOT EXISTS (SELECT 1 FROM gold_answers AS a WHERE a.set_id = g.set_id"
        "  AND a.item_id = g.item_id AND a.annotator = ?)"
        " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = g.item_id"
        "  AND lv.annotator = ?)" + _NOT_MEMBER + " ORDER BY g.position LIMIT 1",
        (set_id, annotator, annotator),
    ).fetchone()
    return None if row is None else GoldItem(*row)


def add_gold_answer(
    store: Store,
    set_id: int,
    item_id: int,
    annotator: str,
    label: str,
    expected: str,
    seconds: float | None,
    now: str,
) -> int:
    with store.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO gold_answers (set_id, item_id, annotator, label, expected, seconds,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (set_id, item_id, annotator, label, expected, seconds, now),
        )
        conn.execute(
            "DELETE FROM claims WHERE set_id = ? AND item_id = ? AND annotator = ?",
            (set_id, item_id, annotator),
        )
        return int(cur.lastrowid or 0)


def gold_answers(store: Store, set_id: int) -> list[GoldAnswer]:
    return [
        GoldAnswer(*r)
        for r in store._query(
            "SELECT annotator, item_id, label, expected, seconds, created_at FROM gold_answers"
            " WHERE set_id = ? ORDER BY id",
            (set_id,),
        )
    ]
