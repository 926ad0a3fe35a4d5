"""The teacher's daemon thread pool: results and exceptions through futures, cancelled
calls skipped, and a call stuck in flight does not keep a process from exiting."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import wait

import pytest

from engines.labelers.teacher.daemon_pool import DaemonPool
from tests.conftest import ROOT


def test_results_and_exceptions_come_back_through_the_futures() -> None:
    pool = DaemonPool(2, "t")
    ok = pool.submit(lambda x: x * 2, 21)
    bad = pool.submit(lambda: 1 / 0)
    wait([ok, bad], timeout=10)
    assert ok.result() == 42
    with pytest.raises(ZeroDivisionError):
        bad.result()
    pool.shutdown()


def test_a_call_cancelled_while_queued_never_runs() -> None:
    pool = DaemonPool(1, "t")
    gate = threading.Event()
    ran: list[str] = []
    first = pool.submit(lambda: gate.wait(10) and ran.append("first"))
    second = pool.submit(lambda: ran.append("second"))
    assert second.cancel()
    gate.set()
    wait([first], timeout=10)
    pool.shutdown()
    time.sleep(0.1)
    assert ran == ["first"] and second.cancelled()


def test_a_stuck_call_does_not_hold_the_process_open() -> None:
    program = (
        "import threading\n"
        "from engines.labelers.teacher.daemon_pool import DaemonPool\n"
        "pool = DaemonPool(1, 't')\n"
        "pool.submit(threading.Event().wait)\n"  # never returns
        "pool.shutdown()\n"
        "print('done')\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert finished.returncode == 0 and finished.stdout.strip() == "done", finished.stderr
