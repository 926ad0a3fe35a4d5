"""The ``models`` table: trained labelers (students, TF-IDF baselines) and their versions.

A model's files are written elsewhere first (a staging directory); registration picks
the next version number, moves the directory to its final name and inserts the row in
one write transaction, so a version number is never handed out twice and no row ever
points at a half-written directory.

A family's *current* version (``student@current``) is the one last promoted; promotions
are appended, never edited, so the history says who switched to which version when.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.connection import Store, StoreError, utc_now


@dataclass(frozen=True)
class ModelRow:
    """One registered model: ``name`` is ``family@N``; ``path`` its directory."""

    id: int
    name: str
    base: str
    params: dict[str, Any]
    metrics: dict[str, Any]
    path: str | None
    created_at: str

    @property
    def family(self) -> str:
        return self.name.rsplit("@", 1)[0]

    @property
    def version(self) -> int:
        return int(self.name.rsplit("@", 1)[1])


_COLUMNS = "id, name, base, params, metrics, path, created_at"


def _json_object(name: str, column: str, text: str | None) -> dict[str, Any]:
    """A model's ``params`` or ``metrics``: a JSON object, or a :class:`StoreError` that
    names the model and the column (a hand-edited database can hold anything there)."""
    try:
        value = json.loads(text or "{}")
    except ValueError as exc:
        raise StoreError(f"model {name}: its {column} are not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise StoreError(
            f"model {name}: its {column} are a JSON {type(value).__name__}, not an object"
        )
    return value


def _row(row: Any) -> ModelRow:
    return ModelRow(
        id=row[0],
        name=row[1],
        base=row[2],
        params=_json_object(row[1], "params", row[3]),
        metrics=_json_object(row[1], "metrics", row[4]),
        path=row[5],
        created_at=row[6],
    )


def _like(family: str) -> str:
    escaped = family.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "@%"


def _versions(conn: sqlite3.Connection, family: str) -> list[int]:
    names = conn.execute(
        "SELECT name FROM models WHERE name LIKE ? ESCAPE '\\'", (_like(family),)
    ).fetchall()
    tails = (n[0].rsplit("@", 1)[1] for n in names)
    return sorted(int(t) for t in tails if t.isdecimal())


def get_model(store: Store, name: str) -> ModelRow | None:
    """The model registered as ``name`` (``family@N``), or None."""
    row = store._conn.execute(f"SELECT {_COLUMNS} FROM models WHERE name = ?", (name,)).fetchone()
    return None if row is None else _row(row)


def latest_model(store: Store, family: str) -> ModelRow | None:
    """The highest version of a family (``student`` -> ``student@7``), or None."""
    versions = _versions(store._conn, family)
    return get_model(store, f"{family}@{versions[-1]}") if versions else None


def list_models(store: Store, family: str | None = None) -> list[ModelRow]:
    """Registered models, oldest first, optionally of one family."""
    if family is None:
        rows = store._conn.execute(f"SELECT {_COLUMNS} FROM models ORDER BY id").fetchall()
    else:
        rows = store._conn.execute(
            f"SELECT {_COLUMNS} FROM models WHERE name LIKE ? ESCAPE '\\' ORDER BY id",
            (_like(family),),
        ).fetchall()
    return [_row(r) for r in rows]


def models_dir(store: Store) -> Path:
    """Where model directories live: ``models/`` beside the database file."""
    return store.path.resolve().parent / "models"


def register_model(
    store: Store,
    family: str,
    base: str,
    params: dict[str, Any],
    metrics: dict[str, Any],
    staged: Path,
    now: str | None = None,
) -> ModelRow:
    """Give ``staged`` (a finished directory) the next version of ``family`` and record it.

    The directory is renamed to ``<models dir>/<family>@N`` inside the write transaction;
    if the insert fails the rename is undone, so files and rows never disagree.
    """
    if "@" in family or not family:
        raise ValueError(f"model family {family!r} must be non-empty and hold no '@'")
    target_dir = models_dir(store)
    target_dir.mkdir(parents=True, exist_ok=True)
    stamp = now or utc_now()
    with store.transaction() as conn:
        versions = _versions(conn, family)
        version = (versions[-1] if versions else 0) + 1
        name = f"{family}@{version}"
        final = target_dir / name
        while final.exists():  # left by a crash between rename and commit: skip that number
            version += 1
            name = f"{family}@{version}"
            final = target_dir / name
        os.replace(staged, final)
        try:
            cur = conn.execute(
                "INSERT INTO models (name, base, params, metrics, path, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    name,
                    base,
                    json.dumps(params, sort_keys=True),
                    json.dumps(metrics, sort_keys=True),
                    str(final),
                    stamp,
                ),
            )
        except BaseException:
            os.replace(final, staged)
            raise
    return ModelRow(int(cur.lastrowid or 0), name, base, params, metrics, str(final), stamp)


def update_metrics(store: Store, name: str, metrics: dict[str, Any]) -> None:
    """Merge ``metrics`` into a registered model's metrics (e.g. a later evaluation)."""
    with store.transaction() as conn:
        row = conn.execute("SELECT metrics FROM models WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise KeyError(name)
        merged = {**_json_object(name, "metrics", row[0]), **metrics}
        conn.execute(
            "UPDATE models SET metrics = ? WHERE name = ?",
            (json.dumps(merged, sort_keys=True), name),
        )


@dataclass(frozen=True)
class Promotion:
    """One promotion: ``model`` became its family's current version, replacing
    ``replaced`` (None for the family's first)."""

    family: str
    model: str
    promoted_by: str
    note: str | None
    promoted_at: str
    replaced: str | None = None


_CURRENT = "SELECT model FROM model_promotions WHERE family = ? ORDER BY id DESC LIMIT 1"


def promote_model(store: Store, name: str, by: str, note: str | None = None) -> Promotion | None:
    """Make ``name`` (``family@N``) its family's current version. Returns None, recording
    nothing, when it already is; raises KeyError when no such model is registered."""
    stamp = utc_now()
    family = name.rsplit("@", 1)[0]
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM models WHERE name = ?", (name,)).fetchone() is None:
            raise KeyError(name)
        before = conn.execute(_CURRENT, (family,)).fetchone()
        replaced = None if before is None else str(before[0])
        if replaced == name:
            return None
        conn.execute(
            "INSERT INTO model_promotions (family, model, promoted_by, note, promoted_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (family, name, by, note, stamp),
        )
    return Promotion(family, name, by, note, stamp, replaced)


def promotions(store: Store, family: str | None = None) -> list[Promotion]:
    """Promotions, oldest first, optionally of one family, each with the version it
    replaced."""
    sql = "SELECT family, model, promoted_by, note, promoted_at FROM model_promotions"
    args: tuple[str, ...] = ()
    if family is not None:
        sql += " WHERE family = ?"
        args = (family,)
    last: dict[str, str] = {}
    found = []
    for row in store._conn.execute(sql + " ORDER BY id", args):
        found.append(Promotion(*row, replaced=last.get(row[0])))
        last[row[0]] = row[1]
    return found


def current_model(store: Store, family: str) -> ModelRow | None:
    """The family's last promoted version, or None when none has been promoted."""
    row = store._conn.execute(_CURRENT, (family,)).fetchone()
    return None if row is None else get_model(store, row[0])
