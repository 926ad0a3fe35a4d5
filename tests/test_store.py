"""The SQLite store: pragmas, migrations, transactions, batch writes, concurrent writers."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from curator.settings import resolve_db_path
from store import SCHEMA_VERSION, Store, open_store
from store.commits import (
    insert_predictions,
    load_checkpoint,
    save_checkpoint,
    save_commit_batch,
)
from store.connection import BUSY_TIMEOUT_MS, StoreError, utc_now
from store.migrations import MIGRATIONS, migrate
from store.records import Checkpoint, CommitRow, PredictionRow, SaveResult
from store.schema import describe_tables
from tests import raw_sql

ROOT = Path(__file__).resolve().parents[1]


def make_row(n: int, source: str = "repo-a", **changes: object) -> CommitRow:
    """A commit row whose sha, diff hash and function md5 are all unique to ``n``."""
    row = CommitRow(
        source=source,
        sha=f"{n:040x}",
        branch="main",
        author_date="2024-03-01T00:00:00+00:00",
        message=f"commit {n}",
        diff=f"@@ -1 +1 @@\n-a{n}\n+b{n}\n",
        file="m.py",
        files=["m.py"],
        language="python",
        functions=["f"],
        code_before=f"a{n}",
        code_after=f"b{n}",
        added=1,
        deleted=1,
        model_input=f"commit {n}\n\n@@",
        function_md5=f"md5-{n}",
        diff_hash=f"hash-{n}",
        predictions=[PredictionRow("keyword@1", "perf", 0.9, {"terms": ["x"]})],
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def count(store: Store, table: str) -> int:
    return int(raw_sql.scalar(store, f"SELECT COUNT(*) FROM {table}") or 0)


def counts(store: Store) -> dict[str, int]:
    tables = ("items", "commits", "predictions", "duplicates", "checkpoints")
    return {t: count(store, t) for t in tables}


def insert_item(conn: sqlite3.Connection, key: str) -> int:
    cur = conn.execute(
        "INSERT INTO items (kind, key, source, created_at) VALUES ('commit', ?, 's', ?)",
        (key, utc_now()),
    )
    return int(cur.lastrowid or 0)


# --------------------------------------------------------------------------- opening


def test_new_store_uses_wal_foreign_keys_and_a_busy_timeout(store: Store) -> None:
    assert raw_sql.scalar(store, "PRAGMA journal_mode") == "wal"
    assert raw_sql.scalar(store, "PRAGMA foreign_keys") == 1
    assert raw_sql.scalar(store, "PRAGMA busy_timeout") == BUSY_TIMEOUT_MS
    assert BUSY_TIMEOUT_MS >= 1000
    # WAL is a property of the file: a plain connection sees it too
    plain = sqlite3.connect(store.path)
    try:
        assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        plain.close()


def test_schema_version_has_one_row_per_migration(store: Store) -> None:
    rows = raw_sql.query(store, "SELECT version, name FROM schema_version ORDER BY version")
    assert [(r["version"], r["name"]) for r in rows] == [(v, n) for v, n, _ in MIGRATIONS]
    assert SCHEMA_VERSION == MIGRATIONS[-1][0] == max(r["version"] for r in rows)
    assert [v for v, _, _ in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_opening_again_does_not_rerun_migrations(tmp_path: Path) -> None:
    path = tmp_path / "twice.db"
    with open_store(path) as first:
        before = [tuple(r) for r in raw_sql.query(first, "SELECT * FROM schema_version")]
        insert_item(raw_sql.connection(first), "kept")
    with open_store(path) as second:
        assert [tuple(r) for r in raw_sql.query(second, "SELECT * FROM schema_version")] == before
        assert raw_sql.scalar(second, "SELECT key FROM items") == "kept"
        assert (
            migrate(raw_sql.connection(second)) == SCHEMA_VERSION
        )  # already current: nothing to do


def test_a_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with open_store(path) as s:
        raw_sql.connection(s).execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'future', ?)",
            (SCHEMA_VERSION + 1, utc_now()),
        )
    with pytest.raises(StoreError) as info:
        open_store(path)
    message = str(info.value)
    assert str(path) in message
    assert f"schema version {SCHEMA_VERSION + 1}" in message and "newer" in message


@pytest.mark.parametrize(
    "content",
    [b"garbage", b"not a database at all\n" * 200, os.urandom(8192)],
    ids=["short", "text", "random"],
)
def test_a_file_that_is_not_sqlite_is_refused_naming_the_path(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a usable Curator database") as info:
        open_store(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content  # left untouched


def test_create_false_refuses_a_missing_database(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="no such database") as info:
        open_store(path, create=False)
    assert str(path) in str(info.value)
    assert not path.exists()


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.db"
    with open_store(path) as s:
        assert s.path == path
    assert path.is_file()


# --------------------------------------------------------------------------- resolve_db_path


def test_resolve_db_path_explicit_then_env_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explicit, env = tmp_path / "explicit.db", tmp_path / "env.db"
    monkeypatch.setenv("CURATOR_DB", str(env))
    assert resolve_db_path(explicit) == explicit
    assert resolve_db_path(str(explicit)) == explicit
    assert resolve_db_path(None) == env
    monkeypatch.setenv("CURATOR_DB", "")
    assert resolve_db_path(None) == Path("curator.db")
    monkeypatch.delenv("CURATOR_DB")
    assert resolve_db_path(None) == Path("curator.db")
    assert resolve_db_path("") == Path("curator.db")


def test_default_database_lands_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CURATOR_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    with open_store() as s:
        assert s.path.resolve() == tmp_path / "curator.db"
    assert (tmp_path / "curator.db").is_file()


# --------------------------------------------------------------------------- transactions


def test_transaction_rolls_back_everything_on_error(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction() as conn:
        insert_item(conn, "one")
        insert_item(conn, "two")
        raise RuntimeError("boom")
    assert count(store, "items") == 0
    assert not raw_sql.connection(store).in_transaction


def test_transaction_rolls_back_on_a_failing_statement(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError), store.transaction() as conn:
        insert_item(conn, "one")
        insert_item(conn, "one")  # UNIQUE (kind, key)
    assert count(store, "items") == 0


def test_nested_transactions_join_the_outer_one(store: Store, tmp_path: Path) -> None:
    with store.transaction() as outer:
        insert_item(outer, "outer")
        with store.transaction() as inner:
            assert inner is outer
            insert_item(inner, "inner")
        # the inner block did not commit: another connection sees nothing yet
        with open_store(store.path) as other:
            assert count(other, "items") == 0
        assert raw_sql.connection(store).in_transaction
    assert {r[0] for r in raw_sql.query(store, "SELECT key FROM items")} == {"outer", "inner"}


def test_an_error_in_a_nested_transaction_undoes_the_outer_work(store: Store) -> None:
    with pytest.raises(KeyError), store.transaction() as outer:
        insert_item(outer, "outer")
        with store.transaction() as inner:
            insert_item(inner, "inner")
            raise KeyError("inner failure")
    assert count(store, "items") == 0


def test_a_failing_savepoint_undoes_only_its_own_writes(store: Store) -> None:
    with store.transaction() as conn:
        insert_item(conn, "kept")
        with pytest.raises(sqlite3.IntegrityError), store.savepoint("step"):
            insert_item(conn, "undone")
            insert_item(conn, "kept")  # UNIQUE (kind, key)
        with store.savepoint("step"):
            insert_item(conn, "also kept")
    assert {r[0] for r in raw_sql.query(store, "SELECT key FROM items")} == {"kept", "also kept"}


def test_a_trial_savepoint_is_undone_even_when_it_succeeds(store: Store) -> None:
    with store.transaction() as conn:
        with store.savepoint("probe", undo=True):
            insert_item(conn, "tried")
            assert count(store, "items") == 1
        assert count(store, "items") == 0
        assert raw_sql.connection(store).in_transaction  # the outer transaction goes on


def test_a_savepoint_needs_a_transaction_and_a_plain_name(store: Store) -> None:
    with pytest.raises(RuntimeError, match=r"inside store\.transaction"), store.savepoint():
        pass
    with (
        store.transaction(),
        pytest.raises(ValueError, match="savepoint name"),
        store.savepoint("x; DROP TABLE items"),
    ):
        pass
    assert count(store, "items") == 0 and not raw_sql.connection(store).in_transaction


def test_schema_version_is_the_newest_migration(store: Store) -> None:
    assert store.schema_version() == SCHEMA_VERSION


# --------------------------------------------------------------------------- schema


def test_every_table_the_migrations_create_is_in_the_architecture_doc(store: Store) -> None:
    tables = set(describe_tables(store)) - {"schema_version"}
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    documented = {
        name
        for line in doc.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`(\w+)`", line.split("|")[1])
    }
    assert tables == documented


def test_item_payloads_reference_items_so_deleting_an_item_cascades(store: Store) -> None:
    tables = describe_tables(store, count_rows=False)
    for payload in ("commits", "kernels", "ir_modules", "predictions", "votes", "set_items"):
        assert ("item_id", "items") in tables[payload].references, payload
    assert [c.name for c in tables["items"].columns if c.primary_key] == ["id"]
    assert "item_id" in tables["live_votes"].column_names
    assert tables["items"].rows == 0


# --------------------------------------------------------------------------- batches


def test_save_commit_batch_stores_rows_predictions_and_checkpoint(store: Store) -> None:
    rows = [make_row(n) for n in range(3)]

    def checkpoint(results: list[SaveResult]) -> Checkpoint:
        return Checkpoint("commit", "repo-a", "scope", rows[-1].sha, {"seen": len(results)})

    results = save_commit_batch(store, rows, checkpoint)
    assert [r.status for r in results] == ["stored"] * 3
    assert counts(store) == {
        "items": 3,
        "commits": 3,
        "predictions": 3,
        "duplicates": 0,
        "checkpoints": 1,
    }
    saved = load_checkpoint(store, "commit", "repo-a", "scope")
    assert saved == Checkpoint("commit", "repo-a", "scope", rows[-1].sha, {"seen": 3})
    stored = {r["key"]: r["id"] for r in raw_sql.query(store, "SELECT key, id FROM items")}
    assert {stored[row.sha] for row in rows} == {r.item_id for r in results}


def test_save_commit_batch_dedups_within_and_across_sources(store: Store) -> None:
    first = make_row(1)
    same_function = make_row(2, function_md5=first.function_md5)
    same_diff = make_row(3, function_md5=None, diff_hash=first.diff_hash)
    again = make_row(1)  # same sha, same source
    elsewhere = make_row(1, source="repo-b")  # same sha, another source
    results = save_commit_batch(store, [first, same_function, same_diff, again, elsewhere])
    original = results[0].item_id
    assert results == [
        SaveResult("stored", original),
        SaveResult("duplicate", original, "function_md5"),
        SaveResult("duplicate", original, "diff_hash"),
        SaveResult("known", original),
        SaveResult("duplicate", original, "sha"),
    ]
    assert count(store, "items") == 1
    dups = raw_sql.query(store, "SELECT key, source, matched_on, original_item_id FROM duplicates")
    assert sorted(tuple(d) for d in dups) == sorted(
        [
            (same_function.sha, "repo-a", "function_md5", original),
            (same_diff.sha, "repo-a", "diff_hash", original),
            (first.sha, "repo-b", "sha", original),
        ]
    )


def test_a_failing_row_mid_batch_leaves_nothing_from_that_batch(store: Store) -> None:
    first_batch = [make_row(n) for n in range(2)]
    save_commit_batch(
        store,
        first_batch,
        lambda res: Checkpoint("commit", "repo-a", "scope", first_batch[-1].sha, {"n": len(res)}),
    )
    before = counts(store)
    built: list[list[SaveResult]] = []

    def checkpoint(results: list[SaveResult]) -> Checkpoint:
        built.append(results)
        return Checkpoint("commit", "repo-a", "scope", "should-never-be-saved", {})

    bad = make_row(11, message=None)  # commits.message is NOT NULL
    second_batch = [make_row(10), bad, make_row(12)]
    with pytest.raises(sqlite3.IntegrityError):
        save_commit_batch(store, second_batch, checkpoint)
    assert counts(store) == before
    assert built == []  # the batch failed before its checkpoint was even built
    saved = load_checkpoint(store, "commit", "repo-a", "scope")
    assert saved is not None and saved.last_key == first_batch[-1].sha
    assert not raw_sql.connection(store).in_transaction
    # the store is still usable afterwards
    save_commit_batch(store, [make_row(10), make_row(12)])
    assert count(store, "items") == before["items"] + 2


def test_a_failing_checkpoint_undoes_the_rows(store: Store) -> None:
    def checkpoint(results: list[SaveResult]) -> Checkpoint:
        raise ValueError("cannot build the checkpoint")

    with pytest.raises(ValueError):
        save_commit_batch(store, [make_row(n) for n in range(3)], checkpoint)
    assert counts(store) == dict.fromkeys(counts(store), 0)


def test_save_checkpoint_moves_forward_in_place(store: Store) -> None:
    save_checkpoint(store, Checkpoint("commit", "s", "scope", "a", {"seen": 1}))
    save_checkpoint(store, Checkpoint("commit", "s", "scope", "b", {"seen": 2}))
    save_checkpoint(store, Checkpoint("commit", "s", "other", "z", {}))
    assert count(store, "checkpoints") == 2
    assert load_checkpoint(store, "commit", "s", "scope") == Checkpoint(
        "commit", "s", "scope", "b", {"seen": 2}
    )
    assert load_checkpoint(store, "commit", "s", "missing") is None


# --------------------------------------------------------------------------- predictions


def test_predictions_are_appended_never_overwritten(store: Store) -> None:
    (result,) = save_commit_batch(store, [make_row(1)])
    item = result.item_id
    first = raw_sql.query(store, "SELECT * FROM predictions WHERE item_id = ?", (item,))
    insert_predictions(store, item, [PredictionRow("keyword@1", "non-perf", 0.2)])
    insert_predictions(
        store,
        item,
        [PredictionRow("teacher@1", "perf", 0.7, {"why": "loop"}), PredictionRow("x", "y", None)],
    )
    rows = raw_sql.query(
        store,
        "SELECT id, labeler, label, score, details FROM predictions WHERE item_id = ? ORDER BY id",
        (item,),
    )
    assert [(r["labeler"], r["label"]) for r in rows] == [
        ("keyword@1", "perf"),
        ("keyword@1", "non-perf"),
        ("teacher@1", "perf"),
        ("x", "y"),
    ]
    # the first prediction is exactly as it was, timestamp included
    now = raw_sql.query(store, "SELECT * FROM predictions WHERE id = ?", (first[0]["id"],))
    assert [tuple(r) for r in now] == [tuple(r) for r in first]
    assert rows[2]["details"] == '{"why": "loop"}'
    assert rows[3]["score"] is None


def test_deleting_an_item_cascades(store: Store) -> None:
    first, dup = make_row(1), make_row(2, function_md5="md5-1")
    other = make_row(3)
    results = save_commit_batch(store, [first, dup, other])
    original = results[0].item_id
    assert counts(store)["duplicates"] == 1
    with store.transaction() as conn:
        conn.execute("DELETE FROM items WHERE id = ?", (original,))
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM commits WHERE item_id = ?", (original,)) == 0
    assert (
        raw_sql.scalar(store, "SELECT COUNT(*) FROM predictions WHERE item_id = ?", (original,))
        == 0
    )
    assert count(store, "duplicates") == 0  # linked to the deleted original
    # the unrelated commit keeps its rows
    assert {t: count(store, t) for t in ("items", "commits", "predictions")} == dict.fromkeys(
        ("items", "commits", "predictions"), 1
    )
    assert raw_sql.scalar(store, "SELECT key FROM items") == other.sha


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError), store.transaction():
        insert_predictions(store, 424242, [PredictionRow("keyword@1", "perf", 1.0)])
    assert count(store, "predictions") == 0


# --------------------------------------------------------------------------- concurrency

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from store import open_store
    from store.commits import save_commit_batch
    from store.records import Checkpoint, CommitRow

    db, tag, go, batches, size = sys.argv[1:6]
    batches, size = int(batches), int(size)
    Path(go + "." + tag).touch()  # ready
    while not Path(go).exists():
        time.sleep(0.002)
    store = open_store(db)

    def row(n):
        key = f"{tag}-{n}"
        return CommitRow(
            source=tag, sha=key, branch="main", author_date="2024", message="m",
            diff=key, file="a.py", files=["a.py"], language="python", functions=["f"],
            code_before="a", code_after="b", added=1, deleted=1, model_input="m",
            function_md5="md5-" + key, diff_hash="hash-" + key,
        )

    for b in range(batches):
        rows = [row(b * size + i) for i in range(size)]
        save_commit_batch(
            store, rows, lambda res, b=b: Checkpoint("commit", tag, "s", str(b), {"n": len(res)})
        )
    store.close()
    """
)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db, go = tmp_path / "shared.db", tmp_path / "go"
    batches, size, tags = 150, 10, ["alpha", "beta"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), tag, str(go), str(batches), str(size)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for tag in tags
    ]
    # release both writers together once both interpreters are up
    while not all((tmp_path / f"go.{tag}").exists() for tag in tags):
        assert all(p.poll() is None for p in procs), "a writer died before starting"
        time.sleep(0.005)
    go.touch()
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert b"database is locked" not in stderr
        assert proc.returncode == 0, stderr.decode(errors="replace")
    with open_store(db) as s:
        assert count(s, "items") == count(s, "commits") == len(tags) * batches * size
        per_source = {
            r[0]: r[1] for r in raw_sql.query(s, "SELECT source, COUNT(*) FROM items GROUP BY 1")
        }
        assert per_source == dict.fromkeys(tags, batches * size)
        for tag in tags:
            saved = load_checkpoint(s, "commit", tag, "s")
            assert saved is not None and saved.last_key == str(batches - 1)
            assert saved.counters == {"n": size}
        assert raw_sql.scalar(s, "SELECT COUNT(*) FROM schema_version") == len(MIGRATIONS)


