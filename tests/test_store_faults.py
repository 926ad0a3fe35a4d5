"""Databases that are not what they should be: another program's SQLite file, bytes that
are not SQLite, a damaged page, a read-only folder, a file deleted while open. Each gets
one clear line and nothing is written (the foreign file keeps every byte)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotation.votes import cast_vote, prepare_vote, resolve_item
from curator.cli import app
from store import StoreError, open_store
from tests import raw_sql
from tests.disk_full import ROOT, namespaces_allowed
from tests.release_data import annotated_store


def curator(db: Path, *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["--db", str(db), *args])
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit | None), result.exception
    return result


def one_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code != 0
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("good") / "good.db"
    with open_store(db) as store:
        annotated_store(store, n=20)
        pages = raw_sql.scalar(store, "PRAGMA page_count")
        raw_sql.scalar(store, "PRAGMA wal_checkpoint(TRUNCATE)")
    assert pages
    return db


def test_another_programs_sqlite_file_is_left_untouched(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE notes (text)")
    conn.commit()
    conn.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    line = one_error(curator(db, "stats"))
    assert line == (
        f"error: {db}: an SQLite database that is not Curator's (tables notes, no"
        " schema_version); nothing was written to it"
    )
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_bytes_that_are_not_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "junk.db"
    db.write_bytes(os.urandom(8192))
    assert "not a usable Curator database (not SQLite at all)" in one_error(curator(db, "stats"))


def test_a_damaged_database(good: Path, tmp_path: Path) -> None:
    db = tmp_path / "damaged.db"
    shutil.copy(good, db)
    with db.open("r+b") as fh:  # every page after the first few: the schema's tables
        fh.seek(4 * 4096)
        fh.write(b"\xde\xad" * 2048 * 16)
    for command in (["stats"], ["export", "v1", "--out", str(tmp_path)], ["adjudicate", "gt"]):
        line = one_error(curator(db, *command))
        assert "damaged" in line and "restore it from a copy" in line


def test_a_database_deleted_while_open_takes_no_write(good: Path, tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    shutil.copy(good, folder / "curator.db")
    store = open_store(folder / "curator.db")
    key = str(raw_sql.scalar(store, "SELECT key FROM items LIMIT 1"))
    row = prepare_vote(store, resolve_item(store, key, None), "perf", "zoe")
    shutil.rmtree(folder)
    with pytest.raises(StoreError, match="moved or deleted since it was opened; nothing was"):
        cast_vote(store, row)
    store.close()


@pytest.mark.skipif(not namespaces_allowed(), reason="needs a mount namespace for a ro mount")
def test_a_read_only_database(good: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    shutil.copy(good, folder / "curator.db")
    before = hashlib.sha256((folder / "curator.db").read_bytes()).hexdigest()
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} &&"
        f" {sys.executable} -m curator --db {folder}/curator.db vote x perf --annotator a"
    )
    done = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {folder}/curator.db: read-only: Curator needs to write beside it (its -wal"
        " and -shm files) (unable to open database file)\n"
    )
    assert hashlib.sha256((folder / "curator.db").read_bytes()).hexdigest() == before
