"""The service's two connections ("lanes") and the base every part of the service
builds on.

The quick lane serves the item on screen and votes, the slow lane serves counts and
reports, so a slow figure (agreement over a big set) never holds up a key press. Each
lane is used by one thread at a time. Only the service's own modules run work on a
lane; screens call the service's named methods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from annotation.routing import DEFAULT_LEASE_MINUTES
from curator.settings import default_cache
from store import Store, open_store

T = TypeVar("T")


class _Lane:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._store: Store | None = None

    @contextmanager
    def store(self) -> Iterator[Store]:
        with self.lock:
            if self._store is None:
                self._store = open_store(self.path)
            yield self._store

    def close(self) -> None:
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None


class ServiceBase:
    """One annotator on one database, with the two lanes."""

    def __init__(
        self,
        db_path: Path,
        annotator: str,
        kernel_memory_mb: int | None = None,
        opencl_device: str | None = None,
        lease_minutes: float = DEFAULT_LEASE_MINUTES,
        cache: Path | None = None,
    ) -> None:
        self.db_path = Path(db_path)
        # Where named student bases (mpnet) are unpacked once.
        self.cache = cache if cache is not None else default_cache(os.environ)
        self.annotator = annotator
        # How long an item served by routing stays claimed by this annotator.
        self.lease_minutes = lease_minutes
        # The kernel check's worker child: memory cap (None: the checker's default)
        # and OpenCL device, from the settings the app was started with.
        self.kernel_memory_mb = kernel_memory_mb
        self.opencl_device = opencl_device
        self._quick_lane = _Lane(self.db_path)
        self._slow_lane = _Lane(self.db_path)

    def close(self) -> None:
        self._quick_lane.close()
        self._slow_lane.close()

    def _quick(self, fn: Callable[[Store], T]) -> T:
        with self._quick_lane.store() as store:
            return fn(store)

    def _slow(self, fn: Callable[[Store], T]) -> T:
        with self._slow_lane.store() as store:
            return fn(store)
