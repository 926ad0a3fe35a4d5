"""Curator's SQLite store: schema, migrations and the queries every other layer uses.

Nothing outside this package opens the database or writes SQL. The package imports
nothing from the rest of Curator.
"""

from store.connection import DatabaseError, Store, StoreError, open_store, resolve_db_path
from store.migrations import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "DatabaseError",
    "Store",
    "StoreError",
    "open_store",
    "resolve_db_path",
]
