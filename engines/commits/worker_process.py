"""One extraction worker process and the pipe it is fed through.

:class:`WorkerProcess` starts a process that extracts survivors of the cheap filter one
after another, in the order they were sent, and answers each on the same pipe.
:class:`Answers` is the one thread of the run's process that reads every worker's
answers and settles their futures. A worker that dies (killed, out of memory) fails
what it owed with :class:`BrokenProcessPool`, as a process pool would.

On Linux the processes are forked from the run's process when it runs no other thread
at that moment (the ``curator`` command): a fork is immediate and the worker starts
with every module already imported. Otherwise (the app, a test harness with threads,
macOS) they come from multiprocessing's forkserver where there is one, which is safe
beside threads and costs a fraction of a second once per process.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, InvalidStateError
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection, wait
from typing import Any

ORPHAN_CHECK_S = 1.0
STOP_WAIT_S = 5.0

# a request in, an answer out (never raises); a ``close()`` it has is called at the end
Handler = Callable[[Any], Any]


def start_context() -> multiprocessing.context.BaseContext:
    """fork on Linux when this process runs one thread and no torch (safe, and
    immediate); else forkserver where there is one, else spawn.

    As with any spawned or forkserver process, each worker then imports the caller's
    main script as ``__mp_main__``: a script that mines must keep its work under
    ``if __name__ == "__main__":`` (the ``curator`` command does)."""
    methods = multiprocessing.get_all_start_methods()
    # torch (a student labeling as the run goes) runs threads of its own, unseen by
    # ``threading``, and makes the process large: no fork then. Nor on macOS, where
    # system libraries may not survive a fork (Python itself spawns there by default).
    alone = threading.active_count() == 1 and "torch" not in sys.modules
    if alone and sys.platform.startswith("linux") and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    forkserver.set_forkserver_preload([__name__, "engines.commits.extract_pool"])
    return multiprocessing.get_context("forkserver")


STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def _stop_signals_blocked() -> Iterator[None]:
    """SIGINT and SIGTERM held back in this thread while a worker is forked: the child
    inherits the mask, so the signal cannot strike it before :func:`_serve` has set its
    handlers (it unblocks SIGTERM then); this process sees it once the mask is restored."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except (AttributeError, OSError, ValueError):  # a platform without signal masks
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _start_forkserver() -> None:
    """Start multiprocessing's forkserver with SIGINT ignored, which it inherits.

    Ctrl-C reaches every process of the terminal's group. The forkserver is a fresh
    interpreter that imports the preloaded modules (a few tenths of a second) before it
    ignores SIGINT itself, and one struck meanwhile printed a traceback under the run's
    one-line message. A signal mask would not do: the mask is reset when it starts. Only
    the start is covered (a few milliseconds), not the wait for its first worker, so a
    Ctrl-C still stops the run."""
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()  # no terminal's Ctrl-C reaches a run off the main thread
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


