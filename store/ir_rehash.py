"""Bring stored IR modules' structural hashes up to date (``curator mine ir --rehash``).

The structural hash is an IR item's key, so a change to the hash (no-op pointer casts
and trailing zero GEP indices ignored since) leaves stores made before it keyed by the
old one: a module mined since, equal to a stored one under the new hash, is stored a
second time. Rehashing computes every module's hash again from its stored IR text
(the caller passes the function: the store does not parse IR) and then, in one
transaction:

- a module whose hash changed and that no other module now shares gets the new key;
- modules that now share a hash are merged as ingest treats a duplicate: the first
  stored (the lowest id) stays, each other one's inputs become ``duplicate`` inputs of
  it (``ir_inputs``), its own input is linked in ``duplicates`` (key ``PATH@SHA12``,
  matched on ``structural_hash``), duplicates linked to it move to the one kept, and it
  is deleted;
- a module with anything that hangs on its id (votes, set memberships, predictions,
  claims, gold answers: every table whose foreign key names ``items``, besides the IR
  tables handled above) is never deleted, so no vote is lost. When only one module of a
  group has such rows, it is the one kept; when several have, one keeps the new hash
  (the one holding it already, else the first) and each other keeps its old key: the
  pair is reported (``kept``), to be merged by hand once its votes are settled;
- a module whose IR cannot be read again keeps its key and is reported (``unreadable``);
  so does a group whose new hash a kept key already holds (``blocked``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

from store.connection import Store, utc_now
from store.items import link_duplicate

KIND = "ir"
MATCHED_ON = "structural_hash"
_HANDLED = frozenset({"ir_modules", "ir_inputs", "duplicates", "items"})
_CHUNK = 500


@dataclass(frozen=True)
class KeptPair:
    """A module that repeats another under the new hash but was not merged."""

    item_id: int
    repeats: int  # the module kept under the new hash
    reason: str


@dataclass
class RehashSummary:
    """What a rehash found (and, unless a dry run, did)."""

    examined: int = 0
    current: int = 0  # modules whose hash is already the new one, alone in their group
    rehashed: int = 0  # modules given their new hash as key
    merged: int = 0  # modules merged into the one they repeat (deleted, now duplicates)
    kept: list[KeptPair] = field(default_factory=list)
    unreadable: list[tuple[int, str]] = field(default_factory=list)  # item id, why
    blocked: list[tuple[int, str]] = field(default_factory=list)  # item id, why
    written: bool = False

    @property
    def changed(self) -> int:
        return self.rehashed + self.merged


@dataclass
class _Plan:
    new_keys: dict[int, str] = field(default_factory=dict)  # item id -> key it gets
    merges: dict[int, int] = field(default_factory=dict)  # item id -> the one kept


def _dependent_tables(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(table, column) of every foreign key on ``items`` outside the IR tables."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    found = []
    for table in tables:
        if table in _HANDLED:
            continue
        for fk in conn.execute(f'PRAGMA foreign_key_list("{table}")'):
            if fk["table"] == "items":
                found.append((table, fk["from"]))
    return found


def _annotated(conn: sqlite3.Connection, item_ids: list[int]) -> dict[int, list[str]]:
    """For each item that has rows hanging on it, the tables they are in."""
    found: dict[int, list[str]] = {}
    for table, column in _dependent_tables(conn):
        for start in range(0, len(item_ids), _CHUNK):
            chunk = item_ids[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for (item_id,) in conn.execute(
                f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IN ({marks})',
                chunk,
            ):
                found.setdefault(int(item_id), []).append(table)
    return found


def _plan(
    conn: sqlite3.Connection,
    keys: dict[int, str],
    hashes: dict[int, str],
    summary: RehashSummary,
) -> _Plan:
    """Who gets which key and who merges into whom (``summary`` gets the counts)."""
    groups: dict[str, list[int]] = {}
    for item_id in sorted(hashes):
        groups.setdefault(hashes[item_id], []).append(item_id)
    shared = [ids for ids in groups.values() if len(ids) > 1]
    annotated = _annotated(conn, [i for ids in shared for i in ids]) if shared else {}
    fixed = {keys[i]: i for i in keys if i not in hashes}  # unreadable: keys stay
    frozen: set[str] = set()
    while True:
        plan = _Plan()
        kept: list[KeptPair] = []
        holders = dict(fixed)
        for new_hash, ids in groups.items():
            if new_hash in frozen:
                for i in ids:
                    holders[keys[i]] = i
                continue
            with_rows = [i for i in ids if i in annotated]
            # one that already holds the new hash stays: a kept one keeps its own key
            holding = [i for i in with_rows if keys[i] == new_hash]
            survivor = (holding or with_rows or ids)[0]
            plan.new_keys[survivor] = new_hash
            for other in ids:
                if other == survivor:
                    continue
                if other in annotated:
                    why = "has " + ", ".join(sorted(annotated[other]))
                    kept.append(KeptPair(other, survivor, why))
                    holders[keys[other]] = other
                else:
                    plan.merges[other] = survivor
        clash = {
            h
            for i, h in plan.new_keys.items()
            if h in holders and holders[h] != i and h not in frozen
        }
        if not clash:
            break
        frozen |= clash
    summary.kept = kept
    summary.blocked = [
        (i, f"its new hash {hashes[i][:12]} is the key item #{holders.get(hashes[i], '?')} keeps")
        for h in sorted(frozen)
        for i in groups[h]
    ]
    for item_id, new_key in list(plan.new_keys.items()):
        if keys[item_id] == new_key:
            del plan.new_keys[item_id]
            summary.current += 1
    summary.rehashed = len(plan.new_keys)
    summary.merged = len(plan.merges)
    return plan


def _merge(conn: sqlite3.Connection, item_id: int, into: int, now: str) -> None:
    """``item_id`` becomes a duplicate of ``into``, as ingest records one, then goes."""
    for source, path, sha in conn.execute(
        "SELECT source, path, input_sha256 FROM ir_inputs WHERE item_id = ? AND status = 'stored'",
        (item_id,),
    ).fetchall():
        link_duplicate(conn, KIND, f"{path}@{sha[:12]}", source, into, MATCHED_ON, now)
    conn.execute(
        "UPDATE ir_inputs SET status = 'duplicate', item_id = ?, updated_at = ?"
        " WHERE item_id = ? AND status IN ('stored', 'duplicate')",
        (into, now, item_id),
    )
    conn.execute(
        "UPDATE duplicates SET original_item_id = ? WHERE original_item_id = ?", (into, item_id)
    )
    conn.execute("DELETE FROM ir_modules WHERE item_id = ?", (item_id,))
    conn.execute("DELETE FROM items WHERE id = ? AND kind = ?", (item_id, KIND))


def _apply(conn: sqlite3.Connection, plan: _Plan) -> None:
    now = utc_now()
    for item_id, into in plan.merges.items():
        _merge(conn, item_id, into, now)
    # two steps, so that keys swapping places never meet the unique indexes
    for item_id in plan.new_keys:
        temporary = f"rehash:{item_id}"
        conn.execute("UPDATE items SET key = ? WHERE id = ?", (temporary, item_id))
        conn.execute(
            "UPDATE ir_modules SET structural_hash = ? WHERE item_id = ?", (temporary, item_id)
        )
    for item_id, new_key in plan.new_keys.items():
        conn.execute(
            "UPDATE items SET key = ?, dedup_hash = ? WHERE id = ?", (new_key, new_key, item_id)
        )
        conn.execute(
            "UPDATE ir_modules SET structural_hash = ? WHERE item_id = ?", (new_key, item_id)
        )


def _keys(conn: sqlite3.Connection) -> dict[int, str]:
    return {
        int(r[0]): str(r[1])
        for r in conn.execute(
            "SELECT i.id, i.key FROM items i JOIN ir_modules m ON m.item_id = i.id"
            " WHERE i.kind = ?",
            (KIND,),
        )
    }


def rehash_ir(
    store: Store,
    hasher: Callable[[str], str],
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RehashSummary:
    """Compute every IR module's hash again with ``hasher`` (its stored text -> the
    hash; an exception names a module it cannot read) and bring keys up to date, in one
    transaction; ``dry_run`` plans and counts, and writes nothing.

    Hashing runs before the transaction, so a long rehash does not hold the store's
    write lock; modules stored in the meantime are hashed inside it."""
    summary = RehashSummary()
    hashes: dict[int, str] = {}

    def hash_all(ids: list[int]) -> None:
        for done, item_id in enumerate(ids, 1):
            row = store._conn.execute(
                "SELECT text FROM ir_modules WHERE item_id = ?", (item_id,)
            ).fetchone()
            if row is None:
                continue
            try:
                hashes[item_id] = hasher(row[0])
            except Exception as exc:  # any failure to read it again leaves it as it is
                summary.unreadable.append((item_id, " ".join(str(exc).split())[:300]))
            if progress is not None:
                progress(done, len(ids))

    hash_all(sorted(_keys(store._conn)))
    if dry_run:
        keys = _keys(store._conn)
        summary.examined = len(keys)
        _plan(store._conn, keys, {i: h for i, h in hashes.items() if i in keys}, summary)
        return summary
    with store.transaction() as conn:
        keys = _keys(conn)
        seen = {i for i, _ in summary.unreadable}
        hash_all(sorted(i for i in keys if i not in hashes and i not in seen))
        summary.examined = len(keys)
        plan = _plan(conn, keys, {i: h for i, h in hashes.items() if i in keys}, summary)
        _apply(conn, plan)
    summary.written = True
    return summary
