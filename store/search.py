"""Full-text search: SQLite FTS5 indexes over the store's text, and the queries on them.

One external-content FTS5 table per table that holds text, laid out exactly as
sqlite-utils' ``Table.enable_fts(columns, create_triggers=True)`` lays it out
(``<table>_fts`` over ``content=<table>``, triggers ``<table>_ai``/``_ad``/``_au``), so
sqlite-utils recognises and maintains them (``detect_fts``, ``search``, ``rebuild_fts``,
``optimize``). The index holds only tokens, not a second copy of the text: snippets are
read back from the rows themselves. Triggers keep every index current inside the
transaction that writes the row (an update trigger fires only when an indexed column
changes, so a kernel's check verdict does not re-index its source).

The migration that creates the indexes fills them in batches with a progress callback,
so a large existing database shows how far the build has got.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # store.connection runs the migrations, which build these indexes
    from store.connection import Store

Progress = Callable[[str, int, int], None]
"""``progress(what, done, total)``: called while an index is being built."""

HIGHLIGHT_START = "\ue000"
HIGHLIGHT_END = "\ue001"
"""Private-use characters that mark a matched term inside a snippet. Text that holds
them itself only shows a stray highlight: callers split on them into styled segments and
never parse the text as markup."""

_BATCH = 2000


@dataclass(frozen=True)
class FtsSource:
    """One indexed table: the columns searched, and how a row leads to its item."""

    table: str
    columns: tuple[str, ...]
    kind: str | None  # the item kind every row of the table has, None when mixed
    item_sql: str  # expression giving the item id from ``t`` (the content row)

    @property
    def fts(self) -> str:
        return f"{self.table}_fts"


SOURCES: tuple[FtsSource, ...] = (
    FtsSource("items", ("key", "path"), None, "t.id"),
    FtsSource("commits", ("message", "diff"), "commit", "t.item_id"),
    FtsSource("kernels", ("kernel_name", "original_source"), "kernel", "t.item_id"),
    FtsSource("ir_modules", ("project", "text"), "ir", "t.item_id"),
    FtsSource("live_votes", ("note",), None, "t.item_id"),
)
"""Every index, in the order a tie between equal scores is broken."""

FIELDS = {c: s.table for s in SOURCES for c in s.columns}
"""A column a query may name (``message: cache``) -> the table that has it."""

TOKENIZER = "unicode61 remove_diacritics 2"


class SearchSyntaxError(ValueError):
    """FTS5 refused the query (unbalanced quotes, a bare operator, an unknown column)."""


class NoWordsError(ValueError):
    """A query FTS5 accepts whose every term holds no token (``_``, ``—``, ``"->"``): the
    tokenizer keeps letters and digits only, so it could never match anything."""


@dataclass(frozen=True)
class Hit:
    """One matching item: its best bm25 score over the indexes (lower is better), the
    column that scored it and a snippet with matched terms between the highlight marks."""

    item_id: int
    kind: str
    key: str
    source: str
    path: str | None
    score: float
    field: str
    snippet: str


def _create_sql(source: FtsSource) -> list[str]:
    cols = ", ".join(f"[{c}]" for c in source.columns)
    old = ", ".join(f"old.[{c}]" for c in source.columns)
    new = ", ".join(f"new.[{c}]" for c in source.columns)
    t, f = f"[{source.table}]", f"[{source.fts}]"
    return [
        f"CREATE VIRTUAL TABLE {f} USING FTS5 (\n    {cols},\n"
        f"    tokenize='{TOKENIZER}',\n    content={t}\n)",
        f"CREATE TRIGGER [{source.table}_ai] AFTER INSERT ON {t} BEGIN\n"
        f"  INSERT INTO {f} (rowid, {cols}) VALUES (new.rowid, {new});\nEND",
        f"CREATE TRIGGER [{source.table}_ad] AFTER DELETE ON {t} BEGIN\n"
        f"  INSERT INTO {f} ({f}, rowid, {cols}) VALUES('delete', old.rowid, {old});\nEND",
        f"CREATE TRIGGER [{source.table}_au] AFTER UPDATE OF {cols} ON {t} BEGIN\n"
        f"  INSERT INTO {f} ({f}, rowid, {cols}) VALUES('delete', old.rowid, {old});\n"
        f"  INSERT INTO {f} (rowid, {cols}) VALUES (new.rowid, {new});\nEND",
    ]


def create_indexes(conn: sqlite3.Connection, progress: Progress | None = None) -> None:
    """Create every FTS5 index with its triggers and fill it from the rows already
    stored, in rowid batches, calling ``progress`` after each. Runs inside the caller's
    transaction (the migration's)."""
    for source in SOURCES:
        for statement in _create_sql(source):
            conn.execute(statement)
    totals = {
        s.table: conn.execute(f"SELECT COUNT(*) FROM [{s.table}]").fetchone()[0] for s in SOURCES
    }
    for source in SOURCES:
        _fill(conn, source, int(totals[source.table]), progress)


def _fill(
    conn: sqlite3.Connection, source: FtsSource, total: int, progress: Progress | None
) -> None:
    cols = ", ".join(f"[{c}]" for c in source.columns)
    done, last = 0, -1
    if progress is not None:
        progress(source.table, 0, total)
    while done < total:
        row = conn.execute(
            f"SELECT MAX(rowid), COUNT(*) FROM (SELECT rowid FROM [{source.table}]"
            " WHERE rowid > ? ORDER BY rowid LIMIT ?)",
            (last, _BATCH),
        ).fetchone()
        if not row[1]:
            break
        conn.execute(
            f"INSERT INTO [{source.fts}] (rowid, {cols}) SELECT rowid, {cols}"
            f" FROM [{source.table}] WHERE rowid > ? AND rowid <= ?",
            (last, row[0]),
        )
        last, done = int(row[0]), done + int(row[1])
        if progress is not None:
            progress(source.table, done, total)


def rebuild(store: Store, progress: Progress | None = None) -> None:
    """Rebuild every index from its table through sqlite-utils (``rebuild_fts``), then
    merge its segments (``optimize``): the repair for an index suspected stale."""
    import sqlite_utils

    db = sqlite_utils.Database(store._conn, execute_plugins=False)
    for n, source in enumerate(SOURCES, start=1):
        db[source.table].rebuild_fts()
        db[source.table].optimize()
        if progress is not None:
            progress(source.table, n, len(SOURCES))


def index_bytes(store: Store) -> int:
    """Bytes the FTS5 indexes take on disk (their shadow tables), by ``dbstat``."""
    names = [f"{s.fts}_{part}" for s in SOURCES for part in ("data", "idx", "docsize", "config")]
    marks = ",".join("?" * len(names))
    try:
        value = store._scalar(f"SELECT SUM(pgsize) FROM dbstat WHERE name IN ({marks})", names)
    except sqlite3.OperationalError:  # SQLite built without dbstat
        return 0
    return int(value or 0)


@dataclass(frozen=True)
class Scope:
    """Which items a search may return: a kind, a set's members, an explicit list."""

    kind: str | None = None
    set_id: int | None = None
    item_ids: Sequence[int] | None = None
    note_reader: str | None = None
    """When given, notes on items of a blind set match only if this annotator wrote them:
    a blind set hides the others' votes, their notes included."""


def _scope_sql(source: FtsSource, scope: Scope, item: str) -> tuple[str, list[object]]:
    where: list[str] = []
    params: list[object] = []
    if scope.kind is not None and source.kind is None:
        where.append(f"(SELECT kind FROM items WHERE id = {item}) = ?")
        params.append(scope.kind)
    if scope.set_id is not None:
        where.append(f"EXISTS (SELECT 1 FROM set_items WHERE set_id = ? AND item_id = {item})")
        params.append(scope.set_id)
    if scope.item_ids is not None:
        where.append(f"{item} IN (SELECT item_id FROM temp.search_scope)")
    if scope.note_reader is not None and source.table == "live_votes":
        where.append(
            "(t.annotator = ? OR NOT EXISTS (SELECT 1 FROM set_items AS si JOIN sets AS s"
            f" ON s.id = si.set_id WHERE si.item_id = {item} AND s.blind = 1))"
        )
        params.append(scope.note_reader)
    return "".join(f" AND {w}" for w in where), params


def _load_scope(store: Store, ids: Iterable[int]) -> None:
    """The allowed item ids into this connection's temporary table, in one deferred
    transaction (it writes only the temporary database, so it takes no write lock)."""
    conn = store._conn
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS search_scope (item_id INTEGER PRIMARY KEY)")
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        conn.execute("DELETE FROM temp.search_scope")
        conn.executemany(
            "INSERT OR IGNORE INTO temp.search_scope (item_id) VALUES (?)", ((i,) for i in ids)
        )
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")


RANK_WINDOW = 1_000
"""The most matches of one index that bm25 scores for a query: a query matching more is
ranked among the newest this many (scoring costs about 7 microseconds a match, so a word
in half of a million items would otherwise take seconds)."""


@dataclass(frozen=True)
class Found:
    """What a search found; ``windowed`` when some index matched more than its ranking
    window, so the ranking covers the newest matches only."""

    hits: list[Hit]
    windowed: bool = False


def search(
    store: Store, query: str, scope: Scope = Scope(), limit: int = 20, window: int = RANK_WINDOW
) -> Found:
    """Items matching an FTS5 query, best bm25 first, with a snippet each.

    Each index answers on its own (a query naming a column only some indexes have is
    asked only of those); an item found by several keeps its best score. Raises
    :class:`SearchSyntaxError` with FTS5's own message when no index accepts the query."""
    if scope.item_ids is not None:
        _load_scope(store, scope.item_ids)
    best: dict[int, tuple[float, int, int]] = {}
    refused: list[str] = []
    asked, windowed = 0, False
    for order, source in enumerate(SOURCES):
        if scope.kind is not None and source.kind not in (None, scope.kind):
            continue
        asked += 1
        try:
            rows, matched = _match(store, source, query, scope, limit, window)
        except sqlite3.OperationalError as exc:
            refused.append(str(exc))
            continue
        windowed = windowed or matched > window
        for item_id, rowid, score in rows:
            seen = best.get(item_id)
            if seen is None or (score, order) < seen[:2]:
                best[item_id] = (score, order, rowid)
    if asked and len(refused) == asked:
        raise SearchSyntaxError(_why(refused))
    if not best and not has_words(query):
        raise NoWordsError(query)
    ranked = sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0]))[:limit]
    meta = _items(store, [item_id for item_id, _ in ranked])
    hits = []
    for item_id, (score, order, rowid) in ranked:
        if item_id in meta:
            column, snippet = _snippet(store, SOURCES[order], query, rowid)
            hits.append(Hit(item_id, *meta[item_id], score=score, field=column, snippet=snippet))
    return Found(hits, windowed)


