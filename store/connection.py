"""Opening the database: pragmas, migrations, and the write-transaction helper."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils

from store.migrations import migrate

DEFAULT_DB = "curator.db"
BUSY_TIMEOUT_MS = 30_000


def utc_now() -> str:
    """A sortable ISO-8601 UTC timestamp with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class StoreError(Exception):
    """The database cannot be opened or is not a Curator store."""


class Store:
    """One connection to a Curator database.

    Reads run in autocommit mode; every write goes through :meth:`transaction`,
    which takes the write lock up front (``BEGIN IMMEDIATE``) so two processes
    writing at once queue on the busy timeout instead of failing half-way.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self.db = sqlite_utils.Database(conn, execute_plugins=False)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block of writes atomically; nested calls join the outer transaction."""
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: tuple | dict = ()) -> object:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _enable_wal(conn: sqlite3.Connection, db_path: Path) -> None:
    """Switch to WAL, waiting for other writers: on a new file SQLite refuses the switch
    at once (ignoring the busy timeout) while another connection holds the write lock."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    if mode.lower() != "wal":
        raise StoreError(f"{db_path}: could not switch to WAL journal mode (got {mode})")


def open_store(path: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open (and create or migrate) the store at ``path``, else ``./curator.db``. The app
    decides the path (flag, ``$CURATOR_DB``, config files: ``curator.settings``)."""
    db_path = Path(path) if path else Path(DEFAULT_DB)
    if not create and not db_path.exists():
        raise StoreError(f"{db_path}: no such database")
    if db_path.parent and not db_path.parent.exists():
        db_path.parent.mkdir(parents=True, exist_ok=True)
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        _enable_wal(conn, db_path)
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise StoreError(f"{db_path}: not a usable Curator database ({exc})") from exc
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    return Store(db_path, conn)
