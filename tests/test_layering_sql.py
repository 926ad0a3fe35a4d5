"""SQL lives only in ``store/`` (docs/architecture.md), and ``import store`` stays cheap.

The checker walks every module of the layers above the store and reports:

* a string literal (an f-string included, docstrings skipped) that reads as an SQL
  statement: an upper-case statement keyword at its start together with the word that
  makes it a statement (``SELECT ... FROM``, ``SELECT 1``, ``INSERT ... INTO``, ``UPDATE ... SET``,
  ``DELETE FROM``, ``CREATE/DROP/ALTER ... TABLE|INDEX|VIEW|TRIGGER``, ``PRAGMA name``,
  ``SAVEPOINT``/``RELEASE``/``ROLLBACK``/``BEGIN``/``COMMIT``, ``WITH name AS (``), or a
  clause (``WHERE col =``, ``ORDER BY``/``GROUP BY col``) glued onto one. Keywords must be
  upper case, as the store writes them, so prose such as "Select a set from the list"
  does not trip it;
* the store's private way in: an attribute ``conn``, ``_conn``, ``_query`` or ``_scalar``;
* ``execute``/``executemany``/``executescript`` called with a string as its statement or
  on something named like a connection, cursor or store (``device.execute(kernel, ...)``
  passes);
* ``import sqlite3`` or ``import sqlite_utils`` (catch ``store.DatabaseError`` instead).

Nothing is allow-listed.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ABOVE_THE_STORE = ("curator", "annotation", "engines", "scripts")

_STATEMENT = re.compile(
    r"""^\s*(?:
        SELECT\b.*\bFROM\b
      | SELECT\s+(?:\d+|\w+\(.*\))\s*;?\s*$
      | INSERT\b.*\bINTO\b
      | (?:REPLACE|INSERT\s+OR\s+\w+)\s+INTO\b
      | UPDATE\s+\w+\s+SET\b
      | DELETE\s+FROM\b
      | (?:CREATE|DROP|ALTER)\b.*\b(?:TABLE|INDEX|VIEW|TRIGGER)\b
      | PRAGMA\s+\w+
      | SAVEPOINT\s+\w+
      | RELEASE\s+(?:SAVEPOINT\s+)?\w+\s*;?\s*$
      | ROLLBACK\b\s*(?:TO\b|TRANSACTION\b|;|$)
      | (?:BEGIN|COMMIT)\b\s*(?:IMMEDIATE\b|EXCLUSIVE\b|DEFERRED\b|TRANSACTION\b|;|$)
      | WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(
      | (?:WHERE|AND|OR)\s+[\w.]+\s*(?:=|<|>|!=|\bIN\b|\bIS\b|\bLIKE\b)
      | (?:ORDER|GROUP)\s+BY\s+[\w.]+
    )""",
    re.VERBOSE | re.DOTALL,
)
_PRIVATE_WAY_IN = {"conn", "_conn", "_query", "_scalar"}
_EXECUTE = {"execute", "executemany", "executescript"}
_CONNECTION_NAMES = re.compile(r"^_?(conn|connection|cursor|cur|db|store|sqlite)\w*$")
_DATABASE_MODULES = {"sqlite3", "sqlite_utils"}


def looks_like_sql(text: str) -> bool:
    return _STATEMENT.match(text) is not None


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.add(id(body[0].value))
    return found


def _fstring_text(node: ast.JoinedStr) -> str:
    """An f-string's text with each ``{...}`` replaced by a placeholder word."""
    return "".join(
        v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
        for v in node.values
    )


def _is_string(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_string(node.left) or _is_string(node.right)
    return False


def _receiver_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def sql_violations(path: Path, shown_as: str | None = None) -> Iterator[str]:
    """Every place in the module at ``path`` that runs or spells SQL outside the store."""
    name = shown_as or str(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = _docstrings(tree)
    in_fstring = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    for node in ast.walk(tree):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            prose = id(node) in docstrings or id(node) in in_fstring
            if not prose and looks_like_sql(node.value):
                yield f"{where}: SQL in a string: {node.value[:60]!r}"
        elif isinstance(node, ast.JoinedStr):
            text = _fstring_text(node)
            if looks_like_sql(text):
                yield f"{where}: SQL in an f-string: {text[:60]!r}"
        elif isinstance(node, ast.Attribute) and node.attr in _PRIVATE_WAY_IN:
            yield f"{where}: .{node.attr} reaches into the store's connection"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _EXECUTE
            and (
                (node.args and _is_string(node.args[0]))
                or _CONNECTION_NAMES.match(_receiver_name(node.func.value))
            )
        ):
            yield f"{where}: .{node.func.attr}() runs a statement outside the store"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _DATABASE_MODULES:
                    yield f"{where}: imports {alias.name}"
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.split(".")[0] in _DATABASE_MODULES
        ):
            yield f"{where}: imports from {node.module}"


def test_no_sql_outside_the_store() -> None:
    violations = [
        problem
        for package in ABOVE_THE_STORE
        for path in sorted((ROOT / package).rglob("*.py"))
        for problem in sql_violations(path, str(path.relative_to(ROOT)))
    ]
    assert violations == []


PLANTED = '''
"""A module docstring may say SELECT id FROM items: docstrings are prose."""
import sqlite3

LIMIT = "SELECT id FROM items WHERE kind = 'commit'"


def probe(store, name):
    """DELETE FROM here is prose too."""
    store.conn.execute(f"SAVEPOINT {name}")
    store._scalar("SELECT 1")
    rows = store._query(LIMIT + " ORDER BY id")
    conn = store.transaction()
    conn.execute(LIMIT)
    return rows, "RELEASE probe", "Select a set from the list", "BEGIN IMMEDIATE"


def unrelated(device, kernel, payload):
    return device.execute(kernel, payload), "Order by date, newest first"
'''


def test_the_checker_finds_planted_sql_and_spares_prose(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(PLANTED, encoding="utf-8")
    found = list(sql_violations(planted, "planted.py"))
    lines = sorted(int(p.split(":")[1]) for p in found)
    text = "\n".join(found)
    assert "imports sqlite3" in text
    assert "SQL in a string: \"SELECT id FROM items WHERE kind = 'commit'\"" in text
    assert "SQL in an f-string: 'SAVEPOINT x'" in text
    assert ".conn reaches into" in text
    assert ".execute() runs a statement" in text
    for private in ("_scalar", "_query"):
        assert f".{private} reaches into the store's connection" in text
    for literal in ("'SELECT 1'", "' ORDER BY id'", "'RELEASE probe'", "'BEGIN IMMEDIATE'"):
        assert f"SQL in a string: {literal}" in text
    # docstrings, UI prose and a device's execute() are not SQL
    assert 2 not in lines and 9 not in lines and 19 not in lines
    assert "Select a set" not in text and "Order by date" not in text


def test_the_statement_rule_on_its_own() -> None:
    sql = [
        "SELECT COUNT(*) FROM items",
        "SELECT 1",
        "SELECT changes()",
        "  INSERT INTO votes (a) VALUES (?)",
        "INSERT OR IGNORE INTO sets VALUES (1)",
        "UPDATE items SET key = ?",
        "DELETE FROM votes",
        "CREATE TABLE t (a)",
        "CREATE UNIQUE INDEX i ON t (a)",
        "PRAGMA journal_mode",
        "ROLLBACK TO probe",
        "ROLLBACK",
        "COMMIT",
        "WITH recent AS (SELECT 1) SELECT * FROM recent",
        " WHERE item_id = ?",
        " ORDER BY position",
    ]
    prose = [
        "Select a set from the list",
        "SELECT ALL to mark every item",
        "select the items from the queue",
        "UPDATE available: run pip install --upgrade",
        "Delete the vote?",
        "Begin labeling",
        "WITH care",
        "RELEASE NOTES for version 2 and more",
        "where the item came from",
        "ORDER",
    ]
    assert [s for s in sql if not looks_like_sql(s)] == []
    assert [s for s in prose if looks_like_sql(s)] == []


def test_importing_store_loads_neither_sqlite_utils_nor_pandas() -> None:
    code = (
        "import sys, store, store.schema, store.stats, store.bulk;"
        "print(sorted(m for m in ('pandas', 'sqlite_utils') if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert proc.stdout.strip() == "[]"
