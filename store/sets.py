"""Sets of items (ground truth, audits, queues): their rows, members and sampling pools."""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.connection import Store, utc_now
from store.names import is_control, unprintable
from store.votes import in_set_labels


class SetExistsError(Exception):
    """A set with this name already exists."""


class SetNameError(ValueError):
    """A set name that is blank or holds a character no one could see or type."""


def check_set_name(name: str) -> None:
    """Refuse a name no one could type back or see in a list of sets."""
    if not name.strip():
        raise SetNameError(f"set name {name!r} is blank: give the set a name")
    found = unprintable(name)
    if found is not None:
        kind = "control" if is_control(found) else "invisible"  # 'a\u200bb' lists as 'ab'
        raise SetNameError(
            f"set name {name!a} holds the {kind} character U+{ord(found):04X}:"
            " give a name of printable characters"
        )
    if name != name.strip():
        raise SetNameError(
            f"set name {name!r} starts or ends with a space: give it without, as it would"
            " be typed back"
        )


def folded_name(name: str) -> str:
    """What two set names that read the same share: Unicode compatibility form, case
    folded (``Gt-Eval``, ``gt-eval`` and the full-width ``ｇｔ-ｅｖａｌ`` are one name)."""
    return unicodedata.normalize("NFKC", name).casefold()


def _same_name(conn: sqlite3.Connection, name: str) -> str | None:
    """An existing set's name that reads the same as ``name`` but is not it."""
    folded = folded_name(name)
    for (other,) in conn.execute("SELECT name FROM sets"):
        if other != name and folded_name(other) == folded:
            return str(other)
    return None


@dataclass(frozen=True)
class SetRow:
    id: int
    name: str
    kind: str
    labels: list[str]
    categories: list[str]
    params: dict[str, Any]
    blind: bool
    purpose: str
    votes_per_item: int
    description: str
    created_at: str
    overlap: str = "all"


@dataclass(frozen=True)
class NewSet:
    """What a set is created with; ``params`` records how it was drawn."""

    name: str
    kind: str
    labels: list[str]
    categories: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    blind: bool = True
    purpose: str = "ground-truth"
    votes_per_item: int = 2
    description: str = ""
    overlap: str = "routed"


OVERLAPS = ("routed", "all")


@dataclass(frozen=True)
class Candidate:
    """An item as sampling sees it: where it comes from and what machines said."""

    item_id: int
    key: str
    source: str
    language: str | None
    stars: int | None
    predictions: dict[str, str]


_SET_COLUMNS = (
    "id, name, kind, labels, categories, params, blind, purpose, votes_per_item,"
    " description, created_at, overlap"
)


def _set_row(row: Sequence[Any]) -> SetRow:
    return SetRow(
        id=row[0],
        name=row[1],
        kind=row[2],
        labels=json.loads(row[3]),
        categories=json.loads(row[4]),
        params=json.loads(row[5]),
        blind=bool(row[6]),
        purpose=row[7],
        votes_per_item=row[8],
        description=row[9],
        created_at=row[10],
        overlap=row[11],
    )


def get_set(store: Store, name: str) -> SetRow | None:
    row = store._conn.execute(f"SELECT {_SET_COLUMNS} FROM sets WHERE name = ?", (name,)).fetchone()
    return None if row is None else _set_row(row)


def same_name(store: Store, name: str) -> str | None:
    """The set whose name reads the same as ``name`` (case, Unicode form) but is not it:
    the one a user who typed ``name`` most likely meant."""
    return _same_name(store._conn, name)


def get_set_by_id(store: Store, set_id: int) -> SetRow | None:
    row = store._conn.execute(f"SELECT {_SET_COLUMNS} FROM sets WHERE id = ?", (set_id,)).fetchone()
    return None if row is None else _set_row(row)


def all_sets(store: Store) -> list[SetRow]:
    return [_set_row(r) for r in store._query(f"SELECT {_SET_COLUMNS} FROM sets ORDER BY name")]