class WorkerProcess:
    """A process running ``make_handler(*args)`` once, then the handler on every
    request it is sent, answering in order."""

    def __init__(
        self,
        context: multiprocessing.context.BaseContext,
        make_handler: Callable[..., Handler],
        args: tuple[Any, ...],
    ) -> None:
        here, there = context.Pipe()
        self.process = context.Process(  # type: ignore[attr-defined]
            target=_serve, args=(there, make_handler, args, os.getpid()), daemon=True
        )
        method = context.get_start_method()
        if method == "forkserver":
            _start_forkserver()
        with _stop_signals_blocked() if method == "fork" else contextlib.nullcontext():
            self.process.start()
        there.close()
        self.pipe: Connection = here
        self.broken = False
        self._asked = False  # to stop
        self._owed: deque[Future[Any]] = deque()  # sent, not answered yet, in order
        self._lock = threading.Lock()

    def submit(self, request: Any) -> Future[Any]:
        """Send ``request``; its answer settles the returned future."""
        future: Future[Any] = Future()
        with self._lock:
            if self.broken:
                raise BrokenProcessPool("the worker process has ended")
            self._owed.append(future)
        try:
            self.pipe.send(request)
        except (OSError, ValueError) as exc:  # the process is gone
            self.fail(exc)
        return future

    def answered(self, answer: Any) -> None:
        with self._lock:
            if not self._owed:  # failed (a stopping run gave up waiting): nothing is owed
                return
            future = self._owed.popleft()
        with contextlib.suppress(InvalidStateError):  # cancelled by a run that stops (Ctrl-C)
            future.set_result(answer)

    def fail(self, cause: BaseException | None = None) -> None:
        """The process is gone: what it owed fails, and so will what is sent to it."""
        with self._lock:
            self.broken = True
            owed, self._owed = list(self._owed), deque()
        for future in owed:
            if not future.done():
                error = BrokenProcessPool("the worker process ended before answering")
                error.__cause__ = cause
                future.set_exception(error)

    def ask_to_stop(self) -> None:
        """Ask the process to end after what it was sent (:meth:`stop` waits for it)."""
        if self._asked:
            return
        self._asked = True
        with contextlib.suppress(OSError, ValueError):
            self.pipe.send(None)

    def stop(self) -> None:
        """Ask the process to end after what it was sent, then make sure it has."""
        self.ask_to_stop()
        self.process.join(STOP_WAIT_S)
        if self.process.is_alive():
            self.process.terminate()
        self._ended()

    def kill(self) -> None:
        """End the process now; what it owed fails."""
        if self.process.is_alive():
            self.process.kill()
        self._ended()

    def _ended(self) -> None:
        """Wait for the process; what it owed fails. The pipe is closed by the thread
        reading the answers, once it sees the end: closed here, that thread could be
        about to wait on it."""
        self.process.join(STOP_WAIT_S)
        self.fail()


class Answers:
    """The thread that reads the answers of ``workers`` until each has ended."""

    def __init__(self, workers: Iterable[WorkerProcess]) -> None:
        self.workers = {w.pipe: w for w in workers}
        self.thread = threading.Thread(target=self._read, name="extract-answers", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        open_ = dict(self.workers)
        while open_:
            for pipe in wait(list(open_)):
                worker = open_[pipe]  # type: ignore[index]
                try:
                    answer = pipe.recv()  # type: ignore[union-attr]
                except (EOFError, OSError) as exc:  # stopped, killed or crashed
                    del open_[pipe]  # type: ignore[arg-type]
                    worker.fail(exc)
                    pipe.close()  # type: ignore[union-attr]
                    continue
                worker.answered(answer)

    def join(self) -> None:
        self.thread.join(STOP_WAIT_S)


def _serve(pipe: Connection, make_handler: Callable[..., Handler], args: tuple, run: int) -> None:
    # Ctrl-C reaches every process of the terminal's group; the run that started this
    # worker handles it and stops its workers, so a worker printing a traceback of its
    # own would only bury the run's one-line message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a forked worker inherits the run's handlers: SIGTERM (the run's stop() after a
    # timeout, or a kill of the whole group) must end it, not raise in it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with contextlib.suppress(AttributeError, OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # see _stop_signals_blocked
    threading.Thread(target=_exit_with, args=(run,), daemon=True).start()
    handler = make_handler(*args)
    try:
        while True:
            try:
                request = pipe.recv()
            except (EOFError, OSError):
                return
            if request is None:
                return
            answer = handler(request)
            try:
                pipe.send(answer)
            except OSError:  # the run is gone (killed, or stopped by SIGTERM): end quietly
                return
    finally:
        close = getattr(handler, "close", None)
        if close is not None:  # its own child processes, waited for
            close()


def _exit_with(run_pid: int) -> None:
    """End this worker once the run that started it is gone (killed, say): it would
    otherwise wait on its pipe, and keep its git processes, forever."""
    while True:
        time.sleep(ORPHAN_CHECK_S)
        try:
            os.kill(run_pid, 0)
        except (ProcessLookupError, PermissionError):  # gone, or its pid reused by another
            os._exit(0)
