"""Queries and batch writes for OpenCL kernels: items, dedup, check results, counts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from store.commits import save_checkpoint
from store.connection import Store, utc_now
from store.items import insert_item, known_item_id, link_duplicate
from store.kernel_records import KernelCheck, KernelRow, StoredKernel
from store.records import Checkpoint, SaveResult

KIND = "kernel"

_COLUMNS = (
    "k.item_id, k.source_file, k.kernel_name, k.original_source, k.normalized_source,"
    " k.shim_needed, k.filter_status, k.verdict, k.features, i.provenance"
)
_FROM = "kernels k JOIN items i ON i.id = k.item_id"


def save_kernel_batch(
    store: Store,
    rows: Sequence[KernelRow],
    checkpoint: Callable[[list[SaveResult]], Checkpoint] | None = None,
) -> list[SaveResult]:
    """Store a batch in one transaction: skip kernels already stored under the same key,
    link those whose normalized source is already stored as duplicates, insert the rest,
    and move the checkpoint (built from the batch's results) in the same transaction."""
    results: list[SaveResult] = []
    now = utc_now()
    with store.transaction() as conn:
        for row in rows:
            known = known_item_id(conn, "kernel", row.key)
            if known is not None:
                results.append(SaveResult("known", known))
                continue
            dup = conn.execute(
                "SELECT item_id FROM kernels WHERE normalized_hash = ? ORDER BY item_id LIMIT 1",
                (row.normalized_hash,),
            ).fetchone()
            if dup is not None:
                if _linked(conn, row.key, row.source):
                    results.append(SaveResult("known", int(dup[0])))
                    continue
                link_duplicate(
                    conn, "kernel", row.key, row.source, int(dup[0]), "normalized_hash", now
                )
                results.append(SaveResult("duplicate", int(dup[0]), "normalized_hash"))
                continue
            results.append(SaveResult("stored", _insert_kernel(conn, row, now)))
        if checkpoint is not None:
            save_checkpoint(store, checkpoint(results))
    return results


def _linked(conn: sqlite3.Connection, key: str, source: str) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM duplicates WHERE kind = 'kernel' AND key = ? AND source = ?",
            (key, source),
        ).fetchone()
        is not None
    )


def stored_kernel_state(store: Store, key: str, source: str, original_source: str) -> str | None:
    """What the store holds under a kernel's key: ``same`` (this very source, stored or
    linked as an exact copy of a stored kernel), ``other`` (another source is stored
    under the key), ``linked`` (a duplicate of a kernel whose source differs: its own
    source was not kept), or None."""
    row = store._conn.execute(
        "SELECT k.original_source FROM items i JOIN kernels k ON k.item_id = i.id"
        " WHERE i.kind = 'kernel' AND i.key = ?",
        (key,),
    ).fetchone()
    if row is not None:
        return "same" if row[0] == original_source else "other"
    row = store._conn.execute(
        "SELECT k.original_source FROM duplicates d JOIN kernels k"
        " ON k.item_id = d.original_item_id WHERE d.kind = 'kernel' AND d.key = ?"
        " AND d.source = ?",
        (key, source),
    ).fetchone()
    if row is not None:
        return "same" if row[0] == original_source else "linked"
    return None


def _insert_kernel(conn: sqlite3.Connection, row: KernelRow, now: str) -> int:
    item_id = insert_item(
        conn,
        "kernel",
        row.key,
        row.source,
        row.source_file,
        "opencl",
        row.normalized_hash,
        row.provenance,
        now,
    )
    conn.execute(
        "INSERT INTO kernels (item_id, source_file, kernel_name, origin, original_source,"
        " normalized_source, normalized_hash, shim_needed, shim_names, filter_status,"
        " instructions, message, features, verdict) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item_id,
            row.source_file,
            row.kernel_name,
            row.origin,
            row.original_source,
            row.normalized_source,
            row.normalized_hash,
            int(row.shim_needed),
            json.dumps(row.shim_names),
            "accepted" if row.accepted else "rejected",
            row.instructions,
            row.message,
            json.dumps(row.features, sort_keys=True),
            row.verdict,
        ),
    )
    return item_id


def _stored(row: sqlite3.Row) -> StoredKernel:
    return StoredKernel(
        item_id=int(row[0]),
        source_file=row[1],
        kernel_name=row[2],
        original_source=row[3],
        normalized_source=row[4],
        shim_needed=bool(row[5]),
        accepted=row[6] == "accepted",
        verdict=row[7],
        features=json.loads(row[8]),
        prelude="".join(
            a["line"] + "\n"
            for a in json.loads(row[9] or "{}").get("assumed", [])
            if a.get("origin") != "no-header"
        ),
    )


def unchecked_kernels(store: Store) -> list[StoredKernel]:
    """Kernels the rejection filter accepted that have never been checked."""
    return [
        _stored(r)
        for r in store._query(
            f"SELECT {_COLUMNS} FROM {_FROM} WHERE k.filter_status = 'accepted'"
            " AND k.checked_at IS NULL ORDER BY k.item_id"
        )
    ]