def create_set(store: Store, spec: NewSet, item_ids: Iterable[int] = ()) -> SetRow:
    """Create the set and its members in one transaction."""
    check_set_name(spec.name)
    with store.transaction() as conn:
        other = _same_name(conn, spec.name)
        if other is not None:
            raise SetExistsError(
                f"a set named {other!r} already exists: {spec.name!r} differs from it only"
                " in case or Unicode form; choose another name"
            )
        try:
            cur = conn.execute(
                "INSERT INTO sets (name, kind, labels, categories, params, blind, purpose,"
                " votes_per_item, description, created_at, overlap)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    spec.name,
                    spec.kind,
                    json.dumps(spec.labels),
                    json.dumps(spec.categories),
                    json.dumps(spec.params, sort_keys=True),
                    int(spec.blind),
                    spec.purpose,
                    spec.votes_per_item,
                    spec.description,
                    utc_now(),
                    spec.overlap,
                ),
            )
        except sqlite3.IntegrityError as exc:
            raise SetExistsError(f"a set named {spec.name!r} already exists") from exc
        set_id = int(cur.lastrowid or 0)
        conn.execute("INSERT INTO set_counters (set_id) VALUES (?)", (set_id,))
        add_set_items(store, set_id, item_ids)
    found = get_set_by_id(store, set_id)
    assert found is not None
    return found


def update_set(
    store: Store,
    set_id: int,
    *,
    votes_per_item: int | None = None,
    blind: bool | None = None,
    labels: list[str] | None = None,
    overlap: str | None = None,
    params: dict[str, Any] | None = None,
) -> None:
    """Change a set's settings in place (what ``curator set edit`` changes)."""
    changes: dict[str, object] = {}
    if votes_per_item is not None:
        changes["votes_per_item"] = votes_per_item
    if blind is not None:
        changes["blind"] = int(blind)
    if labels is not None:
        changes["labels"] = json.dumps(labels)
    if overlap is not None:
        changes["overlap"] = overlap
    if params is not None:
        changes["params"] = json.dumps(params, sort_keys=True)
    if not changes:
        return
    with store.transaction() as conn:
        conn.execute(
            f"UPDATE sets SET {', '.join(f'{k} = ?' for k in changes)} WHERE id = ?",
            (*changes.values(), set_id),
        )


def add_set_items(store: Store, set_id: int, item_ids: Iterable[int]) -> int:
    """Append items to a set after its last position; members already in it are kept
    where they are. Returns how many were added. Each new member's vote count and
    state, and the set's counters, are brought up to date in the same transaction."""
    from store.routing import track_new_members

    added = 0
    fresh: list[int] = []
    with store.transaction() as conn:
        last = conn.execute(
            "SELECT COALESCE(MAX(position), -1) FROM set_items WHERE set_id = ?", (set_id,)
        ).fetchone()[0]
        for item_id in item_ids:
            cur = conn.execute(
                "INSERT OR IGNORE INTO set_items (set_id, item_id, position) VALUES (?, ?, ?)",
                (set_id, item_id, last + 1),
            )
            if cur.rowcount:
                last += 1
                added += 1
                fresh.append(item_id)
        track_new_members(conn, set_id, fresh)
    return added


def set_item_ids(store: Store, set_id: int) -> list[int]:
    return [
        r[0]
        for r in store._conn.execute(
            "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY position", (set_id,)
        )
    ]


def is_member(store: Store, set_id: int, item_id: int) -> bool:
    return (
        store._conn.execute(
            "SELECT 1 FROM set_items WHERE set_id = ? AND item_id = ?", (set_id, item_id)
        ).fetchone()
        is not None
    )


def set_size(store: Store, set_id: int) -> int:
    return int(store._scalar("SELECT COUNT(*) FROM set_items WHERE set_id = ?", (set_id,)) or 0)


def sets_of_item(store: Store, item_id: int) -> list[SetRow]:
    return [
        _set_row(r)
        for r in store._query(
            f"SELECT {_SET_COLUMNS} FROM sets WHERE id IN"
            " (SELECT set_id FROM set_items WHERE item_id = ?) ORDER BY name",
            (item_id,),
        )
    ]


def sources_in_sets(store: Store, set_ids: Iterable[int]) -> set[str]:
    """The repositories (item sources) that items of these sets come from."""
    found: set[str] = set()
    for set_id in set_ids:
        found.update(
            r[0]
            for r in store._conn.execute(
                "SELECT DISTINCT i.source FROM set_items AS si JOIN items AS i ON i.id = si.item_id"
                " WHERE si.set_id = ?",
                (set_id,),
            )
        )
    return found


