"""One training job in a child process, so the process that asked for it never stalls.

Importing torch and running a training step hold Python's interpreter lock for long
stretches (the import alone about half a second); in a thread of the app they froze
its screen. :func:`run_in_child` runs a job in ``python -m curator.training_child`` and
hands what the job reports (progress, the registered model) to a callback as it comes.

The protocol, both ways pickled: the parent writes ``(job, args)`` on the child's
stdin and keeps stdin open; closing it cancels (so does the parent dying). The child
calls ``job(report, cancel, *args)`` and answers on a pipe whose descriptor is its
first argument: ``(kind, value)`` for each report, then one of ``("done", result)``,
``("refused", message)`` (:class:`~curator.training.TrainingRefused`) or
``("failed", message)`` (any other exception). The child's own output (library
warnings, a traceback) goes to a temporary file, never to the parent's terminal; its
last line is quoted when the child dies without an answer.

A cancelled job stops cooperatively (training checks the cancel flag after each step
and removes its staging directory; the store is written in single transactions), so
nothing half-written is left. A child still running :data:`KILL_AFTER_S` seconds after
the cancel is killed: SQLite rolls back an unfinished transaction, and a model
directory renamed before its row was committed is skipped by the next registration.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import IO, Any

KILL_AFTER_S = 60.0
POLL_S = 0.1

Report = Callable[[str, Any], None]
"""What a job calls to send ``(kind, value)`` to the parent."""


class ChildFailed(RuntimeError):
    """The job raised, or its process died without an answer; the message is one line."""


def run_in_child(
    job: Callable[..., Any],
    args: tuple[Any, ...],
    on_report: Report,
    cancel: threading.Event,
    should_stop: Callable[[], bool] | None = None,
) -> Any:
    """Run ``job(report, cancel, *args)`` in a child process and return its result.

    ``job`` must be a module-level function (it is pickled by name). Reports reach
    ``on_report`` in this thread, in order. Setting ``cancel`` (or ``should_stop()``
    turning true) asks the child to stop. Raises
    :class:`~curator.training.TrainingRefused` as the job raised it, and
    :class:`ChildFailed` for any other failure."""
    from curator.training import TrainingRefused

    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "curator.training_child", str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=errors,
                stderr=errors,
                pass_fds=(write_fd,),
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        answers = Connection(read_fd, writable=False)
        try:
            answer = _converse(proc, answers, (job, args), on_report, cancel, should_stop)
        finally:
            answers.close()
            _end(proc)
        kind, value = answer if answer is not None else ("died", None)
        if kind == "done":
            return value
        if kind == "refused":
            raise TrainingRefused(str(value))
        if kind == "failed":
            raise ChildFailed(str(value))
        raise ChildFailed(_death(proc.returncode, _last_line(errors)))


def _converse(
    proc: subprocess.Popen[bytes],
    answers: Connection,
    job: tuple[Callable[..., Any], tuple[Any, ...]],
    on_report: Report,
    cancel: threading.Event,
    should_stop: Callable[[], bool] | None,
) -> tuple[str, Any] | None:
    """Send the job, pass reports on until the final answer (None: the child died)."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(pickle.dumps(job))
        proc.stdin.flush()
    except BrokenPipeError:
        return None  # died at start: its output says why
    cancelled_at: float | None = None
    while True:
        if cancelled_at is None and (cancel.is_set() or (should_stop and should_stop())):
            cancelled_at = time.monotonic()
            proc.stdin.close()  # the child's watcher hears EOF and sets its cancel flag
        if cancelled_at is not None and time.monotonic() - cancelled_at > KILL_AFTER_S:
            proc.kill()
        if not wait([answers], POLL_S):
            continue
        try:
            kind, value = answers.recv()
        except EOFError:  # it died (its output says why)
            return None
        if kind in ("done", "refused", "failed"):
            return kind, value
        on_report(kind, value)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin and reap it (it exits once it has answered)."""
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
    try:
        proc.wait(timeout=KILL_AFTER_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _last_line(errors: IO[bytes]) -> str:
    errors.seek(0)
    lines = [ln.strip() for ln in errors.read().decode("utf-8", "replace").splitlines()]
    return next((ln for ln in reversed(lines) if ln), "")


def _death(code: int | None, last: str) -> str:
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited ({code})"
    said = f": {last}" if last else ""
    return f"the training process {how} without an answer{said}"


# The child -------------------------------------------------------------------------------


def _watch_parent(cancel: threading.Event) -> None:
    """Set ``cancel`` when the parent closes our stdin (a cancel, or the parent died)."""
    with contextlib.suppress(OSError):
        sys.stdin.buffer.read()
    cancel.set()


def main() -> None:
    """The child: read the job, run it, answer."""
    answers = Connection(int(sys.argv[1]), readable=False)
    job, args = pickle.load(sys.stdin.buffer)
    cancel = threading.Event()
    threading.Thread(target=_watch_parent, args=(cancel,), daemon=True).start()

    def report(kind: str, value: Any) -> None:
        answers.send((kind, value))

    from curator.training import TrainingRefused

    try:
        result = job(report, cancel, *args)
    except TrainingRefused as exc:
        answers.send(("refused", str(exc)))
    except Exception as exc:  # one line for the parent to show
        answers.send(("failed", " ".join(f"{type(exc).__name__}: {exc}".split())))
    else:
        answers.send(("done", result))
    answers.close()


if __name__ == "__main__":
    main()