def kernels_in_set(store: Store, name: str) -> list[StoredKernel]:
    """The kernels of a named set, in the set's order (other kinds of item are ignored)."""
    return [
        _stored(r)
        for r in store._query(
            f"SELECT {_COLUMNS} FROM sets s JOIN set_items si ON si.set_id = s.id"
            " JOIN kernels k ON k.item_id = si.item_id JOIN items i ON i.id = k.item_id"
            " WHERE s.name = ? ORDER BY si.position",
            (name,),
        )
    ]


def get_kernel(store: Store, item_id: int) -> StoredKernel | None:
    row = store._conn.execute(
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE k.item_id = ?", (item_id,)
    ).fetchone()
    return None if row is None else _stored(row)


def save_checks(store: Store, checks: Sequence[KernelCheck]) -> None:
    """Record a batch of check results in one transaction (the latest check wins)."""
    now = utc_now()
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE kernels SET verdict = ?, check_details = ?, features = ?, checked_at = ?"
            " WHERE item_id = ?",
            [
                (
                    c.verdict,
                    json.dumps(c.details, sort_keys=True),
                    json.dumps(c.features, sort_keys=True),
                    now,
                    c.item_id,
                )
                for c in checks
            ],
        )


def kernel_row(store: Store, item_id: int) -> dict[str, object] | None:
    """Every stored column of one kernel, JSON fields decoded (for display and tests)."""
    row = store._conn.execute("SELECT * FROM kernels WHERE item_id = ?", (item_id,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    for name in ("shim_names", "features", "check_details"):
        data[name] = json.loads(data[name])
    data["shim_needed"] = bool(data["shim_needed"])
    return data


def kernel_ids_by_name(store: Store, kernel_name: str) -> list[int]:
    return [
        int(r[0])
        for r in store._query(
            "SELECT item_id FROM kernels WHERE kernel_name = ? ORDER BY item_id", (kernel_name,)
        )
    ]


def kernel_verdict_counts(store: Store) -> dict[str, int]:
    """Kernels by verdict; accepted kernels not yet checked count as ``unchecked``."""
    return {
        str(v): int(n)
        for v, n in store._query(
            "SELECT COALESCE(verdict, 'unchecked'), COUNT(*) FROM kernels"
            " GROUP BY COALESCE(verdict, 'unchecked') ORDER BY 1"
        )
    }


def kernel_reason_counts(store: Store) -> dict[str, dict[str, int]]:
    """Refused kernels by their named reason (``refusal`` in the provenance) and checked
    kernels by verdict and payload policy (``payload_policy`` in the check details)."""
    refusals: dict[str, int] = {}
    for reason, n in store._query(
        "SELECT COALESCE(json_extract(i.provenance, '$.refusal'), k.verdict), COUNT(*)"
        " FROM kernels k JOIN items i ON i.id = k.item_id"
        " WHERE k.filter_status = 'rejected' GROUP BY 1 ORDER BY 2 DESC, 1"
    ):
        refusals[str(reason)] = int(n)
    policies: dict[str, int] = {}
    for verdict, policy, n in store._query(
        "SELECT k.verdict, COALESCE(json_extract(k.check_details, '$.payload_policy'), '-'),"
        " COUNT(*) FROM kernels k WHERE k.filter_status = 'accepted'"
        " AND k.checked_at IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"
    ):
        policies[f"{verdict} / {policy}"] = int(n)
    return {"refusals": refusals, "verdicts_by_policy": policies}


def stored_kernel_item(store: Store, key: str, original_source: str) -> tuple[int, bool] | None:
    """The kernel stored under ``key`` with this very source, and whether the rejection
    filter accepted it; None when the key holds no kernel or another source."""
    row = store._conn.execute(
        "SELECT k.item_id, k.filter_status FROM items i JOIN kernels k ON k.item_id = i.id"
        " WHERE i.kind = 'kernel' AND i.key = ? AND k.original_source = ?",
        (key, original_source),
    ).fetchone()
    return None if row is None else (int(row[0]), row[1] == "accepted")


# what mining writes in a kernel's provenance from the filter's result: a re-filter
# replaces these and keeps the rest (where it was found, what it includes, ...)
_FILTER_PROVENANCE = ("assumed", "build_flags", "device", "refusal", "rewrite_error")
_OWN_TABLES = frozenset({"items", "kernels", "duplicates"})


@dataclass(frozen=True)
class RefilterResult:
    """What became of one stored kernel given the filter's result again: ``updated``
    (written in place: same item, votes and sets kept), ``unchanged`` (the result is the
    one stored), ``merged`` (it now repeats kernel ``into`` and had nothing hanging on
    it: linked as a duplicate of it, as mining links one, and deleted), ``kept`` (it
    repeats ``into`` but has votes or other rows: written in place, not merged; ``why``
    names them) or ``gone`` (deleted or changed since it was read: left alone)."""

    item_id: int
    status: str
    into: int | None = None
    why: str = ""


def _dependents(conn: sqlite3.Connection, item_id: int) -> list[str]:
    """The tables (besides the kernel's own) that hold rows naming this item."""
    found = []
    for (table,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name"
    ).fetchall():
        if table in _OWN_TABLES:
            continue
        for fk in conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
            if fk["table"] != "items":
                continue
            column = fk["from"]
            hit = conn.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}" = ? LIMIT 1', (item_id,)
            ).fetchone()
            if hit is not None:
                found.append(table)
                break
    return found


