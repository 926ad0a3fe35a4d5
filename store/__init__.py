"""Curator's SQLite store: schema, migrations and the queries every other layer uses.

Nothing outside this package opens the database or writes SQL. The package imports
nothing from the rest of Curator.
"""

from store.connection import Store, open_store
from store.migrations import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "Store", "open_store"]
