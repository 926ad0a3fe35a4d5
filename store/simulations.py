"""The ``simulations`` table: results of simulated runs (an active-learning simulation's
F1 against votes per queue order), kept so the app can draw them later.

A row is written once, in one transaction, and never edited; the newest of a kind is
the one shown. ``params`` says what was simulated (pool, eval set, K, seeds), ``result``
holds the curves, both as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from store.connection import Store, utc_now


@dataclass(frozen=True)
class SimulationRow:
    """One stored simulation: ``pool`` and ``eval`` name what it ran on (a set or a
    file)."""

    id: int
    kind: str
    pool: str
    eval: str
    params: dict[str, Any]
    result: dict[str, Any]
    created_at: str


_COLUMNS = "id, kind, pool, eval, params, result, created_at"


def _row(row: Any) -> SimulationRow:
    return SimulationRow(
        id=row[0],
        kind=row[1],
        pool=row[2],
        eval=row[3],
        params=json.loads(row[4] or "{}"),
        result=json.loads(row[5] or "{}"),
        created_at=row[6],
    )


def record_simulation(
    store: Store,
    kind: str,
    pool: str,
    eval_set: str,
    params: dict[str, Any],
    result: dict[str, Any],
    now: str | None = None,
) -> SimulationRow:
    """Store one simulation's result and return its row."""
    stamp = now or utc_now()
    with store.transaction() as conn:
        cursor = conn.execute(
            "INSERT INTO simulations (kind, pool, eval, params, result, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (kind, pool, eval_set, json.dumps(params), json.dumps(result), stamp),
        )
        row_id = int(cursor.lastrowid or 0)
    found = get_simulation(store, row_id)
    assert found is not None
    return found


def get_simulation(store: Store, simulation_id: int) -> SimulationRow | None:
    row = store._conn.execute(
        f"SELECT {_COLUMNS} FROM simulations WHERE id = ?", (simulation_id,)
    ).fetchone()
    return None if row is None else _row(row)


def list_simulations(store: Store, kind: str | None = None) -> list[SimulationRow]:
    """Stored simulations, oldest first, optionally of one kind."""
    if kind is None:
        rows = store._conn.execute(f"SELECT {_COLUMNS} FROM simulations ORDER BY id").fetchall()
    else:
        rows = store._conn.execute(
            f"SELECT {_COLUMNS} FROM simulations WHERE kind = ? ORDER BY id", (kind,)
        ).fetchall()
    return [_row(r) for r in rows]


def latest_simulation(store: Store, kind: str) -> SimulationRow | None:
    """The newest stored simulation of ``kind``, or None."""
    row = store._conn.execute(
        f"SELECT {_COLUMNS} FROM simulations WHERE kind = ? ORDER BY id DESC LIMIT 1", (kind,)
    ).fetchone()
    return None if row is None else _row(row)
