"""The store under real-world faults, each through real SQLite files and real `curator`
processes: databases from older and newer schema versions, files that are not
databases, a writer killed mid-transaction, another process holding the write lock, and
paths no database can be at. Each ends in one line naming the file, and nothing stored
is lost."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store import StoreError, open_store
from store.migrations import MIGRATIONS, SCHEMA_VERSION, _statements
from tests.disk_full import ROOT
from tests.gitrepo import GitRepo

# `python -m curator` with a short busy timeout, so that a test need not wait 30 s for
# the lock it holds to time out
CURATOR = (
    "import sys, store.connection as c; c.BUSY_TIMEOUT_MS = int(sys.argv.pop(1));"
    " from curator.cli import main; main()"
)


def curator(db: Path, *args: str, timeout_ms: int = 30_000) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CURATOR, str(timeout_ms), "--db", str(db), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        timeout=300,
        check=False,
    )


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith("error: "), line
    return line


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows(db: Path, table: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def old_store(path: Path, version: int, commits: int = 30) -> None:
    """A database as Curator left it at schema ``version`` (0: before any migration),
    holding ``commits`` commits once the schema has items, and one set with votes."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL)"
    )
    for number, name, step in MIGRATIONS[:version]:
        if callable(step):
            step(conn, None)
        else:
            for statement in _statements(step):
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (number, name))
    if version >= 1:
        conn.execute("BEGIN")
        for i in range(1, commits + 1):
            conn.execute(
                "INSERT INTO items (id, kind, key, source, language, dedup_hash, provenance,"
                " created_at) VALUES (?, 'commit', ?, 's', 'c', ?, '{}', 'then')",
                (i, f"{i:040x}", f"h{i}"),
            )
            conn.execute(
                "INSERT INTO commits (item_id, repo, sha, message, diff, model_input,"
                " diff_hash) VALUES (?, 'r', ?, ?, '@@ -1 +1 @@', ?, ?)",
                (i, f"{i:040x}", f"speed up loop {i}", f"speed up loop {i}\n\n@@", f"d{i}"),
            )
        conn.execute(
            "INSERT INTO sets (id, name, kind, labels, created_at)"
            " VALUES (1, 'gt', 'commit', '[\"perf\", \"non-perf\"]', 'then')"
        )
        for i in range(1, 6):
            conn.execute(
                "INSERT INTO set_items (set_id, item_id, position) VALUES (1, ?, ?)", (i, i)
            )
            vote = conn.execute(
                "INSERT INTO votes (item_id, annotator, label, created_at)"
                " VALUES (?, 'ann', 'perf', 'then')",
                (i,),
            ).lastrowid
            if version >= 2:  # the schema keeps each annotator's vote in force
                conn.execute(
                    "INSERT INTO live_votes (item_id, annotator, role, vote_id, label)"
                    " VALUES (?, 'ann', 'annotator', ?, 'perf')",
                    (i, vote),
                )
        conn.execute("COMMIT")
    conn.close()


def versions(db: Path) -> list[int]:
    conn = sqlite3.connect(db)
    try:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    finally:
        conn.close()


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("hidden", ["\u200b", "\u200d", "\u00ad", "\ufeff", "\u2060"])
def test_an_annotator_name_with_an_invisible_character_is_refused(
    tmp_path: Path, hidden: str
) -> None:
    db = tmp_path / "v.db"
    old_store(db, SCHEMA_VERSION, commits=1)
    name = f"bo{hidden}b"
    line = one_error(curator(db, "vote", f"{1:040x}", "perf", "--annotator", name))
    assert f"U+{ord(hidden):04X}" in line and "give a name of printable characters" in line
    assert rows(db, "votes") == 5


# --------------------------------------------------------------------------- paths


def test_a_folder_is_not_a_database_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as info:
        open_store(tmp_path)
    assert str(info.value).startswith(
        f"{tmp_path}: is a folder: name a database file inside it, e.g. {tmp_path / 'curator.db'}"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("below", ["x.db", "a/b/x.db"])
def test_a_path_below_a_file(tmp_path: Path, below: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    db = notes / below
    line = one_error(curator(db, "import", "items", str(notes)))
    assert line == f"error: {db}: cannot be created: {notes} is a file, not a folder"
    assert notes.read_text() == "mine\n"


@pytest.mark.parametrize("special", ["/dev/null", "fifo"])
def test_a_device_or_a_pipe_is_not_a_database(tmp_path: Path, special: str) -> None:
    db = Path(special) if special.startswith("/") else tmp_path / special
    if not db.exists():
        os.mkfifo(db)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "abc1", "message": "speed up", "diff": "@@"}) + "\n")
    line = one_error(curator(db, "import", "items", str(items)))
    assert line == (
        f"error: {db}: not a regular file (a device, a pipe or a socket): name a database file"
    )


