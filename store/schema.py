"""What the database holds, read back through sqlite-utils: tables, their columns, keys,
indexes and row counts.

sqlite-utils is imported inside the function, never at module level: importing it pulls
in pandas (about 0.4 s), and ``import store`` has to stay cheap for every command. The
full-text search tables (``store/search.py``) are laid out the way sqlite-utils lays
them out, so it recognises them: each ``<table>_fts`` is listed, its shadow tables
(``_data``, ``_idx``, ``_docsize``, ``_config``) are not.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.connection import Store


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    type: str
    not_null: bool
    primary_key: bool


@dataclass(frozen=True)
class TableInfo:
    """One table as SQLite describes it; ``references`` are ``(column, other table)``
    pairs of its foreign keys."""

    name: str
    columns: tuple[ColumnInfo, ...]
    references: tuple[tuple[str, str], ...]
    indexes: tuple[str, ...]
    rows: int

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def describe_tables(store: Store, *, count_rows: bool = True) -> dict[str, TableInfo]:
    """Every table of the database by name (SQLite's own tables aside); ``rows`` is 0
    unless ``count_rows`` (a full count per table)."""
    import sqlite_utils

    db = sqlite_utils.Database(store._conn, execute_plugins=False)
    tables: dict[str, TableInfo] = {}
    names = db.table_names()
    fts = {n for n in names if n.endswith("_fts")}
    shadow = {f"{n}_{part}" for n in fts for part in ("data", "idx", "docsize", "config")}
    for name in names:
        if name.startswith("sqlite_") or name in shadow:
            continue
        table = db.table(name)
        tables[name] = TableInfo(
            name=name,
            columns=tuple(
                ColumnInfo(c.name, c.type, bool(c.notnull), bool(c.is_pk)) for c in table.columns
            ),
            references=tuple((fk.column, fk.other_table) for fk in table.foreign_keys),
            indexes=tuple(sorted(i.name for i in table.indexes)),
            rows=table.count if count_rows else 0,
        )
    return tables
