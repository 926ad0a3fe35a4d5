"""A few daemon threads that run submitted calls and report through futures.

The teacher's requests run here rather than in a ``ThreadPoolExecutor`` because Python
joins an executor's threads when the process exits: after Ctrl-C, a request still
waiting on a slow model would hold ``curator teach`` open until its timeout, answers
stored and "interrupted" already printed. Daemon threads are left behind instead.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]


class DaemonPool:
    """``workers`` daemon threads taking calls in submission order."""

    def __init__(self, workers: int, name: str = "pool") -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._workers = max(1, workers)
        for index in range(self._workers):
            threading.Thread(target=self._work, name=f"{name}-{index}", daemon=True).start()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)``; its future holds the result or the exception."""
        future: Future[T] = Future()
        self._jobs.put((future, fn, args))
        return future

    def shutdown(self) -> None:
        """Let each thread end once the calls queued before this have run (a cancelled
        future's call is skipped); does not wait for them."""
        for _ in range(self._workers):
            self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller through the future
                future.set_exception(exc)
