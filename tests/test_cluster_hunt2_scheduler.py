"""The Dask paths of ``curator mine commits`` and ``curator predict`` as a user scaling
them meets them: a scheduler that dies mid-run still leaves ``--json`` saying what was
stored, SIGTERM stops ``predict --workers`` as Ctrl-C does (its local workers with it),
and scheduler addresses of every scheme fail in one clear line at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from types import FrameType

import dask
import psutil
import pytest

from engines.dask_cluster import ClusterError, dask_client
from store import open_store
from store.bulk import bulk_insert_commits
from tests.gitrepo import GitRepo
from tests.synthetic_commits import minimal_commit
from tests.test_mining_resume import build_history
from tests.test_sweep_remote import scheduler_process

POLL_S = 0.005


def _count(db: Path, sql: str) -> int:
    """``sql``'s count in ``db`` as another reader sees it; 0 before the table exists."""
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # the schema is being created
        return 0


@contextmanager
def once_stored(db: Path, sql: str, then: Callable[[], None]) -> Iterator[threading.Event]:
    """Calls ``then`` from a thread as soon as ``sql`` counts a row in ``db``; the event
    says it did."""
    done, stop = threading.Event(), threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if _count(db, sql) > 0:
                then()
                done.set()
                return
            time.sleep(POLL_S)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield done
    finally:
        stop.set()
        watcher.join(timeout=30)


def test_mine_json_says_what_was_saved_when_the_scheduler_dies(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
) -> None:
    build_history(repo, 300)  # 100 slices of 3: the kill lands long before the end
    db = tmp_path / "cli.db"
    with (
        scheduler_process() as (address, kill),
        once_stored(db, "SELECT COUNT(*) FROM checkpoints", kill) as killed,
    ):
        result = cli(
            "mine", "commits", f"file://{repo.path}", "--scheduler", address,
            "--task-commits", "3", "--clone-dir", str(tmp_path / "clones"), "--json",
        )  # fmt: skip
    assert killed.is_set()
    assert result.exit_code == 1, result.output
    lost = f"lost the Dask scheduler at {address}"
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f"error: {lost}: what came back before is stored; run the same command again to resume"
    ]
    report = json.loads(result.stdout)
    assert report["interrupted"] is True
    assert any(lost in line for line in report["errors"])
    stored = _count(db, "SELECT COUNT(*) FROM commits")
    assert 0 < report["stored"] == stored
    assert report["seen"] < 300


def _commits_db(db: Path, n: int) -> None:
    with open_store(db) as store:
        bulk_insert_commits(store, (minimal_commit(i, f"speed up f{i}") for i in range(n)))


ITEMS = 60_000  # 30 chunks of 2,048: the run is still going when the watcher acts


def test_predict_json_says_what_was_stored_when_the_scheduler_dies(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db = tmp_path / "cli.db"
    _commits_db(db, ITEMS)
    with (
        scheduler_process() as (address, kill),
        once_stored(db, "SELECT COUNT(*) FROM predictions", kill) as killed,
    ):
        result = cli("predict", "--labeler", "keyword@latest", "--scheduler", address, "--json")
    assert killed.is_set()
    assert result.exit_code == 1, result.output
    lost = f"lost the Dask scheduler at {address}"
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        f"error: {lost}: what came back before is stored; run the same command again to resume"
    ]
    report = json.loads(result.stdout)
    assert report["error"].startswith(lost)
    stored = _count(db, "SELECT COUNT(*) FROM predictions")
    assert 0 < report["predicted"] == stored < ITEMS


def _local_workers() -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process().children(recursive=True)
        if "spawn_main" in " ".join(child.cmdline())
    ]


def test_sigterm_stops_predict_on_local_workers_as_ctrl_c_does(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db = tmp_path / "cli.db"
    _commits_db(db, ITEMS)
    late: list[int] = []

    def too_late(signum: int, frame: FrameType | None) -> None:
        late.append(signum)  # the run no longer listened: the test fails below, pytest lives

    before = signal.signal(signal.SIGTERM, too_late)
    try:
        term = lambda: os.kill(os.getpid(), signal.SIGTERM)  # noqa: E731
        with once_stored(db, "SELECT COUNT(*) FROM predictions", term) as sent:
            result = cli("predict", "--labeler", "keyword@latest", "--workers", "1")
    finally:
        signal.signal(signal.SIGTERM, before)
    assert sent.is_set() and not late
    assert result.exit_code == 128 + signal.SIGTERM, result.output
    stored = _count(db, "SELECT COUNT(*) FROM predictions")
    assert 0 < stored < ITEMS
    assert (
        f"terminated (SIGTERM): {stored:,} of {ITEMS:,} items were labeled and stored"
        in result.stderr
    )
    deadline = time.monotonic() + 30
    while _local_workers() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _local_workers() == []  # the LocalCluster was closed, not orphaned


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("scheme", ["tls", "ws"])
def test_a_refused_address_of_any_tcp_scheme_is_one_line_at_once(scheme: str) -> None:
    address = f"{scheme}://127.0.0.1:{_closed_port()}"
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
        pytest.raises(ClusterError) as caught,
        dask_client(scheduler=address),
    ):
        pass
    assert str(caught.value) == (
        f"cannot reach the Dask scheduler at {address}: connection refused"
        " (no scheduler listens there)"
    )


def test_a_tls_address_without_tls_settings_is_one_line() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"tls://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(ClusterError) as caught, dask_client(scheduler=address):
            pass
    message = str(caught.value)
    assert message.startswith(f"cannot connect to the Dask scheduler at {address}:")
    assert "distributed.comm.tls" in message and "\n" not in message


def test_an_in_process_address_is_refused_with_the_form_to_use() -> None:
    with pytest.raises(ClusterError) as caught, dask_client(scheduler="inproc://10.0.0.1/1/2"):
        pass
    assert "in-process address" in str(caught.value)
    assert "tcp://HOST:8786" in str(caught.value)
