"""Opening the database: pragmas, migrations, and the transaction and savepoint helpers.

The connection and the raw ``_query``/``_scalar`` helpers are internal to ``store``: the
modules of this package use them; every other layer calls the named functions those
modules define (``tests/raw_sql.py`` is the one test-only way to raw rows).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from store.migrations import SCHEMA_VERSION, Progress, current_version, migrate

DEFAULT_DB = "curator.db"
BUSY_TIMEOUT_MS = 30_000
"""How long a command waits for another process's write lock before it gives up."""
NOTICE_AFTER_MS = 1_000
"""How long a wait for the write lock goes on before ``waiting`` hears of it."""

Waiting = Callable[[Path], None]
"""Told once per wait, with the database's path, that another process holds its write
lock and the busy timeout's wait has begun (the CLI says so on stderr)."""


def utc_now() -> str:
    """A sortable ISO-8601 UTC timestamp with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class StoreError(Exception):
    """The database cannot be opened or is not a Curator store."""


class StoreLockedError(StoreError, sqlite3.OperationalError):
    """Another process held the write lock for longer than the busy timeout; a
    ``DatabaseError`` too, for callers that catch what SQLite refuses."""


def _locked(db_path: Path, exc: BaseException) -> StoreLockedError:
    return StoreLockedError(
        f"{db_path}: locked by another process (a long write, or the migration of an older"
        f" database) for over {BUSY_TIMEOUT_MS // 1000} s: nothing was written; run the"
        f" command again when it is done ({exc})"
    )


def _is_locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc)
    )


DatabaseError = sqlite3.Error
"""What SQLite raises when it refuses a statement (a constraint, a locked database...),
so callers outside ``store`` can catch it without importing ``sqlite3``."""

_SAVEPOINT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Store:
    """One connection to a Curator database.

    Reads run in autocommit mode; every write goes through :meth:`transaction`,
    which takes the write lock up front (``BEGIN IMMEDIATE``) so two processes
    writing at once queue on the busy timeout instead of failing half-way.
    """

    def __init__(
        self, path: Path, conn: sqlite3.Connection, waiting: Waiting | None = None
    ) -> None:
        self.path = path
        self._conn = conn
        self._identity = _identity(path)
        self._waiting = waiting

    def _check_in_place(self) -> None:
        """A database file moved or deleted since it was opened still takes writes, which
        would then be lost: refuse them instead."""
        if self._identity is not None and _identity(self.path) != self._identity:
            raise StoreError(
                f"{self.path}: the database file was moved or deleted since it was opened;"
                " nothing was written"
            )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block of writes atomically; nested calls join the outer transaction.

        The connection it yields is for the store's own modules."""
        if self._conn.in_transaction:
            yield self._conn
            return
        self._check_in_place()
        try:
            _begin_immediate(self._conn, self.path, self._waiting)
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                raise _locked(self.path, exc) from exc
            raise
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back already (a full disk, an I/O error): then the
            # error that caused it is the one to report, not a failed ROLLBACK
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    @contextmanager
    def savepoint(self, name: str = "savepoint", *, undo: bool = False) -> Iterator[None]:
        """Run a block inside a transaction as one step that can be undone alone: on an
        error the block's writes are rolled back (the outer transaction's stay) and the
        error goes on; with ``undo`` they are rolled back even when it succeeds (a trial).
        Must be called inside :meth:`transaction`."""
        if not _SAVEPOINT_NAME.fullmatch(name):
            raise ValueError(f"not a savepoint name: {name!r}")
        if not self._conn.in_transaction:
            raise RuntimeError("savepoint() runs inside store.transaction()")
        self._conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            raise
        if undo:
            self._conn.execute(f"ROLLBACK TO {name}")
        self._conn.execute(f"RELEASE {name}")

    def schema_version(self) -> int:
        """The newest migration this database has run."""
        return current_version(self._conn)

    def _query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self._conn.execute(sql, params).fetchall()

    def _scalar(self, sql: str, params: tuple | dict = ()) -> object:
        row = self._conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _begin_immediate(conn: sqlite3.Connection, db_path: Path, waiting: Waiting | None) -> None:
    """``BEGIN IMMEDIATE``, waiting up to the busy timeout for another process's write
    lock; ``waiting`` hears once when that wait passes :data:`NOTICE_AFTER_MS`."""
    if waiting is None or BUSY_TIMEOUT_MS <= NOTICE_AFTER_MS:
        conn.execute("BEGIN IMMEDIATE")
        return
    first = NOTICE_AFTER_MS
    conn.execute(f"PRAGMA busy_timeout = {first}")
    try:
        conn.execute("BEGIN IMMEDIATE")
        return
    except sqlite3.OperationalError as exc:
        if not _is_locked(exc):
            raise
        waiting(db_path)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS - first}")
        conn.execute("BEGIN IMMEDIATE")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _enable_wal(conn: sqlite3.Connection, db_path: Path, waiting: Waiting | None) -> None:
    """Switch to WAL, waiting for other writers: on a new file SQLite refuses the switch
    at once (ignoring the busy timeout) while another connection holds the write lock."""
    start = time.monotonic()
    deadline = start + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    told = False
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            if waiting and not told and time.monotonic() - start > NOTICE_AFTER_MS / 1000:
                waiting(db_path)
                told = True
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    if mode.lower() != "wal":
        raise StoreError(f"{db_path}: could not switch to WAL journal mode (got {mode})")


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None if str(path) == ":memory:" else (-1, -1)
    return found.st_dev, found.st_ino


