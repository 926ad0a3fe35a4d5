"""Where the survivors of the cheap filter are extracted: worker processes on a long
run, threads of this process on a short one.

Extraction is mostly Python (naming functions, rewriting macros, slicing code) around
tree-sitter parses, and it holds the interpreter's lock: on real histories two threads
run no faster than one (fmt, numpy and commons-lang measured in docs/benchmarks.md),
while two processes cut the wall time by a fifth to a third on two cores and keep
scaling with more. A process pool costs a fraction of a second to start, so a run holds
its first ``process_after`` survivors back and starts the processes only when there is
more to do; then the held survivors go to the workers too, whose parses of those files
the later versions start from (extracting them here first cost fmt's window a second
of CPU: a dozen large headers parsed in full twice). A short run, or one whose caller
needs an outcome before more survivors come, extracts the held ones in threads here;
small repositories (and the tests' generated ones) never start processes. A daemonic
process (a Dask worker) may not have children: it uses threads.

Each worker process (:mod:`engines.commits.worker_process`) owns its git streams and
its cache of parsed blobs. A survivor goes to the worker its first file's earlier
versions went to, so it is parsed incrementally from the previous version, as in one
process, unless that worker is ``SPILL`` survivors busier than the least busy one (see
:meth:`ExtractPool._choose`). A worker that dies (killed, out of memory) costs nothing
but time: its commits are extracted again in this process, and its share goes to the
workers left. A worker also ends when the run's process is gone.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from engines.commits.extract import TreeCache, extract_fast
from engines.commits.gitlog import CommitStat
from engines.commits.gitstream import GitStreams
from engines.commits.options import MineOptions
from engines.commits.outcomes import Outcome, Rejected, flat
from engines.commits.worker_process import Answers, WorkerProcess, start_context

THREADS = 2
PROCESS_AFTER = 32  # survivors extracted in threads before worker processes start
SPILL = 24  # how much busier a path's worker may be before another takes the path over
MAX_PROCESSES = 8


def default_processes() -> int:
    """One worker process per core, at most ``MAX_PROCESSES``."""
    return max(1, min(MAX_PROCESSES, os.cpu_count() or 1))


def processes_allowed() -> bool:
    """Whether this process may start worker processes (a daemonic one may not)."""
    return not multiprocessing.current_process().daemon


def failed_outcome(stat: CommitStat, exc: BaseException) -> Rejected:
    """A commit that could not be read: one line saying why."""
    detail = flat(str(exc)) or type(exc).__name__
    return Rejected(stat.sha, "error", f"cannot read commit: {detail}")


class _Local:
    """Git streams (one per thread) and one tree cache: extraction in this process."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cache = TreeCache()
        self._local = threading.local()
        self._opened: list[GitStreams] = []
        self._lock = threading.Lock()

    def extract(self, source: str, rev: str, stat: CommitStat, options: MineOptions) -> Outcome:
        git = getattr(self._local, "git", None)
        try:
            if git is None:
                git = self._local.git = GitStreams(self.path)
                with self._lock:
                    self._opened.append(git)
            return extract_fast(git, self.cache, source, rev, stat, options)
        except Exception as exc:  # a damaged object or a parser failure: skip this commit
            self._local.git = None  # its pipes may be mid-answer: start afresh
            return failed_outcome(stat, exc)

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for git in opened:
            git.close()


class _Extractor:
    """In a worker process: its own streams and cache, and what it does with a survivor."""

    def __init__(self, path: str, source: str, rev: str, options: MineOptions) -> None:
        self.local = _Local(Path(path))
        self.source, self.rev, self.options = source, rev, options

    def __call__(self, stat: CommitStat) -> Outcome:
        return self.local.extract(self.source, self.rev, stat, self.options)

    def close(self) -> None:
        self.local.close()


@dataclass
class Pending:
    """A survivor handed to the pool, and where its outcome will come from (``worker``:
    the index of its worker process, None when it is extracted here)."""

    stat: CommitStat
    future: Future[Outcome]
    worker: int | None = None


