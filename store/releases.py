"""Release reads and rows: items of one kind streamed with their payloads, and ``releases``.

The streams are ordered by the natural key (``items.key``), which the ``(kind, key)``
unique index serves without a sort, so a million records come out one at a time in an
order that does not depend on row ids (a store rebuilt from a release gives the same
order). JSON columns are decoded; the caller decides what a record looks like.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from store.commits import COMMIT_INSERT, commit_values, find_duplicate
from store.connection import Store, utc_now
from store.items import insert_item, known_item_id, link_duplicate
from store.records import CommitRow, SaveResult

_ITEM_COLUMNS = (
    "i.id AS item_id, i.kind, i.key, i.source, i.path, i.language, i.dedup_hash, i.provenance"
)

_PAYLOADS: dict[str, tuple[str, str]] = {
    "commit": (
        "c.repo, c.sha, c.branch, c.author_date, c.message, c.diff, c.file, c.files,"
        " c.functions, c.code_before, c.code_after, c.added, c.deleted, c.model_input,"
        " c.function_md5, c.diff_hash",
        "JOIN commits AS c ON c.item_id = i.id",
    ),
    "kernel": (
        "k.source_file, k.kernel_name, k.origin, k.original_source, k.normalized_source,"
        " k.normalized_hash, k.shim_needed, k.shim_names, k.filter_status, k.instructions,"
        " k.message, k.features, k.verdict, k.check_details",
        "JOIN kernels AS k ON k.item_id = i.id",
    ),
    "ir": (
        "m.structural_hash, m.project, m.license, m.input_format, m.compile_command, m.text,"
        " m.bitcode, m.text_bytes, m.bitcode_bytes, m.tokens, m.functions, m.declarations,"
        " m.globals, m.basic_blocks, m.instructions, m.opcodes,"
        " (SELECT n.input_sha256 FROM ir_inputs AS n WHERE n.item_id = i.id"
        "  AND n.status = 'stored' ORDER BY n.id LIMIT 1) AS input_sha256",
        "JOIN ir_modules AS m ON m.item_id = i.id",
    ),
}

_JSON_COLUMNS = (
    "provenance",
    "files",
    "functions",
    "shim_names",
    "features",
    "check_details",
    "opcodes",
)

RELEASE_KINDS = tuple(_PAYLOADS)


@dataclass(frozen=True)
class ItemFilter:
    """Which items of a kind a release takes.

    ``labeler``: join each item's latest prediction from it (``pred_label``,
    ``pred_score``); with ``predicted_only`` items without one are left out, and with
    ``min_score`` also those scored lower (or not scored). ``audited_only``: only items
    that belong to a set whose purpose is ``audit``; ``set_ids``: only items of these sets.
    """

    kind: str
    audited_only: bool = False
    set_ids: tuple[int, ...] = ()
    labeler: str | None = None
    predicted_only: bool = False
    min_score: float | None = None


def _select(flt: ItemFilter, columns: str) -> tuple[str, list[Any]]:
    if flt.kind not in _PAYLOADS:
        raise ValueError(f"no release format for kind {flt.kind!r}")
    join = _PAYLOADS[flt.kind][1]
    params: list[Any] = []
    prediction = ""
    if flt.labeler is not None:
        columns += ", p.label AS pred_label, p.score AS pred_score"
        prediction = (
            " LEFT JOIN predictions AS p ON p.id = (SELECT MAX(q.id) FROM predictions AS q"
            " WHERE q.item_id = i.id AND q.labeler = ?)"
        )
        params.append(flt.labeler)
    sql = f"SELECT {columns} FROM items AS i {join}{prediction} WHERE i.kind = ?"
    params.append(flt.kind)
    if flt.audited_only:
        sql += (
            " AND EXISTS (SELECT 1 FROM set_items AS si JOIN sets AS s ON s.id = si.set_id"
            " WHERE si.item_id = i.id AND s.purpose = 'audit')"
        )
    if flt.set_ids:
        marks = ",".join("?" * len(flt.set_ids))
        sql += (
            " AND EXISTS (SELECT 1 FROM set_items AS si"
            f" WHERE si.item_id = i.id AND si.set_id IN ({marks}))"
        )
        params.extend(flt.set_ids)
    if flt.labeler is not None and flt.predicted_only:
        sql += " AND p.id IS NOT NULL"
        if flt.min_score is not None:
            sql += " AND p.score >= ?"
            params.append(flt.min_score)
    return sql + " ORDER BY i.key", params


_EMPTY_JSON: dict[str, Any] = {"[]": [], "{}": {}}


def _decode(names: list[str], json_at: list[int], row: tuple[Any, ...]) -> dict[str, Any]:
    values = list(row)
    for index in json_at:
        value = values[index]
        if isinstance(value, str):
            empty = _EMPTY_JSON.get(value)
            values[index] = json.loads(value) if empty is None else type(empty)()
    return dict(zip(names, values, strict=True))


class UnreadableItemError(Exception):
    """A stored row that SQLite cannot hand over (e.g. text that is not UTF-8)."""

    def __init__(self, kind: str, key: str | None, detail: str) -> None:
        super().__init__(f"{kind} item {key!r}: stored data cannot be read ({detail})")
        self.kind = kind
        self.key = key


def stream_items(store: Store, flt: ItemFilter) -> Iterator[dict[str, Any]]:
    """Every item the filter takes, with its kind's payload columns, in key order.

    A row that cannot be read stops the stream with :class:`UnreadableItemError`
    naming that item's key.
    """
    sql, params = _select(flt, f"{_ITEM_COLUMNS}, {_PAYLOADS[flt.kind][0]}")
    cursor = store._conn.cursor()
    cursor.row_factory = None
    last: str | None = None
    try:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        key_at = names.index("key")
        json_at = [i for i, name in enumerate(names) if name in _JSON_COLUMNS]
        while True:
            try:
                row = cursor.fetchone()
            except sqlite3.OperationalError as exc:
                raise UnreadableItemError(flt.kind, _key_after(store, flt, last), str(exc)) from exc
            if row is None:
                return
            last = row[key_at]
            yield _decode(names, json_at, row)
    finally:
        cursor.close()


def _key_after(store: Store, flt: ItemFilter, last: str | None) -> str | None:
    """The key of the item the filter takes after ``last`` (the first one if None)."""
    sql, params = _select(flt, "i.key")
    if last is not None:
        sql = sql.replace(" ORDER BY i.key", " AND i.key > ? ORDER BY i.key")
        params.append(last)
    row = store._conn.execute(sql + " LIMIT 1", params).fetchone()
    return None if row is None else str(row[0])


def stream_item_sources(store: Store, flt: ItemFilter) -> Iterator[dict[str, Any]]:
    """The same items as :func:`stream_items`, with only id, key, source and prediction."""
    sql, params = _select(flt, "i.id AS item_id, i.key, i.source")
    cursor = store._conn.cursor()
    try:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(1024):
            for row in rows:
                yield dict(zip(row.keys(), tuple(row), strict=True))
    finally:
        cursor.close()


def kinds_with_items(store: Store) -> list[str]:
    return [r[0] for r in store._query("SELECT DISTINCT kind FROM items ORDER BY kind")]


def live_votes_of_kind(store: Store, kind: str) -> Iterator[tuple[int, str, str, str, str | None]]:
    """(item id, annotator, role, label, category) of every live vote on items of a kind:
    each item's adjudications first, oldest first (the one in force last, as
    :func:`store.votes.vote_order` has it), then its annotators' votes by name."""
    yield from store._conn.execute(
        "SELECT lv.item_id, lv.annotator, lv.role, lv.label, lv.category FROM live_votes AS lv"
        " JOIN items AS i ON i.id = lv.item_id WHERE i.kind = ?"
        " ORDER BY lv.item_id, lv.role,"
        " CASE WHEN lv.role = 'adjudicator' THEN lv.vote_id END, lv.annotator",
        (kind,),
    )