def _refuse_foreign(conn: sqlite3.Connection, db_path: Path) -> None:
    """Another program's SQLite file, and one a newer Curator wrote, are left untouched:
    not even switched to WAL."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    if tables and "schema_version" not in tables:
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{db_path}: an SQLite database that is not Curator's (tables {shown}, no"
            " schema_version); nothing was written to it"
        )
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{db_path}: written by a newer Curator (schema version {version}; this one knows"
            f" up to {SCHEMA_VERSION}): upgrade Curator to open it; nothing was written to it"
        )


def _check_path(db_path: Path) -> None:
    """Refuse a path no database can be at, before SQLite touches it: a folder, a device
    or a pipe, one under a file (``notes.txt/curator.db``), a name too long for the file
    system, a loop of symbolic links."""
    if str(db_path) == ":memory:":
        return
    try:
        found = os.stat(db_path)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        blocker = next(
            (p for p in db_path.absolute().parents if p.exists() and not p.is_dir()), None
        )
        where = f"{blocker} is a file" if blocker else "a folder on its path is a file"
        raise StoreError(f"{db_path}: cannot be created: {where}, not a folder") from None
    except OSError as exc:
        raise StoreError(f"{db_path}: cannot be used ({exc.strerror})") from None
    if stat.S_ISDIR(found.st_mode):
        raise StoreError(
            f"{db_path}: is a folder: name a database file inside it, e.g. {db_path / DEFAULT_DB}"
        )
    if not stat.S_ISREG(found.st_mode):
        raise StoreError(
            f"{db_path}: not a regular file (a device, a pipe or a socket): name a database file"
        )


def _open_problem(message: str, db_path: Path) -> str:
    """What an SQLite error while opening most likely means, in words."""
    if "not a database" in message:
        return "not a usable Curator database (not SQLite at all)"
    if "malformed" in message:
        return "not a usable Curator database (damaged: restore it from a copy)"
    if "readonly" in message or "read-only" in message:
        return "read-only: Curator needs to write beside it (its -wal and -shm files)"
    if "full" in message or "I/O" in message:
        return "cannot be opened: is the disk full, or did its folder go away?"
    if "unable to open" in message:
        return f"cannot be opened or created (may you write in {db_path.parent}?)"
    return "not a usable Curator database"


def open_store(
    path: str | os.PathLike[str] | None = None,
    *,
    create: bool = True,
    progress: Progress | None = None,
    waiting: Waiting | None = None,
) -> Store:
    """Open (and create or migrate) the store at ``path``, else ``./curator.db``. The app
    decides the path (flag, ``$CURATOR_DB``, config files: ``curator.settings``).
    ``progress(what, done, total)`` hears how a long migration is getting on;
    ``waiting(path)`` hears when this store, opening or later, waits for another
    process's write lock."""
    db_path = Path(path) if path else Path(DEFAULT_DB)
    _check_path(db_path)
    if not create and not db_path.exists():
        raise StoreError(f"{db_path}: no such database")
    if db_path.parent and not db_path.parent.exists():
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{db_path}: its folder cannot be created ({exc.strerror}); nothing was written"
            ) from exc
    conn: sqlite3.Connection | None = None
    try:
        conn = opened = sqlite3.connect(
            db_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        _refuse_foreign(conn, db_path)
        _enable_wal(conn, db_path, waiting)
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn, progress, lambda: _begin_immediate(opened, db_path, waiting))
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        if _is_locked(exc):
            raise _locked(db_path, exc) from exc
        problem = _open_problem(str(exc), db_path)
        if (
            "unable to open" in str(exc)
            and db_path.exists()
            and not os.access(db_path.parent, os.W_OK)
        ):
            problem = "read-only: Curator needs to write beside it (its -wal and -shm files)"
        raise StoreError(f"{db_path}: {problem} ({exc})") from exc
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    return Store(db_path, conn, waiting)