def item_languages(store: Store, kind: str) -> list[str]:
    """The languages items of a kind are in, as stored."""
    return [
        str(r[0])
        for r in store._conn.execute(
            "SELECT DISTINCT language FROM items WHERE kind = ? AND language IS NOT NULL"
            " ORDER BY language",
            (kind,),
        )
    ]


def _pool_filter(
    kind: str, within_set: int | None, languages: Sequence[str], params: list[Any]
) -> str:
    """The join and WHERE clause of a draw's pool over ``items AS i`` (its parameters
    appended to ``params``): items of a kind, a set's members, some languages."""
    sql = ""
    if within_set is not None:
        sql += " JOIN set_items AS si ON si.item_id = i.id AND si.set_id = ?"
        params.append(within_set)
    sql += " WHERE i.kind = ?"
    params.append(kind)
    if languages:  # python, Python and PYTHON are one language
        sql += f" AND LOWER(i.language) IN ({','.join('?' * len(languages))})"
        params.extend(language.lower() for language in languages)
    return sql


def candidates(
    store: Store,
    kind: str,
    labelers: Sequence[str] = (),
    within_set: int | None = None,
    languages: Sequence[str] = (),
    unvoted_only: bool = False,
) -> list[Candidate]:
    """Items of a kind (optionally only a set's members, some languages, or the items no
    one has voted on) with each named labeler's latest prediction, ordered by item id so
    a seeded draw is reproducible."""
    sql = (
        "SELECT i.id, i.key, i.source, i.language,"
        " CAST(json_extract(i.provenance, '$.stars') AS INTEGER) FROM items AS i"
    )
    params: list[Any] = []
    sql += _pool_filter(kind, within_set, languages, params)
    if unvoted_only:
        sql += " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = i.id)"
    rows = store._conn.execute(sql + " ORDER BY i.id", params).fetchall()
    predicted = {labeler: latest_predictions(store, labeler) for labeler in labelers}
    return [
        Candidate(
            item_id=r[0],
            key=r[1],
            source=r[2],
            language=r[3],
            stars=r[4],
            predictions={
                labeler: by_item[r[0]][0]
                for labeler, by_item in predicted.items()
                if r[0] in by_item
            },
        )
        for r in rows
    ]


_ITEM_COLUMNS = {
    "language": "i.language",
    "source": "i.source",
    "stars": "CAST(json_extract(i.provenance, '$.stars') AS INTEGER)",
}


def pool_groups(
    store: Store,
    kind: str,
    columns: Sequence[str | tuple[str, ...]] = (),
    within_set: int | None = None,
    languages: Sequence[str] = (),
    without_sources_of: Sequence[int] = (),
    unvoted_only: bool = False,
) -> list[tuple[tuple[Any, ...], list[int]]]:
    """The items :func:`candidates` gives (less every item from a repository that items
    of the sets ``without_sources_of`` come from; with ``unvoted_only``, only the items
    no one has voted on) grouped by their values of
    ``columns``: ``(values, item ids in item order)``. A column is ``language``,
    ``source`` or ``stars`` (as a :class:`Candidate` has them), or labeler names, whose
    value is the latest label from the first of them that predicted the item (None if
    none did).

    One query, grouped by SQLite, and no object per item but its id."""
    selected: list[str] = []
    params: list[Any] = []
    for column in columns:
        if isinstance(column, str):
            selected.append(_ITEM_COLUMNS[column])
            continue
        latest = [
            "(SELECT p.label FROM predictions AS p WHERE p.labeler = ? AND p.item_id = i.id"
            " ORDER BY p.id DESC LIMIT 1)"
        ] * len(column)
        if len(latest) < 2:
            selected.append(latest[0] if latest else "NULL")
        else:
            selected.append(f"COALESCE({', '.join(latest)})")
        params.extend(column)
    # items in id order (a scan of the table, not of an index on kind), so the latest
    # labels are read in (labeler, item) index order: three times faster than in the
    # order of an index on (kind, ...) on a 200,000-item store
    sql = f"SELECT {', '.join([*selected, 'group_concat(i.id)'])} FROM items AS i NOT INDEXED"
    sql += _pool_filter(kind, within_set, languages, params)
    if without_sources_of:
        sql += (
            " AND i.source NOT IN (SELECT x.source FROM set_items AS sx"
            " JOIN items AS x ON x.id = sx.item_id"
            f" WHERE sx.set_id IN ({','.join('?' * len(without_sources_of))}))"
        )
        params.extend(without_sources_of)
    if unvoted_only:
        sql += " AND NOT EXISTS (SELECT 1 FROM live_votes AS lv WHERE lv.item_id = i.id)"
    if selected:
        sql += f" GROUP BY {', '.join(str(n) for n in range(1, len(selected) + 1))}"
    cursor = store._conn.cursor()
    cursor.row_factory = None
    return [
        (tuple(r[:-1]), sorted(map(int, r[-1].split(","))))
        for r in cursor.execute(sql, params)
        if r[-1] is not None  # no GROUP BY: one row, NULL when no item qualifies
    ]