def _refilter_one(
    conn: sqlite3.Connection, item_id: int, row: KernelRow, now: str
) -> RefilterResult:
    old = conn.execute(
        "SELECT k.original_source, k.normalized_source, k.normalized_hash, k.filter_status,"
        " k.verdict, k.message, k.instructions, k.shim_names, k.features, i.provenance, i.key,"
        " i.source FROM kernels k JOIN items i ON i.id = k.item_id WHERE k.item_id = ?",
        (item_id,),
    ).fetchone()
    if old is None or old["original_source"] != row.original_source:
        return RefilterResult(item_id, "gone")
    provenance = {
        k: v
        for k, v in json.loads(old["provenance"] or "{}").items()
        if k not in _FILTER_PROVENANCE
    }
    provenance.update({k: v for k, v in row.provenance.items() if k in _FILTER_PROVENANCE})
    status = "accepted" if row.accepted else "rejected"
    features = json.dumps(row.features, sort_keys=True)
    same_build = (
        old["filter_status"] == status
        and old["normalized_source"] == row.normalized_source
        and old["normalized_hash"] == row.normalized_hash
    )
    if (
        same_build
        and old["message"] == row.message
        and old["instructions"] == row.instructions
        and json.loads(old["shim_names"]) == row.shim_names
        and json.loads(old["provenance"] or "{}") == provenance
        and (status == "accepted" or old["verdict"] == row.verdict)
    ):
        return RefilterResult(item_id, "unchanged")
    result = RefilterResult(item_id, "updated")
    if row.accepted and old["normalized_hash"] != row.normalized_hash:
        repeats = conn.execute(
            "SELECT item_id FROM kernels WHERE normalized_hash = ? AND item_id != ?"
            " ORDER BY item_id LIMIT 1",
            (row.normalized_hash, item_id),
        ).fetchone()
        if repeats is not None:
            into = int(repeats[0])
            hanging = _dependents(conn, item_id)
            if hanging:
                result = RefilterResult(item_id, "kept", into, "has " + ", ".join(hanging))
            else:
                # mined today it would be a duplicate of ``into``: it becomes one
                link_duplicate(conn, KIND, old["key"], old["source"], into, "normalized_hash", now)
                conn.execute(
                    "UPDATE duplicates SET original_item_id = ? WHERE original_item_id = ?",
                    (into, item_id),
                )
                conn.execute("DELETE FROM kernels WHERE item_id = ?", (item_id,))
                conn.execute("DELETE FROM items WHERE id = ? AND kind = ?", (item_id, KIND))
                return RefilterResult(item_id, "merged", into)
    if same_build:
        # the build is the one checked: a stored check verdict still holds
        conn.execute(
            "UPDATE kernels SET shim_needed = ?, shim_names = ?, instructions = ?,"
            " message = ? WHERE item_id = ?",
            (
                int(row.shim_needed),
                json.dumps(row.shim_names),
                row.instructions,
                row.message,
                item_id,
            ),
        )
    else:
        conn.execute(
            "UPDATE kernels SET normalized_source = ?, normalized_hash = ?, shim_needed = ?,"
            " shim_names = ?, filter_status = ?, instructions = ?, message = ?, features = ?,"
            " verdict = ?, check_details = '{}', checked_at = NULL WHERE item_id = ?",
            (
                row.normalized_source,
                row.normalized_hash,
                int(row.shim_needed),
                json.dumps(row.shim_names),
                status,
                row.instructions,
                row.message,
                features,
                row.verdict,
                item_id,
            ),
        )
    conn.execute(
        "UPDATE items SET dedup_hash = ?, provenance = ? WHERE id = ?",
        (row.normalized_hash, json.dumps(provenance, sort_keys=True), item_id),
    )
    return result


class _DryRun(Exception):
    """Raised to roll back a dry run's writes."""


def save_refiltered(
    store: Store, rows: Sequence[tuple[int, KernelRow]], dry_run: bool = False
) -> list[RefilterResult]:
    """Write kernels the rejection filter has seen again, in one transaction (item id,
    the row mining would store today). A kernel keeps its item, so its votes, sets and
    duplicates stay; one that now repeats another kernel's normalised source is merged
    into it as mining would link it, unless rows hang on it. ``dry_run`` works it all
    out the same way and rolls it back."""
    now = utc_now()
    results: list[RefilterResult] = []
    try:
        with store.transaction() as conn:
            results = [_refilter_one(conn, item_id, row, now) for item_id, row in rows]
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return results
