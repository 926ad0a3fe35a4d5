"""LLVM IR modules: batch writes with structural-hash dedup, and the corpus statistics.

``ir_modules`` holds one row per stored module (items.kind = 'ir', items.key = its
structural hash). ``ir_inputs`` records what became of every input file: stored,
duplicate (linked to the module stored first, and also listed in ``duplicates``),
rejected (with reason and message) or filtered (license). Sizes of duplicates live
there too, so the corpus can be measured before and after dedup as ComPile's Table 1
does.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.connection import Store, utc_now
from store.items import insert_item, known_item_id, link_duplicate

KIND = "ir"
MATCHED_ON = "structural_hash"


@dataclass
class IRModuleRow:
    """One parsed module, ready to be stored or linked as a duplicate."""

    source: str
    path: str
    language: str
    structural_hash: str
    input_sha256: str
    input_format: str
    compile_command: str | None
    project: str
    license: str
    text: str
    bitcode: bytes
    text_bytes: int
    bitcode_bytes: int
    tokens: int
    functions: int
    declarations: int
    globals: int
    basic_blocks: int
    instructions: int
    opcodes: dict[str, int] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class IRInputRow:
    """An input that yielded no module: ``rejected`` (unreadable) or ``filtered``."""

    source: str
    path: str
    input_sha256: str
    compile_command: str | None
    status: str
    reason: str
    message: str
    language: str | None = None
    license: str | None = None


@dataclass(frozen=True)
class IRSaveResult:
    """What happened to one row: ``stored``, ``duplicate``, ``known`` (saved before),
    ``rejected`` or ``filtered``."""

    status: str
    item_id: int | None = None


def is_done(
    store: Store, source: str, path: str, compile_command: str | None, input_sha256: str
) -> bool:
    """Whether this exact input (same bytes, same command) was stored or linked before."""
    row = store._conn.execute(
        "SELECT 1 FROM ir_inputs WHERE source = ? AND path = ? AND compile_command = ?"
        " AND input_sha256 = ? AND status IN ('stored', 'duplicate')",
        (source, path, compile_command or "", input_sha256),
    ).fetchone()
    return row is not None


def save_ir_batch(store: Store, rows: Sequence[IRModuleRow | IRInputRow]) -> list[IRSaveResult]:
    """Write a batch in one transaction; a module whose hash is known becomes a duplicate.

    Saving is idempotent: an input already stored or linked (the same bytes under the
    same command, say saved by a concurrent run) is reported ``known`` and left alone.
    """
    results: list[IRSaveResult] = []
    now = utc_now()
    with store.transaction() as conn:
        for row in rows:
            if isinstance(row, IRInputRow):
                _upsert_input(conn, row, now)
                results.append(IRSaveResult(row.status))
                continue
            seen = conn.execute(
                "SELECT item_id FROM ir_inputs WHERE source = ? AND path = ?"
                " AND compile_command = ? AND input_sha256 = ? AND status IN"
                " ('stored', 'duplicate')",
                (row.source, row.path, row.compile_command or "", row.input_sha256),
            ).fetchone()
            if seen is not None:
                results.append(IRSaveResult("known", seen[0]))
                continue
            original = known_item_id(conn, KIND, row.structural_hash)
            if original is not None:
                link_duplicate(
                    conn, KIND, _duplicate_key(row), row.source, original, MATCHED_ON, now
                )
                _upsert_module_input(conn, row, "duplicate", original, now)
                results.append(IRSaveResult("duplicate", original))
                continue
            item_id = _insert_module(conn, row, now)
            _upsert_module_input(conn, row, "stored", item_id, now)
            results.append(IRSaveResult("stored", item_id))
    return results


def _duplicate_key(row: IRModuleRow) -> str:
    """The duplicate's own key: its path, and which bytes/command produced it."""
    return f"{row.path}@{row.input_sha256[:12]}"


def _insert_module(conn: sqlite3.Connection, row: IRModuleRow, now: str) -> int:
    item_id = insert_item(
        conn,
        KIND,
        row.structural_hash,
        row.source,
        row.path,
        row.language,
        row.structural_hash,
        row.provenance,
        now,
    )
    conn.execute(
        "INSERT INTO ir_modules (item_id, structural_hash, project, license, input_format,"
        " compile_command, text, bitcode, text_bytes, bitcode_bytes, tokens, functions,"
        " declarations, globals, basic_blocks, instructions, opcodes)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item_id,
            row.structural_hash,
            row.project,
            row.license,
            row.input_format,
            row.compile_command,
            row.text,
            row.bitcode,
            row.text_bytes,
            row.bitcode_bytes,
            row.tokens,
            row.functions,
            row.declarations,
            row.globals,
            row.basic_blocks,
            row.instructions,
            json.dumps(row.opcodes, sort_keys=True),
        ),
    )
    return item_id


_UPSERT_INPUT = (
    "INSERT INTO ir_inputs (source, path, compile_command, input_sha256, status, item_id,"
    " language, license, reason, message, text_bytes, bitcode_bytes, tokens, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (source, path, compile_command, input_sha256) DO UPDATE SET"
    " status = excluded.status, item_id = excluded.item_id, language = excluded.language,"
    " license = excluded.license, reason = excluded.reason, message = excluded.message,"
    " text_bytes = excluded.text_bytes, bitcode_bytes = excluded.bitcode_bytes,"
    " tokens = excluded.tokens, updated_at = excluded.updated_at"
)