def stored_commit_identities(
    store: Store, keys: list[str]
) -> dict[str, tuple[str, str | None, str | None]]:
    """Key -> (source, sha, diff hash) of the stored commits among ``keys``."""
    found: dict[str, tuple[str, str | None, str | None]] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for key, source, sha, diff_hash in store._conn.execute(
            "SELECT i.key, i.source, c.sha, c.diff_hash FROM items AS i"
            " JOIN commits AS c ON c.item_id = i.id"
            f" WHERE i.kind = 'commit' AND i.key IN ({marks})",
            chunk,
        ):
            found[key] = (source, sha, diff_hash)
    return found


def latest_prediction(store: Store, item_id: int, labeler: str) -> tuple[str, float | None] | None:
    row = store._conn.execute(
        "SELECT label, score FROM predictions WHERE item_id = ? AND labeler = ?"
        " ORDER BY id DESC LIMIT 1",
        (item_id, labeler),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def duplicate_counts(store: Store, kind: str) -> dict[str, int]:
    """Duplicates linked to stored items of a kind, by what matched."""
    return {
        str(m): int(n)
        for m, n in store._query(
            "SELECT matched_on, COUNT(*) FROM duplicates WHERE kind = ? GROUP BY matched_on"
            " ORDER BY matched_on",
            (kind,),
        )
    }


def item_counts(store: Store, kind: str) -> dict[str, Any]:
    """Items of a kind in the whole store: total, by language and number of sources."""
    total, sources = store._conn.execute(
        "SELECT COUNT(*), COUNT(DISTINCT source) FROM items WHERE kind = ?", (kind,)
    ).fetchone()
    by_language = {
        str(lang): int(n)
        for lang, n in store._query(
            "SELECT COALESCE(language, 'unknown'), COUNT(*) FROM items WHERE kind = ?"
            " GROUP BY 1 ORDER BY 1",
            (kind,),
        )
    }
    return {"items": int(total), "sources": int(sources), "by_language": by_language}


def kernel_filter_counts(store: Store) -> dict[str, int]:
    return {
        str(s): int(n)
        for s, n in store._query(
            "SELECT filter_status, COUNT(*) FROM kernels GROUP BY filter_status ORDER BY 1"
        )
    }


@dataclass(frozen=True)
class ReleaseRow:
    version: str
    filters: dict[str, Any]
    counts: dict[str, Any]
    checksums: dict[str, str]
    created_at: str


def save_release(store: Store, row: ReleaseRow) -> None:
    """Record a release; exporting or importing the same version again replaces its row."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO releases (version, filters, counts, checksums, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (version) DO UPDATE SET"
            " filters = excluded.filters, counts = excluded.counts,"
            " checksums = excluded.checksums, created_at = excluded.created_at",
            (
                row.version,
                json.dumps(row.filters, sort_keys=True),
                json.dumps(row.counts, sort_keys=True),
                json.dumps(row.checksums, sort_keys=True),
                row.created_at,
            ),
        )


def get_release(store: Store, version: str) -> ReleaseRow | None:
    row = store._conn.execute(
        "SELECT version, filters, counts, checksums, created_at FROM releases WHERE version = ?",
        (version,),
    ).fetchone()
    if row is None:
        return None
    return ReleaseRow(row[0], json.loads(row[1]), json.loads(row[2]), json.loads(row[3]), row[4])


def all_releases(store: Store) -> list[ReleaseRow]:
    found = []
    for (version,) in store._query("SELECT version FROM releases ORDER BY created_at, version"):
        release = get_release(store, version)
        if release is not None:
            found.append(release)
    return found


@dataclass(frozen=True)
class ReleaseCommit:
    """A commit read back from a release: the item's own key, path and dedup hash are
    kept as written (an imported item's key need not be its sha)."""

    key: str
    path: str | None
    dedup_hash: str | None
    row: CommitRow


def save_release_commits(store: Store, commits: list[ReleaseCommit]) -> list[SaveResult]:
    """Store commits from a release in one transaction: a key already stored is
    ``known``; the same change already stored under another key (function pair or diff)
    is linked as a ``duplicate``; the rest are inserted as they were exported."""
    results: list[SaveResult] = []
    now = utc_now()
    with store.transaction() as conn:
        for commit in commits:
            row = commit.row
            known = known_item_id(conn, "commit", commit.key)
            if known is not None:
                results.append(SaveResult("known", known))
                continue
            dup = find_duplicate(store, row.function_md5, row.diff_hash) if row.diff_hash else None
            if dup is not None:
                link_duplicate(conn, "commit", commit.key, row.source, dup[0], dup[1], now)
                results.append(SaveResult("duplicate", dup[0], dup[1]))
                continue
            item_id = insert_item(
                conn,
                "commit",
                commit.key,
                row.source,
                commit.path,
                row.language,
                commit.dedup_hash,
                row.provenance,
                now,
            )
            conn.execute(COMMIT_INSERT, commit_values(item_id, row))
            results.append(SaveResult("stored", item_id))
    return results
