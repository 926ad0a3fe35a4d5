"""Queries and batch writes for mined commits, their duplicates and checkpoints."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from store.connection import Store, utc_now
from store.items import insert_item, link_duplicate
from store.records import Checkpoint, CommitRow, PredictionRow, SaveResult


def find_known(store: Store, sha: str) -> tuple[int, str] | None:
    """The item id and source of an already-stored commit with this sha, if any."""
    row = store._conn.execute(
        "SELECT id, source FROM items WHERE kind = 'commit' AND key = ?", (sha,)
    ).fetchone()
    return None if row is None else (row[0], row[1])


def find_duplicate(
    store: Store, function_md5: str | None, diff_hash: str
) -> tuple[int, str] | None:
    """The first stored commit with the same function pair or the same diff content."""
    if function_md5 is not None:
        row = store._conn.execute(
            "SELECT item_id FROM commits WHERE function_md5 = ? ORDER BY item_id LIMIT 1",
            (function_md5,),
        ).fetchone()
        if row is not None:
            return row[0], "function_md5"
    row = store._conn.execute(
        "SELECT item_id FROM commits WHERE diff_hash = ? ORDER BY item_id LIMIT 1", (diff_hash,)
    ).fetchone()
    return None if row is None else (row[0], "diff_hash")


def save_commit_batch(
    store: Store,
    rows: Sequence[CommitRow],
    checkpoint: Callable[[list[SaveResult]], Checkpoint] | None = None,
) -> list[SaveResult]:
    """Store a batch in one transaction: dedup each row, insert the new ones with
    their predictions, link duplicates to the first occurrence, and move the
    checkpoint (built from the batch's results) in the same transaction."""
    results: list[SaveResult] = []
    now = utc_now()
    with store.transaction() as conn:
        for row in rows:
            known = find_known(store, row.sha)
            if known is not None:
                item_id, source = known
                if source == row.source:
                    results.append(SaveResult("known", item_id))
                    continue
                link_duplicate(conn, "commit", row.sha, row.source, item_id, "sha", now)
                results.append(SaveResult("duplicate", item_id, "sha"))
                continue
            dup = find_duplicate(store, row.function_md5, row.diff_hash)
            if dup is not None:
                link_duplicate(conn, "commit", row.sha, row.source, dup[0], dup[1], now)
                results.append(SaveResult("duplicate", dup[0], dup[1]))
                continue
            item_id = _insert_commit(conn, row, now)
            insert_predictions(store, item_id, row.predictions, now)
            results.append(SaveResult("stored", item_id))
        if checkpoint is not None:
            save_checkpoint(store, checkpoint(results))
    return results


COMMIT_INSERT = (
    "INSERT INTO commits (item_id, repo, sha, branch, author_date, message, diff, file, files,"
    " functions, code_before, code_after, added, deleted, model_input, function_md5,"
    " diff_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def commit_values(item_id: int, row: CommitRow) -> tuple[object, ...]:
    """The ``commits`` row of a commit, in :data:`COMMIT_INSERT`'s column order."""
    return (
        item_id,
        row.source,
        row.sha,
        row.branch,
        row.author_date,
        row.message,
        row.diff,
        row.file,
        json.dumps(row.files),
        json.dumps(row.functions),
        row.code_before,
        row.code_after,
        row.added,
        row.deleted,
        row.model_input,
        row.function_md5,
        row.diff_hash,
    )


def _insert_commit(conn: sqlite3.Connection, row: CommitRow, now: str) -> int:
    item_id = insert_item(
        conn,
        "commit",
        row.sha,
        row.source,
        row.file,
        row.language,
        row.function_md5 or row.diff_hash,
        row.provenance,
        now,
    )
    conn.execute(COMMIT_INSERT, commit_values(item_id, row))
    return item_id


def insert_predictions(
    store: Store, item_id: int, predictions: Sequence[PredictionRow], now: str | None = None
) -> None:
    """Append predictions for one item; earlier predictions are never overwritten."""
    stamp = now or utc_now()
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO predictions (item_id, labeler, label, score, details, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (item_id, p.labeler, p.label, p.score, json.dumps(p.details, sort_keys=True), stamp)
                for p in predictions
            ],
        )


def load_checkpoint(store: Store, kind: str, source: str, scope: str) -> Checkpoint | None:
    row = store._conn.execute(
        "SELECT last_key, counters FROM checkpoints WHERE kind = ? AND source = ? AND scope = ?",
        (kind, source, scope),
    ).fetchone()
    if row is None:
        return None
    return Checkpoint(kind, source, scope, row[0], json.loads(row[1]))


def load_checkpoints(store: Store, kind: str, source: str | None = None) -> list[Checkpoint]:
    """Every checkpoint of ``kind`` (of one source when given), any scope."""
    sql = "SELECT source, scope, last_key, counters FROM checkpoints WHERE kind = ?"
    params: tuple[str, ...] = (kind,)
    if source is not None:
        sql += " AND source = ?"
        params = (kind, source)
    return [
        Checkpoint(kind, row[0], row[1], row[2], json.loads(row[3]))
        for row in store._conn.execute(sql + " ORDER BY source, scope", params)
    ]


def save_checkpoint(store: Store, checkpoint: Checkpoint) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO checkpoints (kind, source, scope, last_key, counters, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (kind, source, scope) DO UPDATE SET"
            " last_key = excluded.last_key, counters = excluded.counters,"
            " updated_at = excluded.updated_at",
            (
                checkpoint.kind,
                checkpoint.source,
                checkpoint.scope,
                checkpoint.last_key,
                json.dumps(checkpoint.counters, sort_keys=True),
                utc_now(),
            ),
        )
