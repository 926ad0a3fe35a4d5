"""Item lookups shared by every kind, and the writes for items imported from files."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from store.connection import Store, utc_now


@dataclass(frozen=True)
class ItemRef:
    id: int
    kind: str
    key: str
    source: str
    language: str | None


@dataclass(frozen=True)
class ImportedItem:
    """An item read from a file: its external id (``key``), origin and kind payload."""

    kind: str
    key: str
    source: str
    language: str | None
    path: str | None
    payload: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)


def known_item_id(conn: sqlite3.Connection, kind: str, key: str) -> int | None:
    """The id of the item stored under this natural key, if any."""
    row = conn.execute("SELECT id FROM items WHERE kind = ? AND key = ?", (kind, key)).fetchone()
    return None if row is None else int(row[0])


def count_items(store: Store, kind: str, source: str | None = None) -> int:
    """How many items of ``kind`` are stored (from ``source`` only, when given)."""
    if source is None:
        return int(store._scalar("SELECT COUNT(*) FROM items WHERE kind = ?", (kind,)) or 0)
    return int(
        store._scalar("SELECT COUNT(*) FROM items WHERE kind = ? AND source = ?", (kind, source))
        or 0
    )


def insert_item(
    conn: sqlite3.Connection,
    kind: str,
    key: str,
    source: str,
    path: str | None,
    language: str | None,
    dedup_hash: str | None,
    provenance: dict[str, Any],
    now: str,
) -> int:
    """Insert the kind-independent ``items`` row; the caller adds the kind's payload row."""
    cur = conn.execute(
        "INSERT INTO items (kind, key, source, path, language, dedup_hash, provenance, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            kind,
            key,
            source,
            path,
            language,
            dedup_hash,
            json.dumps(provenance, sort_keys=True),
            now,
        ),
    )
    return int(cur.lastrowid or 0)


def link_duplicate(
    conn: sqlite3.Connection,
    kind: str,
    key: str,
    source: str,
    original_item_id: int,
    matched_on: str,
    now: str,
) -> None:
    """Record a duplicate (once per kind, key and source) against the item it repeats."""
    conn.execute(
        "INSERT OR IGNORE INTO duplicates (kind, key, source, original_item_id, matched_on,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (kind, key, source, original_item_id, matched_on, now),
    )


ITEM_KINDS = ("commit", "ir", "kernel")
"""Every kind the ``items`` table allows (its CHECK constraint)."""


def find_by_key(store: Store, key: str, kind: str | None = None) -> list[ItemRef]:
    """The items stored under this key, of one kind or of any (ordered by kind).

    Without a kind, every kind is named all the same: the unique (kind, key) index is
    then searched once per kind instead of read whole (a vote by key on a large store)."""
    kinds = ITEM_KINDS if kind is None else (kind,)
    marks = ",".join("?" * len(kinds))
    return [
        ItemRef(*row)
        for row in store._conn.execute(
            "SELECT id, kind, key, source, language FROM items"
            f" WHERE kind IN ({marks}) AND key = ? ORDER BY kind",
            (*kinds, key),
        )
    ]


def find_by_key_prefix(store: Store, kind: str, prefix: str, limit: int = 2) -> list[ItemRef]:
    """Up to ``limit`` items of ``kind`` whose key starts with ``prefix`` (a sha's first
    digits), read as a range of the unique (kind, key) index."""
    if not prefix:
        return []
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return [
        ItemRef(*row)
        for row in store._conn.execute(
            "SELECT id, kind, key, source, language FROM items"
            " WHERE kind = ? AND key >= ? AND key < ? ORDER BY key LIMIT ?",
            (kind, prefix, upper, limit),
        )
    ]


