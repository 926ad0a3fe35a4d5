"""Bulk loads: many commits written with ``executemany`` in one transaction, without the
per-row dedup of mining (for benchmarks and fixtures that build large stores fast)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from store.commits import COMMIT_INSERT, commit_values
from store.connection import Store, utc_now
from store.records import CommitRow


def bulk_insert_commits(store: Store, rows: Iterable[CommitRow], batch: int = 5000) -> int:
    """Insert new commits (and their predictions); returns how many.

    Rows are taken as they are, without duplicate detection, in one transaction: a sha
    already stored fails the whole load and leaves the store as it was.
    """
    now = utc_now()
    written = 0
    with store.transaction() as conn:
        next_id = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM items").fetchone()[0])
        pending: list[CommitRow] = []

        def flush() -> None:
            nonlocal next_id, written
            ids = range(next_id, next_id + len(pending))
            conn.executemany(
                "INSERT INTO items (id, kind, key, source, path, language, dedup_hash,"
                " provenance, created_at) VALUES (?, 'commit', ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        i,
                        r.sha,
                        r.source,
                        r.file,
                        r.language,
                        r.function_md5 or r.diff_hash,
                        json.dumps(r.provenance, sort_keys=True),
                        now,
                    )
                    for i, r in zip(ids, pending, strict=True)
                ],
            )
            conn.executemany(
                COMMIT_INSERT, [commit_values(i, r) for i, r in zip(ids, pending, strict=True)]
            )
            conn.executemany(
                "INSERT INTO predictions (item_id, labeler, label, score, details, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (i, p.labeler, p.label, p.score, json.dumps(p.details, sort_keys=True), now)
                    for i, r in zip(ids, pending, strict=True)
                    for p in r.predictions
                ],
            )
            next_id += len(pending)
            written += len(pending)
            pending.clear()

        for row in rows:
            pending.append(row)
            if len(pending) >= batch:
                flush()
        if pending:
            flush()
    return written