def _upsert_module_input(
    conn: sqlite3.Connection, row: IRModuleRow, status: str, item_id: int, now: str
) -> None:
    conn.execute(
        _UPSERT_INPUT,
        (
            row.source,
            row.path,
            row.compile_command or "",
            row.input_sha256,
            status,
            item_id,
            row.language,
            row.license,
            None,
            None,
            row.text_bytes,
            row.bitcode_bytes,
            row.tokens,
            now,
        ),
    )


def _upsert_input(conn: sqlite3.Connection, row: IRInputRow, now: str) -> None:
    conn.execute(
        _UPSERT_INPUT,
        (
            row.source,
            row.path,
            row.compile_command or "",
            row.input_sha256,
            row.status,
            None,
            row.language,
            row.license,
            row.reason,
            row.message,
            None,
            None,
            None,
            now,
        ),
    )


def ir_module(store: Store, item_id: int) -> dict[str, Any] | None:
    """One stored module with its item columns, provenance and duplicates' paths."""
    row = store._conn.execute(
        "SELECT i.id, i.key, i.source, i.path, i.language, i.provenance, i.created_at, m.*"
        " FROM items i JOIN ir_modules m ON m.item_id = i.id WHERE i.id = ?",
        (item_id,),
    ).fetchone()
    if row is None:
        return None
    data = dict(zip(row.keys(), tuple(row), strict=True))
    data["provenance"] = json.loads(data["provenance"])
    data["opcodes"] = json.loads(data["opcodes"])
    data["duplicates"] = [
        {"source": r[0], "path": r[1], "license": r[2]}
        for r in store._query(
            "SELECT source, path, license FROM ir_inputs WHERE item_id = ? AND status ="
            " 'duplicate' ORDER BY id",
            (item_id,),
        )
    ]
    return data


def ir_counts(store: Store) -> dict[str, Any]:
    """Stored, duplicate, rejected and filtered inputs, with reasons."""
    counts = {"stored": 0, "duplicates": 0, "rejected": 0, "filtered": 0}
    names = {"stored": "stored", "duplicate": "duplicates", "rejected": "rejected"}
    reasons: dict[str, dict[str, int]] = {"rejected": {}, "filtered": {}}
    for status, reason, n in store._query(
        "SELECT status, COALESCE(reason, ''), COUNT(*) FROM ir_inputs GROUP BY status, reason"
        " ORDER BY status, reason"
    ):
        counts[names.get(status, status)] = counts.get(names.get(status, status), 0) + n
        if status in reasons:
            reasons[status][reason or "unknown"] = n
    return {
        **counts,
        "modules": int(store._scalar("SELECT COUNT(*) FROM ir_modules") or 0),
        "rejected_by_reason": reasons["rejected"],
        "filtered_by_reason": reasons["filtered"],
    }


def _sizes(store: Store, sql: str) -> dict[str, dict[str, int]]:
    return {
        str(group): {"modules": n, "text_bytes": t, "bitcode_bytes": b, "tokens": k}
        for group, n, t, b, k in store._query(sql)
    }


def _table(store: Store, before_group: str, after_group: str) -> dict[str, dict[str, Any]]:
    before = _sizes(
        store,
        f"SELECT COALESCE({before_group}, 'unknown') AS g, COUNT(*), COALESCE(SUM(text_bytes), 0),"
        " COALESCE(SUM(bitcode_bytes), 0), COALESCE(SUM(tokens), 0) FROM ir_inputs"
        " WHERE status IN ('stored', 'duplicate') GROUP BY g ORDER BY g",
    )
    after = _sizes(
        store,
        f"SELECT COALESCE({after_group}, 'unknown') AS g, COUNT(*), SUM(m.text_bytes),"
        " SUM(m.bitcode_bytes), SUM(m.tokens) FROM ir_modules m JOIN items i"
        " ON i.id = m.item_id GROUP BY g ORDER BY g",
    )
    empty = {"modules": 0, "text_bytes": 0, "bitcode_bytes": 0, "tokens": 0}
    return {
        group: {"before": before.get(group, empty), "after": after.get(group, empty)}
        for group in sorted(before.keys() | after.keys())
    }


def ir_corpus_table(store: Store) -> dict[str, Any]:
    """ComPile's Table 1 shape: modules, text, bitcode and tokens before and after dedup,
    by language and by license, with totals and the input counts."""
    by_language = _table(store, "language", "i.language")
    by_license = _table(store, "license", "m.license")
    total: dict[str, dict[str, int]] = {
        side: {"modules": 0, "text_bytes": 0, "bitcode_bytes": 0, "tokens": 0}
        for side in ("before", "after")
    }
    for sides in by_language.values():
        for side, sizes in sides.items():
            for key, value in sizes.items():
                total[side][key] += value
    return {
        "by_language": by_language,
        "by_license": by_license,
        "total": total,
        "counts": ir_counts(store),
        "rejections": [
            {"source": r[0], "path": r[1], "reason": r[2], "message": r[3]}
            for r in store._query(
                "SELECT source, path, reason, message FROM ir_inputs WHERE status = 'rejected'"
                " ORDER BY updated_at DESC, id DESC LIMIT 50"
            )
        ],
    }
