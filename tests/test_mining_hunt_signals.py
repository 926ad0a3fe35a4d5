"""Stopping a real ``curator mine commits`` run by a signal: Ctrl-C (SIGINT to the whole
process group), SIGTERM, or SIGKILL of the run. Each ends with one line (or, for
SIGKILL, silence), no traceback from the run, its workers or the forkserver, and the
run after it ends with a clean run's rows."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from engines.commits.gitstream import GitStreams
from tests.gitrepo import GitRepo
from tests.test_mining_resume import build_history, mine_cmd, snapshot

ROOT = Path(__file__).resolve().parents[1]


class _Echo:
    """A worker handler that answers each request with it."""

    def __call__(self, request: object) -> object:
        return request


class _Slow:
    """A worker handler that takes a while to answer: its run is gone by then."""

    def __call__(self, request: object) -> object:
        time.sleep(0.3)  # less than the worker takes to notice its run is gone (1 s)
        return request


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # created, not migrated yet
        return 0


def test_streams_whose_git_died_mid_request_close_without_an_error(tmp_path: Path) -> None:
    # Ctrl-C reaches the git processes too; a request cut short between its write and
    # its flush left bytes that closing the pipe tried to flush into the dead git. The
    # BrokenPipeError raised there, in the run's clean-up, replaced the interruption:
    # "error: Broken pipe", exit 1, instead of "interrupted", exit 130.
    repo = GitRepo(tmp_path / "repo")
    repo.commit("one", {"a.py": "x = 1\n"})
    streams = GitStreams(repo.path)
    streams.read(repo.head())  # the streams work
    for proc in (streams._cat, streams._diff):
        assert proc.stdin is not None
        proc.stdin.write(b"0" * 40 + b"\n")  # written, not flushed: the interrupted request
        proc.kill()
        proc.wait()
    streams.close()
    assert streams._cat.poll() is not None and streams._diff.poll() is not None


def test_sigterm_stops_a_run_with_one_line_and_the_next_run_finishes_it(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    build_history(repo, 400)  # every commit survives: worker processes start
    env = {**os.environ, "COLUMNS": "120"}
    clean_db = tmp_path / "clean.db"
    subprocess.run(mine_cmd(repo.path, clean_db), check=True, env=env, capture_output=True)
    clean = snapshot(clean_db)

    db = tmp_path / "stopped.db"
    with (tmp_path / "stderr.txt").open("w") as stderr:
        proc = subprocess.Popen(
            mine_cmd(repo.path, db), env=env, stdout=subprocess.DEVNULL, stderr=stderr, cwd=ROOT
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _stored(db) < 20:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be stopped"
        proc.send_signal(signal.SIGTERM)  # the run only, as kill, timeout or a scheduler do
        proc.wait(timeout=120)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 128 + signal.SIGTERM, err  # was -15: gone without a word
    assert "terminated (SIGTERM): everything up to the last batch is saved" in err
    assert "Traceback" not in err and "Error" not in err, err
    assert 20 <= len(snapshot(db)["items"]) < len(clean["items"])

    subprocess.run(mine_cmd(repo.path, db), check=True, env=env, capture_output=True)
    assert snapshot(db) == clean


def test_ctrl_c_to_the_whole_group_ends_with_one_line_and_the_next_run_finishes_it(
    tmp_path: Path,
) -> None:
    # what a terminal's Ctrl-C does: SIGINT to the run, its workers and every git process
    repo = GitRepo(tmp_path / "repo")
    build_history(repo, 400)
    env = {**os.environ, "COLUMNS": "120"}
    clean_db = tmp_path / "clean.db"
    subprocess.run(mine_cmd(repo.path, clean_db), check=True, env=env, capture_output=True)
    clean = snapshot(clean_db)

    db = tmp_path / "stopped.db"
    with (tmp_path / "stderr.txt").open("w") as stderr:
        proc = subprocess.Popen(
            mine_cmd(repo.path, db),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=ROOT,
            start_new_session=True,  # a group of its own, as a terminal's foreground job
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _stored(db) < 20:
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be stopped"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 130, err
    assert "interrupted: everything up to the last batch is saved" in err
    assert "Traceback" not in err and "error:" not in err, err

    subprocess.run(mine_cmd(repo.path, db), check=True, env=env, capture_output=True)
    assert snapshot(db) == clean


_RUN_DIES_MID_REQUEST = """
import os, signal, threading
from engines.commits.worker_process import Answers, WorkerProcess, start_context
from tests.test_mining_hunt_signals import _Slow

if __name__ == "__main__":
    # a thread beside the run, as on a real history: the worker comes from the
    # forkserver and holds only its own end of the pipe
    threading.Thread(target=threading.Event().wait, daemon=True).start()
    context = start_context()
    assert context.get_start_method() == "forkserver"
    worker = WorkerProcess(context, _Slow, ())
    answers = Answers([worker])
    worker.submit("late")
    os.kill(os.getpid(), signal.SIGKILL)  # the run is gone while its worker works
"""


def test_a_worker_whose_run_was_killed_ends_without_a_traceback() -> None:
    run = subprocess.Popen(
        [sys.executable, "-c", _RUN_DIES_MID_REQUEST],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert run.wait(timeout=120) == -signal.SIGKILL
        assert run.stderr is not None
        stderr = run.stderr.read()  # the end: the worker and the forkserver have ended
    finally:
        if run.poll() is None:
            run.kill()
    # was: the worker's answer met the closed pipe, BrokenPipeError and its traceback
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


_CTRL_C_AS_THE_FORKSERVER_STARTS = """
import os, signal, threading, time
from multiprocessing import forkserver
from engines.commits.worker_process import Answers, WorkerProcess, start_context
from tests.test_mining_hunt_signals import _Echo


def ctrl_c() -> None:
    # Ctrl-C reaches the whole group; here it reaches the forkserver as it starts
    while forkserver._forkserver._forkserver_pid is None:
        time.sleep(0.0002)
    os.kill(forkserver._forkserver._forkserver_pid, signal.SIGINT)


if __name__ == "__main__":
    beside = threading.Thread(target=ctrl_c, daemon=True)
    beside.start()  # a thread beside the run: its workers come from the forkserver
    context = start_context()
    assert context.get_start_method() == "forkserver"
    worker = WorkerProcess(context, _Echo, ())
    answers = Answers([worker])
    beside.join(30)
    print(worker.submit("answered").result(timeout=60))
    worker.stop()
    answers.join()
"""


def test_ctrl_c_as_the_forkserver_starts_leaves_it_running_and_silent() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AS_THE_FORKSERVER_STARTS],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    # was: the forkserver, still importing, died with a KeyboardInterrupt traceback
    # (or "Fatal Python error: init_import_site") under the run's one-line message
    assert "Traceback" not in run.stderr and "Fatal" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["answered"]