def test_a_path_under_proc_names_the_folder(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "abc1", "message": "speed up", "diff": "@@"}) + "\n")
    line = one_error(curator(Path("/proc/curator.db"), "import", "items", str(items)))
    assert line.startswith("error: /proc/curator.db: cannot be opened or created (may you write")


def test_a_path_with_a_newline_and_unicode_holds_a_database(tmp_path: Path) -> None:
    db = tmp_path / "dé\nnø 数据.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "abc1", "message": "speed up", "diff": "@@"}) + "\n")
    done = curator(db, "import", "items", str(items))
    assert done.returncode == 0, done.stderr
    assert rows(db, "items") == 1


# --------------------------------------------------------------------------- schema versions


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_a_database_of_every_older_schema_migrates_keeping_its_rows(
    tmp_path: Path, version: int
) -> None:
    db = tmp_path / "old.db"
    old_store(db, version)
    done = curator(db, "stats")
    assert done.returncode == 0, done.stderr
    assert f"(schema v{SCHEMA_VERSION})" in done.stdout
    assert versions(db) == list(range(1, SCHEMA_VERSION + 1))
    if version >= 1:
        assert rows(db, "items") == 30 and rows(db, "votes") == 5
    assert integrity(db) == "ok"


def test_a_long_migration_shows_progress_and_three_at_once_agree(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old_store(db, 1, commits=12_000)  # past the bar's threshold
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CURATOR, "30000", "--db", str(db), "stats"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        assert "12000 items, 5 votes, 1 sets" in out
    assert sum("indexing commits" in err for _, err in outputs) == 1  # one migrated
    assert versions(db) == list(range(1, SCHEMA_VERSION + 1))
    assert integrity(db) == "ok"


def test_a_newer_schema_says_upgrade_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "future.db"
    old_store(db, SCHEMA_VERSION)  # a rollback-journal file: switching it to WAL writes
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO schema_version VALUES (?, 'future', 'later')", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()
    before = digest(db)
    for command in (["stats"], ["vote", f"{1:040x}", "perf", "--annotator", "a"]):
        line = one_error(curator(db, *command))
        assert line == (
            f"error: {db}: written by a newer Curator (schema version {SCHEMA_VERSION + 1};"
            f" this one knows up to {SCHEMA_VERSION}): upgrade Curator to open it; nothing"
            " was written to it"
        )
    assert digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["future.db"]


# --------------------------------------------------------------------------- not a database


def test_a_truncated_database_is_damaged(tmp_path: Path) -> None:
    db = tmp_path / "half.db"
    old_store(db, SCHEMA_VERSION, commits=3000)
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])
    before = digest(db)
    line = one_error(curator(db, "stats"))
    assert line.startswith(f"error: {db}: ") and "damaged: restore it from a copy" in line
    assert digest(db) == before