def find_by_sha_prefix(store: Store, prefix: str, limit: int = 3) -> list[tuple[ItemRef, str]]:
    """Up to ``limit`` commit items whose sha starts with ``prefix`` (hex digits), with
    their sha: the imported commits whose key is an external id, not their sha."""
    if not prefix or not all(c in "0123456789abcdefABCDEF" for c in prefix):
        return []
    low = prefix.lower()
    # A range of the commits_sha index (NOCASE: a sha stored in capitals is found too);
    # LIKE cannot use it and read every commit row.
    upper = low[:-1] + chr(ord(low[-1]) + 1)
    return [
        (ItemRef(*row[:5]), str(row[5]))
        for row in store._conn.execute(
            "SELECT i.id, i.kind, i.key, i.source, i.language, c.sha FROM commits AS c"
            " JOIN items AS i ON i.id = c.item_id"
            " WHERE c.sha COLLATE NOCASE >= ? AND c.sha COLLATE NOCASE < ?"
            " ORDER BY i.id LIMIT ?",
            (low, upper, limit),
        )
    ]


MAX_ID = 2**63 - 1
"""SQLite's largest integer: no row has a larger id (and a larger one cannot be bound)."""


def find_by_id(store: Store, item_id: int) -> ItemRef | None:
    if not 0 < item_id <= MAX_ID:
        return None
    row = store._conn.execute(
        "SELECT id, kind, key, source, language FROM items WHERE id = ?", (item_id,)
    ).fetchone()
    return None if row is None else ItemRef(*row)


def keys_to_ids(store: Store, kind: str, keys: Sequence[str]) -> dict[str, int]:
    """Map external ids of one kind to item ids; unknown keys are simply absent."""
    found: dict[str, int] = {}
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for item_id, key in store._conn.execute(
            f"SELECT id, key FROM items WHERE kind = ? AND key IN ({marks})", [kind, *chunk]
        ):
            found[key] = item_id
    return found


def item_summaries(store: Store, item_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Key, source, language and a one-line title (the commit subject when there is one)."""
    found: dict[int, dict[str, Any]] = {}
    ids = list(item_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in store._conn.execute(
            "SELECT i.id, i.kind, i.key, i.source, i.language, c.message FROM items AS i"
            f" LEFT JOIN commits AS c ON c.item_id = i.id WHERE i.id IN ({marks})",
            chunk,
        ):
            message = row[5] or ""
            found[row[0]] = {
                "kind": row[1],
                "key": row[2],
                "source": row[3],
                "language": row[4],
                "title": message.splitlines()[0] if message else "",
            }
    return found


def _files(payload: dict[str, Any]) -> list[str]:
    """The files an imported commit changes: its ``files`` when a list of names (a commit
    dumped with every file it touches), else its one ``file``."""
    files = payload.get("files")
    if isinstance(files, list) and files and all(isinstance(f, str) and f for f in files):
        return list(files)
    return [payload["file"]] if payload.get("file") else []


def _write_commit(conn: sqlite3.Connection, item_id: int, item: ImportedItem) -> None:
    p = item.payload
    conn.execute(
        "INSERT INTO commits (item_id, repo, sha, author_date, message, diff, file, files,"
        " code_before, code_after, model_input, diff_hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item_id,
            p.get("repo") or item.source,
            p.get("sha") or "",
            p.get("date"),
            p["message"],
            p.get("diff") or "",
            p.get("file"),
            json.dumps(_files(p)),
            p.get("code_before"),
            p.get("code_after"),
            p["model_input"],
            p.get("diff_hash") or "",
        ),
    )


PAYLOAD_WRITERS: dict[str, Callable[[sqlite3.Connection, int, ImportedItem], None]] = {
    "commit": _write_commit,
}


def insert_imported_items(store: Store, items: Sequence[ImportedItem]) -> list[tuple[str, int]]:
    """Insert items that are not stored yet, in one transaction; an external id already
    stored for the kind is left as it is. Returns ("stored" | "known", item id) per item."""
    results: list[tuple[str, int]] = []
    now = utc_now()
    with store.transaction() as conn:
        for item in items:
            known = known_item_id(conn, item.kind, item.key)
            if known is not None:
                results.append(("known", known))
                continue
            item_id = insert_item(
                conn,
                item.kind,
                item.key,
                item.source,
                item.path,
                item.language,
                None,
                item.provenance,
                now,
            )
            writer = PAYLOAD_WRITERS.get(item.kind)
            if writer is not None:
                writer(conn, item_id, item)
            results.append(("stored", item_id))
    return results
