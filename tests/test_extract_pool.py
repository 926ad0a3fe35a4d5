"""Survivors extracted in worker processes: the same outcomes as in threads, in commit
order; a killed worker loses nothing; a daemonic caller (a Dask worker) stays on threads."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from engines.commits.extract_pool import ExtractPool, processes_allowed
from engines.commits.gitlog import CommitStat, iter_commit_stats
from engines.commits.miner import Mined, cheap_filter, mine_repository
from engines.commits.options import MineOptions
from tests.gitrepo import GitRepo, py_module


def _history(tmp_path: Path, commits: int = 40) -> GitRepo:
    """Four modules edited in turn, one function per commit: every commit survives the
    cheap filter and each file's versions follow one another (incremental parses)."""
    repo = GitRepo(tmp_path / "repo")
    bodies = {m: [f"y = y + {k}" for k in range(4)] for m in range(4)}
    repo.commit("start", {f"pkg/m{m}.py": py_module(*bodies[m]) for m in range(4)})
    for i in range(commits):
        module, function = i % 4, (i // 4) % 4
        bodies[module][function] = f"y = y * {i + 2}"
        repo.commit(f"change {i}", {f"pkg/m{module}.py": py_module(*bodies[module])})
    return repo


def _as_plain(outcomes: list) -> list:
    return [("mined", dataclasses.asdict(o.row)) if isinstance(o, Mined) else o for o in outcomes]


@pytest.mark.parametrize("beside_a_thread", [False, True])
def test_worker_processes_give_the_threads_outcomes_in_commit_order(
    tmp_path: Path, beside_a_thread: bool
) -> None:
    import psutil

    repo = _history(tmp_path)
    options = MineOptions()
    threads = list(mine_repository(repo.path, "repo", "main", options, processes=0))
    assert multiprocessing.active_children() == []
    done = threading.Event()
    if beside_a_thread:  # as in the app, where the workers cannot be forked from here
        threading.Thread(target=done.wait, daemon=True).start()
    # a test process may run threads left by other tests (a Dask client's, say) or have
    # imported torch; the command's own run is checked in
    # test_the_mine_command_forks_its_workers
    alone = threading.active_count() == 1 and "torch" not in sys.modules
    forked = alone and sys.platform.startswith("linux")
    walk = mine_repository(repo.path, "repo", "main", options, processes=2, process_after=3)
    try:
        processes = [next(walk) for _ in range(10)]
        workers = multiprocessing.active_children()
        assert len(workers) == 2  # the two workers are up
        commands = [" ".join(psutil.Process(w.pid).cmdline()) for w in workers]
        own = " ".join(psutil.Process().cmdline())
        assert all(("forkserver" in c) != forked for c in commands)
        assert all((c == own) == forked for c in commands)
        processes += list(walk)
    finally:
        walk.close()
        done.set()
    if beside_a_thread:
        assert not forked
    mined = [o for o in threads if isinstance(o, Mined)]
    assert len(mined) == 40
    assert [r.row.functions for r in mined[:5]] == [["f0"], ["f0"], ["f0"], ["f0"], ["f1"]]
    assert _as_plain(processes) == _as_plain(threads)


def _threads_mined(path: Path, options: MineOptions) -> list:
    """The commits a run on threads (the reference) stores, as plain data."""
    outcomes = mine_repository(path, "repo", "main", options, processes=0)
    return _as_plain([o for o in outcomes if isinstance(o, Mined)])


def _survivors(path: Path, options: MineOptions) -> list[CommitStat]:
    stats = iter_commit_stats(path, "main", None, None, None, None)
    return [s for s in stats if isinstance(s, CommitStat) and cheap_filter(s, options) is None]


def test_a_killed_worker_process_loses_no_commit(tmp_path: Path) -> None:
    repo = _history(tmp_path, commits=24)
    options = MineOptions()
    survivors = _survivors(repo.path, options)
    pool = ExtractPool(repo.path, "repo", "main", options, processes=2, process_after=0)
    try:
        done = [pool.outcome(pool.submit(stat)) for stat in survivors[:4]]  # workers up
        workers = multiprocessing.active_children()
        assert 1 <= len(workers) <= 2
        for worker in workers:  # stopped, they take the work and cannot answer
            os.kill(worker.pid, signal.SIGSTOP)
        in_flight = [pool.submit(stat) for stat in survivors[4:]]
        for worker in workers:
            os.kill(worker.pid, signal.SIGKILL)
        done += [pool.outcome(pending) for pending in in_flight]
        assert pool.restarted >= 1  # what the dead workers owed was extracted here
    finally:
        pool.close()
    assert _as_plain(done) == _threads_mined(repo.path, options)


def test_survivors_held_before_the_processes_start_go_to_the_workers(tmp_path: Path) -> None:
    repo = _history(tmp_path, commits=12)
    options = MineOptions()
    survivors = _survivors(repo.path, options)
    pool = ExtractPool(repo.path, "repo", "main", options, processes=2, process_after=4)
    try:
        pending = [pool.submit(stat) for stat in survivors]
        assert all(p.worker is not None for p in pending)  # the first four included
        outcomes = [pool.outcome(p) for p in pending]
    finally:
        pool.close()
    assert _as_plain(outcomes) == _threads_mined(repo.path, options)


def test_an_outcome_wanted_early_is_extracted_here(tmp_path: Path) -> None:
    repo = _history(tmp_path, commits=6)
    options = MineOptions()
    survivors = _survivors(repo.path, options)
    pool = ExtractPool(repo.path, "repo", "main", options, processes=2, process_after=4)
    try:
        early = [pool.submit(stat) for stat in survivors[:3]]
        assert not any(p.future.done() for p in early)  # held: no process started yet
        first = pool.outcome(early[0])  # needed now: the held three go to threads here
        assert multiprocessing.active_children() == []
        later = [pool.submit(stat) for stat in survivors[3:]]
        outcomes = [first] + [pool.outcome(p) for p in early[1:] + later]
    finally:
        pool.close()
    assert all(p.worker is None for p in early)
    assert _as_plain(outcomes) == _threads_mined(repo.path, options)


def _mine_as_daemon(path: str, answers: multiprocessing.Queue) -> None:
    options = MineOptions()
    outcomes = list(
        mine_repository(Path(path), "repo", "main", options, processes=2, process_after=0)
    )
    answers.put((processes_allowed(), sum(isinstance(o, Mined) for o in outcomes)))


def test_a_daemonic_process_extracts_in_threads(tmp_path: Path) -> None:
    repo = _history(tmp_path, commits=8)
    context = multiprocessing.get_context("forkserver")
    answers = context.Queue()
    child = context.Process(target=_mine_as_daemon, args=(str(repo.path), answers), daemon=True)
    child.start()
    allowed, mined = answers.get(timeout=120)
    child.join(timeout=30)
    assert child.exitcode == 0
    assert (allowed, mined) == (False, 8)
    assert processes_allowed()


def test_a_file_most_commits_touch_spills_over_to_an_idle_worker(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    bodies = [f"y = y + {k}" for k in range(4)]
    repo.commit("start", {"core.py": py_module(*bodies)})
    for i in range(60):  # more than SPILL survivors ahead of the first one's worker
        bodies[i % 4] = f"y = y * {i + 2}"
        repo.commit(f"change {i}", {"core.py": py_module(*bodies)})
    options = MineOptions()
    survivors = _survivors(repo.path, options)
    pool = ExtractPool(repo.path, "repo", "main", options, processes=2, process_after=0)
    try:
        pending = [pool.submit(stat) for stat in survivors]  # faster than they are served
        spread = {p.worker for p in pending}
        outcomes = [pool.outcome(p) for p in pending]
    finally:
        pool.close()
    assert spread == {0, 1}  # one path, yet both workers got a share
    reference = list(mine_repository(repo.path, "repo", "main", options, processes=0))
    assert _as_plain(outcomes) == _as_plain(reference)  # every commit survives the filter
    assert sum(isinstance(o, Mined) for o in outcomes) == 60


_HOLD_WORKERS = """
import sys, threading, time
from pathlib import Path
from engines.commits.extract_pool import ExtractPool
from engines.commits.gitlog import CommitStat, iter_commit_stats
from engines.commits.miner import cheap_filter
from engines.commits.options import MineOptions

if __name__ == "__main__":
    repo, options = Path(sys.argv[1]), MineOptions()
    if sys.argv[2] == "beside-a-thread":  # as in the app: no fork beside a thread
        threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
    stats = [s for s in iter_commit_stats(repo, "main", None, None, None, None)
             if isinstance(s, CommitStat) and cheap_filter(s, options) is None]
    pool = ExtractPool(repo, "repo", "main", options, processes=2, process_after=0)
    for pending in [pool.submit(s) for s in stats]:
        pool.outcome(pending)
    print("ready", flush=True)
    time.sleep(120)
"""


@pytest.mark.parametrize("run_as", ["alone", "beside-a-thread"])
def test_workers_and_their_git_processes_end_when_the_run_is_killed(
    tmp_path: Path, run_as: str
) -> None:
    import subprocess

    import psutil

    repo = _history(tmp_path, commits=12)
    run = subprocess.Popen(
        [sys.executable, "-c", _HOLD_WORKERS, str(repo.path), run_as],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "ready"
        below = psutil.Process(run.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in below]
        if run_as == "alone":  # forked: the workers run the run's own command line
            own = " ".join(psutil.Process(run.pid).cmdline())
            assert commands.count(own) == 2
            assert not any("forkserver" in c for c in commands if c != own)
        else:
            assert sum("forkserver" in c for c in commands) >= 2  # the server and a worker
        assert any("cat-file" in c for c in commands)  # a worker's git process
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        _, alive = psutil.wait_procs(below, timeout=20)
        assert alive == []
    finally:
        if run.poll() is None:
            run.kill()


_CLI_THEN_CHILDREN = """
import runpy, sys
import psutil

if __name__ == "__main__":
    sys.argv = ["curator", "mine", "commits", sys.argv[1], "--db", sys.argv[2]]
    try:
        runpy.run_module("curator", run_name="__main__")
    except SystemExit as done:
        print("exit", done.code)
    # a forkserver, once started, stays until this process ends; forked workers do not
    print("children", [" ".join(p.cmdline())[:60] for p in psutil.Process().children()])
"""


def test_the_mine_command_forks_its_workers(tmp_path: Path) -> None:
    import subprocess

    repo = _history(tmp_path, commits=40)  # more survivors than are held before processes
    db = tmp_path / "curator.db"
    run = subprocess.run(
        [sys.executable, "-c", _CLI_THEN_CHILDREN, str(repo.path), str(db)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        timeout=300,
    )
    lines = run.stdout.splitlines()
    assert "exit 0" in lines or "exit None" in lines, run.stderr
    assert lines[-1] == "children []"  # no forkserver: the workers were forked
    assert "stored" in run.stdout and "40" in run.stdout


class _Echo:
    """A worker handler that answers each request with it."""

    def __call__(self, request: object) -> object:
        return request


def test_ctrl_c_leaves_the_workers_to_the_run_and_a_cancelled_wait_is_no_error() -> None:
    from concurrent.futures import Future

    from engines.commits.worker_process import Answers, WorkerProcess, start_context

    worker = WorkerProcess(start_context(), _Echo, ())
    answers = Answers([worker])
    try:
        assert worker.submit("before").result(timeout=30) == "before"
        os.kill(worker.process.pid, signal.SIGINT)  # what Ctrl-C sends the whole group
        assert worker.submit("after").result(timeout=30) == "after"
        assert worker.process.is_alive()
        cancelled: Future[object] = Future()
        cancelled.cancel()
        worker._owed.append(cancelled)  # a run that stopped waiting for this answer
        worker.answered("late")  # used to raise InvalidStateError in the reader thread
        assert cancelled.cancelled()
    finally:
        worker.stop()
        answers.join()
    assert not worker.process.is_alive()


def test_answers_read_after_the_worker_failed_are_dropped() -> None:
    # A run that stops (Ctrl-C) fails what its workers still owe once it has waited for
    # them; answers already in the pipe then reach the reader with nothing owed. The
    # reader thread died with "pop from an empty deque", a traceback under the run's
    # one-line message (seen in a fresh-clone CI run of tests/test_guarantees_audit.py).
    from engines.commits.worker_process import Answers, WorkerProcess, start_context

    worker = WorkerProcess(start_context(), _Echo, ())
    died: list[BaseException | None] = []
    before = threading.excepthook
    threading.excepthook = lambda args: died.append(args.exc_value)
    try:
        owed = [worker.submit(n) for n in range(20)]
        worker.fail()  # given up on: the 20 answers are still on their way
        answers = Answers([worker])
        worker.stop()
        answers.join()
    finally:
        threading.excepthook = before
    assert died == []
    assert not answers.thread.is_alive()
    assert all(f.done() and f.exception() is not None for f in owed)