def test_an_empty_wal_beside_a_database_is_harmless(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    old_store(db, SCHEMA_VERSION)
    Path(f"{db}-wal").write_bytes(b"")
    done = curator(db, "stats")
    assert done.returncode == 0, done.stderr
    assert "30 items, 5 votes" in done.stdout


KILLED_WRITER = """
import sys
from store import open_store
from store.bulk import bulk_insert_commits
from tests.test_store import make_row

store = open_store(sys.argv[1])
with store.transaction():
    print("writing", flush=True)
    bulk_insert_commits(store, (make_row(i) for i in range(1000, 10**9)), batch=500)
"""


def test_a_writer_killed_mid_transaction_leaves_the_last_commit(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    old_store(db, SCHEMA_VERSION)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(db)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stdout.readline() == "writing\n"
    while Path(f"{db}-wal").stat().st_size < 4_000_000:  # well into the transaction
        assert writer.poll() is None
        time.sleep(0.01)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert Path(f"{db}-wal").exists()
    done = curator(db, "stats")
    assert done.returncode == 0, done.stderr
    assert "30 items, 5 votes" in done.stdout
    assert integrity(db) == "ok"


# --------------------------------------------------------------------------- the write lock

HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


def hold_lock(db: Path) -> subprocess.Popen[str]:
    """Another process that holds the write lock until its stdin is closed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait(timeout=30)


def waited_then_failed(done: subprocess.CompletedProcess[str], db: Path) -> str:
    """The error line of a command that said it was waiting for the lock, then gave up."""
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0] == (
        f"warning: {db}: another process holds the write lock (a long write, or the"
        " migration of an older database); waiting up to 1 s for it"
    )
    # mining's progress bar may stand between the two
    assert lines[-1].startswith("error: ") and len(lines) <= 3, lines
    return lines[-1]


def test_commands_wait_for_a_held_lock_then_name_it(tmp_path: Path) -> None:
    db = tmp_path / "busy.db"
    with open_store(db):
        pass
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "abc1", "message": "speed up", "diff": "@@"}) + "\n")
    assert curator(db, "import", "items", str(items)).returncode == 0
    repo = GitRepo(tmp_path / "repo")
    repo.commit("speed up the parser", {"a.py": "def f():\n    return 1\n"})
    repo.commit("make the loop faster", {"a.py": "def f():\n    return 2\n"})
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "abc2", "message": "faster", "diff": "@@"}) + "\n")
    commands = [
        ["vote", "abc1", "perf", "--annotator", "zoe"],
        ["import", "items", str(more)],
        ["mine", "commits", str(repo.path)],
    ]
    holder = hold_lock(db)
    try:
        for command in commands:
            line = waited_then_failed(curator(db, *command, timeout_ms=1500), db)
            assert line.startswith(f"error: {db}: locked by another process"), line
            assert "for over 1 s: nothing was written" in line
        reading = curator(db, "stats", timeout_ms=1500)  # a reader goes on beside the writer
        assert reading.returncode == 0 and "1 items, 0 votes" in reading.stdout
    finally:
        release(holder)
    assert (rows(db, "items"), rows(db, "votes")) == (1, 0)
    for command in commands:
        done = curator(db, *command)
        assert done.returncode == 0, done.stderr
    assert rows(db, "votes") == 1 and rows(db, "items") >= 3


def test_opening_an_old_database_while_another_holds_the_lock(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    old_store(db, 1)
    holder = hold_lock(db)
    try:
        line = waited_then_failed(curator(db, "stats", timeout_ms=1500), db)
    finally:
        release(holder)
    assert line.startswith(f"error: {db}: locked by another process (a long write, or the")
    assert versions(db) == [1]
    assert curator(db, "stats").returncode == 0
    assert versions(db) == list(range(1, SCHEMA_VERSION + 1))


VOTE_7 = ["vote", f"{7:040x}", "perf", "--annotator", "zoe"]


@pytest.mark.parametrize("version", [1, SCHEMA_VERSION])
def test_a_command_says_it_waits_and_goes_on_once_the_lock_is_free(
    tmp_path: Path, version: int
) -> None:
    db = tmp_path / "wait.db"
    old_store(db, version)
    holder = hold_lock(db)
    try:
        voter = subprocess.Popen(
            [sys.executable, "-c", CURATOR, "30000", "--db", str(db), *VOTE_7],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert voter.stderr is not None
        notice = voter.stderr.readline()
        assert notice.startswith(f"warning: {db}: another process holds the write lock")
    finally:
        release(holder)
    out, err = voter.communicate(timeout=120)
    assert voter.returncode == 0, err
    assert "perf on item #7" in out
    assert rows(db, "votes") == 6
    assert versions(db) == list(range(1, SCHEMA_VERSION + 1))


def test_each_long_migration_step_shows_its_own_name(tmp_path: Path) -> None:
    db = tmp_path / "cut.db"
    old_store(db, 10, commits=10_001)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE commits SET message = model_input || ' and more', model_input = 'speed'")
    conn.commit()
    conn.close()
    done = curator(db, "stats")
    assert done.returncode == 0, done.stderr
    assert "messages kept whole" in done.stderr
    assert "indexing messages" not in done.stderr
