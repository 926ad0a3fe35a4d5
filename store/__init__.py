"""Curator's SQLite store: schema, migrations and the queries every other layer uses.

Nothing outside this package opens the database or writes SQL: other layers call the
named functions of its modules and the :class:`Store` methods ``transaction``,
``savepoint`` and ``schema_version``; the connection is private to this package. The
package imports nothing from the rest of Curator, and sqlite-utils only lazily.
"""

from store.connection import DatabaseError, Store, StoreError, open_store
from store.migrations import SCHEMA_VERSION

__all__ = ["SCHEMA_VERSION", "DatabaseError", "Store", "StoreError", "open_store"]