class ExtractPool:
    """Extracts survivors for one run of :func:`engines.commits.miner.mine_repository`.

    ``processes`` worker processes (default: one per core) once ``process_after``
    survivors have been seen; 0 or 1, or a daemonic caller, means threads only.
    """

    def __init__(
        self,
        path: Path,
        source: str,
        rev: str,
        options: MineOptions,
        processes: int | None = None,
        process_after: int = PROCESS_AFTER,
    ) -> None:
        self.path, self.source, self.rev, self.options = path, source, rev, options
        wanted = default_processes() if processes is None else processes
        self.processes = wanted if wanted > 1 and processes_allowed() else 0
        self.process_after = process_after
        self.local = _Local(path)
        self.threads = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="extract")
        self.workers: list[WorkerProcess | None] = []
        self._answers: Answers | None = None
        self.restarted = 0  # survivors extracted here again after their worker died
        self._seen = 0
        self._held: list[Pending] = []  # survivors waiting for the processes' decision
        self._home: dict[str, int] = {}  # the worker each path's versions go to
        self._queued: list[int] = []  # survivors waiting on or in each worker
        self._lock = threading.Lock()

    def submit(self, stat: CommitStat) -> Pending:
        self._seen += 1
        if self.processes and not self.workers:
            if self._seen <= self.process_after:
                held = Pending(stat, Future())
                self._held.append(held)
                return held
            self._start_workers()
            self._release(to_workers=True)
        return self._dispatch(stat)

    def _dispatch(self, stat: CommitStat) -> Pending:
        k = self._choose(stat)
        worker = self.workers[k] if k is not None else None
        if k is not None and worker is not None:
            try:
                future = worker.submit(stat)
            except BrokenProcessPool:
                self._drop(k)
            else:
                with self._lock:
                    self._queued[k] += 1
                future.add_done_callback(lambda _, k=k: self._finished(k))
                return Pending(stat, future, k)
        return Pending(stat, self._here(stat))

    def outcome(self, pending: Pending) -> Outcome:
        """The survivor's outcome, extracted again here if its worker died."""
        if self._held:  # wanted before the pool knows whether processes pay off
            self._release(to_workers=False)
        try:
            return pending.future.result()
        except BrokenProcessPool:
            self.restarted += 1
            if pending.worker is not None:
                self._drop(pending.worker)
            return self.local.extract(self.source, self.rev, pending.stat, self.options)

    def _release(self, to_workers: bool) -> None:
        """Hand the held survivors on, in their order: to the workers just started, or
        to this process's threads."""
        held, self._held = self._held, []
        for pending in held:
            if to_workers:
                handed = self._dispatch(pending.stat)
                pending.future, pending.worker = handed.future, handed.worker
            else:
                pending.future = self._here(pending.stat)

    def close(self) -> None:
        """Stop every worker (what is queued is dropped) and close the git streams."""
        for pending in self._held:
            pending.future.cancel()
        self._held = []
        live = [w for w in self.workers if w is not None]
        for worker in live:  # all at once: a large worker takes a while to exit
            worker.ask_to_stop()
        for worker in live:
            worker.stop()
        if self._answers is not None:
            self._answers.join()
        self.workers, self._queued, self._answers = [], [], None
        self.threads.shutdown(wait=True, cancel_futures=True)
        self.local.close()

    def _here(self, stat: CommitStat) -> Future[Outcome]:
        return self.threads.submit(self.local.extract, self.source, self.rev, stat, self.options)

    def _start_workers(self) -> None:
        """Every worker process first, then the thread reading their answers: a fork
        (see :func:`engines.commits.worker_process.start_context`) is taken only while
        this process runs one thread."""
        context = start_context()
        args = (str(self.path), self.source, self.rev, self.options)
        for _ in range(self.processes):
            try:
                self.workers.append(WorkerProcess(context, _Extractor, args))
            except OSError:  # no more processes: go on with those that started
                break
        self._queued = [0] * len(self.workers)
        if self.workers:
            self._answers = Answers(w for w in self.workers if w is not None)

    def _choose(self, stat: CommitStat) -> int | None:
        """The worker for a survivor: where its path's earlier versions went (their parse
        is there to start from), unless that worker has ``SPILL`` more survivors waiting
        than the least busy one, which then takes the path over (one file that most
        commits touch would otherwise keep one worker busy and the others idle)."""
        live = [k for k, w in enumerate(self.workers) if w is not None]
        if not live:
            return None
        key = stat.files[0].path if stat.files else stat.sha
        with self._lock:
            least = min(live, key=self._queued.__getitem__)
            home = self._home.get(key)
            gone = home is None or self.workers[home] is None
            if gone or self._queued[home] > self._queued[least] + SPILL:
                home = least
        self._home[key] = home
        return home

    def _finished(self, k: int) -> None:
        with self._lock:
            self._queued[k] -= 1

    def _drop(self, k: int) -> None:
        worker = self.workers[k]
        self.workers[k] = None
        if worker is not None:
            worker.kill()
