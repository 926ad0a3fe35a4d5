"""Helpers for tests that kill a Dask worker on purpose: find the worker running a task."""

from __future__ import annotations

import re
import time

from distributed import Client


def worker_running(client: Client, key: re.Pattern[str], what: str, timeout: float = 60) -> str:
    """The address of the worker that is running a task whose key matches ``key``;
    fails the test, naming ``what``, when none does within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker, keys in client.processing().items():
            if any(key.match(str(k)) for k in keys):
                return str(worker)
        time.sleep(0.02)
    raise AssertionError(f"{what} never started")