# In a query FTS5 accepts: a string, a {column list}, a bareword, or any other character.
_QUERY_PART = re.compile(r'"((?:[^"]|"")*)"|(\{[^}]*\})|([\w\x1a\x80-\U0010ffff]+)|(.)', re.S)


def query_terms(query: str) -> list[str]:
    """The text of each term of an FTS5 query (strings unquoted): no operator, column
    name, column list or ``NEAR`` distance."""
    terms: list[str] = []
    parts = list(_QUERY_PART.finditer(query))
    for n, part in enumerate(parts):
        string, _columns, bare = part.group(1), part.group(2), part.group(3)
        if string is not None:
            terms.append(string.replace('""', '"'))
            continue
        if bare is None:
            continue
        after = next((p.group() for p in parts[n + 1 :] if not p.group().isspace()), "")
        before = next((p.group() for p in reversed(parts[:n]) if not p.group().isspace()), "")
        if bare in ("AND", "OR", "NOT") or (bare == "NEAR" and after == "("):
            continue
        if after == ":" or before == ",":  # a column name; NEAR's distance
            continue
        terms.append(bare)
    return terms


def has_words(query: str) -> bool:
    """Whether any term of ``query`` yields a token under the indexes' tokenizer (asked of
    SQLite itself, through a scratch in-memory index)."""
    terms = query_terms(query)
    if not terms:
        return False
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (x, tokenize='{TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        conn.executemany("INSERT INTO t (x) VALUES (?)", [(t,) for t in terms])
        return bool(conn.execute("SELECT COUNT(*) FROM v").fetchone()[0])
    finally:
        conn.close()


def _why(messages: list[str]) -> str:
    # An unknown column in one index is expected; the other message says more.
    specific = [m for m in messages if "no such column" not in m]
    return (specific or messages)[0]


def _match(
    store: Store, source: FtsSource, query: str, scope: Scope, limit: int, window: int
) -> tuple[list[tuple[int, int, float]], int]:
    """The ``limit`` best (item id, index rowid, bm25) among the newest ``window + 1``
    matches of one index, and how many matches that window held."""
    item = "f.rowid" if source.table != "live_votes" else "t.item_id"
    join = "" if source.table != "live_votes" else " JOIN live_votes AS t ON t.rowid = f.rowid"
    where, params = _scope_sql(source, scope, item)
    # Newest first by rowid, which FTS5 walks without sorting; bm25 only for these.
    sql = (
        "SELECT item, fts_rowid, score, COUNT(*) OVER () FROM ("
        f"SELECT {item} AS item, f.rowid AS fts_rowid, bm25([{source.fts}]) AS score"
        f" FROM [{source.fts}] AS f{join}"
        f" WHERE [{source.fts}] MATCH ?{where} ORDER BY f.rowid DESC LIMIT ?"
        ") ORDER BY score, item LIMIT ?"
    )
    rows = store._conn.execute(sql, [query, *params, window + 1, limit]).fetchall()
    return [(int(r[0]), int(r[1]), float(r[2])) for r in rows], int(rows[0][3]) if rows else 0


SNIPPET_CHARS = 65_536
"""The most characters of one column a snippet is cut from. FTS5's snippet() weighs every
window around every match against every other match (time grows with the square of the
matches in the column): on a generated diff of 40,000 lines matching the word on each
line, one snippet took seconds. A longer column is cut to this many characters first
(a match only past them then shows the column's start, unhighlighted)."""


def _snippet(store: Store, source: FtsSource, query: str, rowid: int) -> tuple[str, str]:
    """The column of one matching row whose snippet marks the most terms, and that
    snippet (snippet() reads the row back from the content table; a row with a column
    longer than :data:`SNIPPET_CHARS` is cut and asked of a scratch index instead)."""
    conn = store._conn
    cols = ", ".join(f"[{c}]" for c in source.columns)
    lengths = ", ".join(f"length(t.[{c}])" for c in source.columns)
    sizes = conn.execute(
        f"SELECT max({lengths}, 0) FROM [{source.table}] AS t WHERE t.rowid = ?", (rowid,)
    ).fetchone()
    table, target, where = f"[{source.fts}]", rowid, ""
    cut_down = sizes is not None and (sizes[0] or 0) > SNIPPET_CHARS
    if cut_down:
        table, target, where = _scratch(conn, source), 1, "temp."
        cut = ", ".join(f"substr(t.[{c}], 1, {SNIPPET_CHARS})" for c in source.columns)
        conn.execute(f"DELETE FROM temp.{table}")
        conn.execute(
            f"INSERT INTO temp.{table} (rowid, {cols}) SELECT 1, {cut}"
            f" FROM [{source.table}] AS t WHERE t.rowid = ?",
            (rowid,),
        )
    # as bytes: text another tool stored as invalid UTF-8 would stop the whole search
    snippets = ", ".join(
        f"CAST(snippet({table}, {i}, ?, ?, '…', 12) AS BLOB)" for i in range(len(source.columns))
    )
    row = conn.execute(
        f"SELECT {snippets} FROM {where}{table} WHERE {table} MATCH ? AND rowid = ?",
        [*([HIGHLIGHT_START, HIGHLIGHT_END] * len(source.columns)), query, target],
    ).fetchone()
    if row is None and cut_down:  # the cut text no longer matches: its start
        row = conn.execute(
            f"SELECT {', '.join(f'CAST(substr(t.[{c}], 1, 200) AS BLOB)' for c in source.columns)}"
            f" FROM [{source.table}] AS t WHERE t.rowid = ?",
            (rowid,),
        ).fetchone()
    texts = [_text(v) for v in row] if row else [None] * len(source.columns)
    return _best_snippet(source.columns, texts)


def _text(value: bytes | str | None) -> str | None:
    """Stored text read as bytes, decoded with U+FFFD for what is not UTF-8."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


def _scratch(conn: sqlite3.Connection, source: FtsSource) -> str:
    """A temporary FTS5 table (this connection only, it takes no write lock on the
    store) with ``source``'s columns and tokenizer, holding its own text: its name,
    unqualified (as MATCH and snippet() take it; ``temp.`` goes before it in FROM)."""
    name = f"[{source.fts}_snippet]"
    cols = ", ".join(f"[{c}]" for c in source.columns)
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name}"
        f" USING fts5 ({cols}, tokenize='{TOKENIZER}')"
    )
    return name


def _best_snippet(columns: Sequence[str], snippets: list[str | None]) -> tuple[str, str]:
    """The column whose snippet holds the most highlighted terms (the first on a tie)."""
    best = max(range(len(columns)), key=lambda i: ((snippets[i] or "").count(HIGHLIGHT_START), -i))
    return columns[best], snippets[best] or ""


def _items(store: Store, ids: list[int]) -> dict[int, tuple[str, str, str, str | None]]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        int(r[0]): (r[1], _text(r[2]) or "", _text(r[3]) or "", _text(r[4]))
        for r in store._conn.execute(
            "SELECT id, kind, CAST(key AS BLOB), CAST(source AS BLOB), CAST(path AS BLOB)"
            f" FROM items WHERE id IN ({marks})",
            ids,
        )
    }


def scoped_items(store: Store, scope: Scope, limit: int) -> list[Hit]:
    """Items in a scope without a text query (``curator search "" --disagree a,b``): in
    item id order, no score, no snippet."""
    where, params = [], []
    if scope.kind is not None:
        where.append("i.kind = ?")
        params.append(scope.kind)
    if scope.set_id is not None:
        where.append("EXISTS (SELECT 1 FROM set_items WHERE set_id = ? AND item_id = i.id)")
        params.append(scope.set_id)
    if scope.item_ids is not None:
        _load_scope(store, scope.item_ids)
        where.append("i.id IN (SELECT item_id FROM temp.search_scope)")
    sql = (
        "SELECT id, kind, CAST(key AS BLOB), CAST(source AS BLOB), CAST(path AS BLOB)"
        " FROM items AS i"
    )
    if where:
        sql += " WHERE " + " AND ".join(where)
    rows = store._conn.execute(sql + " ORDER BY i.id LIMIT ?", [*params, limit])
    return [
        Hit(int(r[0]), r[1], _text(r[2]) or "", _text(r[3]) or "", _text(r[4]), 0.0, "", "")
        for r in rows
    ]


def annotator_labels(store: Store, annotator: str, role: str = "annotator") -> dict[int, str]:
    """Each item's live label from one annotator (or adjudicator)."""
    return {
        int(r[0]): r[1]
        for r in store._conn.execute(
            "SELECT item_id, label FROM live_votes WHERE annotator = ? AND role = ?",
            (annotator, role),
        )
    }


def like_scan(store: Store, text: str, limit: int = 20) -> list[int]:
    """The scan search used before the FTS indexes (``LIKE '%text%'`` over key, path and
    message of every item): kept as the benchmark's baseline."""
    like = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = store._conn.execute(
        "SELECT i.id FROM items AS i LEFT JOIN commits AS c ON c.item_id = i.id"
        " WHERE i.key LIKE ? ESCAPE '\\' OR i.path LIKE ? ESCAPE '\\'"
        " OR c.message LIKE ? ESCAPE '\\' ORDER BY i.id LIMIT ?",
        (like, like, like, limit),
    )
    return [int(r[0]) for r in rows]
