"""Test-only raw SQL on a :class:`store.Store`.

Code outside ``store/`` reaches the database through named store functions, and the
connection is private to the store. Tests that must plant or inspect raw rows (a
corrupted row, a column no function returns, the journal mode) go through these three
helpers, so that reach is written once and easy to find.
"""

from __future__ import annotations

import sqlite3

from store import Store


def query(store: Store, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
    """Every row ``sql`` returns."""
    return store._query(sql, params)


def scalar(store: Store, sql: str, params: tuple | dict = ()) -> object:
    """The first column of the first row, or None."""
    return store._scalar(sql, params)


def connection(store: Store) -> sqlite3.Connection:
    """The store's connection, for tests that execute statements themselves."""
    return store._conn