def test_opening_a_new_database_waits_for_another_writer(tmp_path: Path) -> None:
    # Two processes creating the same new store race exactly like this: the file is
    # still in rollback-journal mode and one of them holds the write lock. SQLite
    # answers "PRAGMA journal_mode = WAL" with SQLITE_BUSY without calling the busy
    # handler, so open_store fails at once instead of waiting out its busy timeout.
    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        # the other Curator process has begun: schema_version is its first table
        other.execute(
            "CREATE TABLE schema_version"
            " (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        other.execute("CREATE TABLE unrelated (x)")
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO unrelated VALUES (1)")
        release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
        release.start()
        try:
            with open_store(path) as s:
                assert raw_sql.scalar(s, "PRAGMA journal_mode") == "wal"
        finally:
            release.join()
    finally:
        other.close()


def test_migration_11_keeps_a_cut_message_whole(tmp_path: Path) -> None:
    """A model input cut inside a long message (before the message was kept whole)
    becomes the whole message; texts that hold their message whole are left alone."""
    long = "Tidy the parser and rename its helpers. " * 80 + "This makes loading faster."
    path = tmp_path / "old.db"
    with open_store(path) as s:
        save_commit_batch(
            s,
            [
                make_row(1, message=long + "\n", model_input=long[:300]),  # cut, as before
                make_row(2),  # short message and its diff: untouched
                make_row(3, message="x" * 50, model_input="y"),  # not a cut of its message
            ],
        )
        raw_sql.connection(s).execute("DELETE FROM schema_version WHERE version >= 11")
    with open_store(path) as s:
        assert s.schema_version() >= 11
        texts = dict(raw_sql.query(s, "SELECT c.sha, c.model_input FROM commits AS c"))
    assert texts[f"{1:040x}"] == long + "\n\n"
    assert texts[f"{2:040x}"] == "commit 2\n\n@@"
    assert texts[f"{3:040x}"] == "y"