def latest_predictions(store: Store, labeler: str) -> dict[int, tuple[str, float | None]]:
    """Each item's most recent (label, score) from one labeler."""
    return {
        r[0]: (r[1], r[2])
        for r in store._conn.execute(
            "SELECT item_id, label, score FROM predictions WHERE id IN"
            " (SELECT MAX(id) FROM predictions WHERE labeler = ? GROUP BY item_id)",
            (labeler,),
        )
    }


def labeler_versions(store: Store, name: str) -> list[str]:
    """Stored labeler names ``name@N``, newest version last."""
    # every name starting NAME@ sorts from NAME@ up to NAME followed by the character
    # after @ ('A'): a range of the labeler index, read one name at a time (a seek each)
    # rather than row by row (one row per prediction)
    found: list[str] = []
    sql = "SELECT MIN(labeler) FROM predictions WHERE labeler >= ? AND labeler < ?"
    after = name + "@"
    while (label := store._conn.execute(sql, (after, name + "A")).fetchone()[0]) is not None:
        found.append(label)
        sql = "SELECT MIN(labeler) FROM predictions WHERE labeler > ? AND labeler < ?"
        after = label

    def version(label: str) -> tuple[int, str]:
        tail = label.rsplit("@", 1)[1]
        return (int(tail), label) if tail.isdecimal() else (-1, label)

    return sorted(found, key=version)


def queue_page(
    store: Store, set_id: int, annotator: str, after_position: int = -1, limit: int = 50
) -> list[tuple[int, int]]:
    """(position, item id) of the set's items the annotator has not voted on yet in this
    set, after a position: keyset pagination over the (set, position) index, never the
    whole set."""
    return [
        (r[0], r[1])
        for r in store._conn.execute(
            "SELECT si.position, si.item_id FROM set_items AS si"
            " WHERE si.set_id = :set AND si.position > :after AND NOT EXISTS ("
            "  SELECT 1 FROM live_votes AS lv WHERE lv.item_id = si.item_id"
            f"  AND lv.annotator = :who AND lv.role = 'annotator' AND {in_set_labels(':set')})"
            " ORDER BY si.position LIMIT :limit",
            {"set": set_id, "after": after_position, "who": annotator, "limit": limit},
        )
    ]


def set_progress(store: Store, set_id: int) -> dict[str, int]:
    """Items, items with at least one annotator vote, and live annotator votes in a set
    (votes that count toward it)."""
    row = store._conn.execute(
        "SELECT COUNT(DISTINCT si.item_id), COUNT(DISTINCT lv.item_id), COUNT(lv.item_id)"
        " FROM set_items AS si"
        " LEFT JOIN live_votes AS lv ON lv.item_id = si.item_id AND lv.role = 'annotator'"
        f" AND {in_set_labels(':set')} WHERE si.set_id = :set",
        {"set": set_id},
    ).fetchone()
    return {"items": int(row[0]), "voted_items": int(row[1]), "votes": int(row[2])}


def add_set_labels(store: Store, set_id: int, labels: Iterable[str]) -> list[str]:
    """Widen a set's labels with ``labels`` (kept in order after the existing ones);
    returns the labels now allowed. Live votes with a new label now count toward the
    set, so its members and counters are restated."""
    from store.routing import restate_set

    with store.transaction() as conn:
        row = conn.execute("SELECT labels FROM sets WHERE id = ?", (set_id,)).fetchone()
        current: list[str] = json.loads(row[0]) if row else []
        widened = [*current, *(x for x in dict.fromkeys(labels) if x not in current)]
        if row is not None and widened != current:
            conn.execute("UPDATE sets SET labels = ? WHERE id = ?", (json.dumps(widened), set_id))
            restate_set(conn, set_id)
    return widened
