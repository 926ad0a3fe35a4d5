"""Dask distributed plumbing shared by the engines that run on a cluster (mining,
prediction): a client of a scheduler or of a LocalCluster started for the run, the
dashboard's address, a watch on the workers that come and go, the driver's loop,
which ends in a :class:`ClusterError` when the scheduler is lost, and SIGTERM turned
into an interrupt so that a terminated run closes its cluster as Ctrl-C does."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from distributed import Client, Future

POLL_S = 0.5
"""How often a driver looks at its tasks and workers while it waits."""

WORKERS_PER_CORE = 4
"""A LocalCluster holds at most this many worker processes per core (and 8 on any
machine): more only share the same cores, and a huge number would exhaust memory."""


class ClusterError(Exception):
    """The cluster cannot be started or reached; the message says why in one line."""


@contextmanager
def dask_client(
    workers: int | None = None,
    scheduler: str | None = None,
    dashboard_address: str | None = ":8787",
) -> Iterator[Client]:
    """A client of an existing scheduler (``scheduler``: a malformed address, an unknown
    host or a refused connection fail at once, a silent one after Dask's
    ``distributed.comm.timeouts.connect``, 30 s unless configured), or of a LocalCluster
    of ``workers`` single-threaded worker processes started for the block and closed after.

    The LocalCluster's dashboard takes ``dashboard_address`` (another port if that one
    is busy; None: no dashboard).
    """
    from distributed import Client, LocalCluster

    if scheduler:
        _probe(scheduler)
        # a scheduler that goes away mid-run is said in one line, not a logged traceback
        logger = logging.getLogger("distributed.client")
        level = logger.level
        logger.setLevel(logging.CRITICAL)
        try:
            try:
                client = Client(scheduler)
            except (OSError, TimeoutError, ValueError) as exc:
                raise ClusterError(
                    f"cannot reach the Dask scheduler at {scheduler}: {exc}"
                ) from None
            except TypeError as exc:  # tls:// without Dask's TLS settings
                raise ClusterError(
                    f"cannot connect to the Dask scheduler at {scheduler}:"
                    f" {error_line(exc)} (a tls:// address needs Dask's distributed.comm.tls"
                    " settings: ca-file, client.cert, client.key)"
                ) from None
            try:
                yield client
            finally:
                client.close()
        finally:
            logger.setLevel(level)
        return
    cores = os.cpu_count() or 1
    most = max(8, WORKERS_PER_CORE * cores)
    if workers is not None and workers > most:
        raise ClusterError(
            f"{workers} local workers are too many for {cores} cores: start at most {most},"
            " or join a larger cluster with a scheduler address"
        )
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with warnings.catch_warnings(), _workers_leave_ctrl_c_to_the_run():
        warnings.simplefilter("ignore", UserWarning)  # "port 8787 is in use": we print the link
        cluster = LocalCluster(
            n_workers=workers or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=dashboard_address,
            silence_logs=logging.ERROR,
        )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


PROBE_S = 5.0

_OVER_TCP = ("tcp", "tls", "ws", "wss")
"""Schemes whose address is HOST:PORT of a TCP listener, which a plain connect probes."""


def _probe(scheduler: str) -> None:
    """Say at once when nothing can listen at a scheduler address over TCP (tcp, tls, ws,
    wss: a malformed port, a host that does not resolve, a refused connection) instead
    of after Dask's retries, and refuse addresses no scheduler of another process has."""
    address = scheduler.strip()
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme in ("http", "https"):
        raise ClusterError(
            f"{scheduler} is a web address (the dashboard's?): give the scheduler's,"
            " e.g. tcp://HOST:8786"
        )
    if scheme == "inproc":
        raise ClusterError(
            f"{scheduler} is an in-process address, which no other process can reach: give"
            " the scheduler's, e.g. tcp://HOST:8786"
        )
    if scheme not in _OVER_TCP:
        return  # ucx, ...: left to Dask
    host, colon, port_text = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ClusterError(
            f"{scheduler} is not a scheduler address: write {scheme}://HOST:PORT, e.g."
            f" {scheme}://127.0.0.1:8786"
        )
    try:
        socket.create_connection((host, int(port_text)), timeout=PROBE_S).close()
    except ConnectionRefusedError:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {scheduler}: connection refused"
            " (no scheduler listens there)"
        ) from None
    except socket.gaierror as exc:
        raise ClusterError(
            f"cannot reach the Dask scheduler at {scheduler}: host {host!r} not found"
            f" ({exc.strerror})"
        ) from None
    except OSError:
        return  # slow or filtered: Dask's own connect, with its timeout, decides


@contextmanager
def _workers_leave_ctrl_c_to_the_run() -> Iterator[None]:
    """Start local worker processes with Ctrl-C ignored (a process started while SIGINT is
    ignored keeps ignoring it): the terminal sends it to every process of its group, and
    each worker would print a traceback of its own while the run stops them anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a job scheduler, ``timeout``), stopping a run as Ctrl-C does:
    the batch being written is rolled back, the workers and git processes are stopped
    in order, and one line says so. Without it the run vanished without a word."""


def _raise_terminated(signum: int, frame: FrameType | None) -> NoReturn:
    raise Terminated


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread while the block lasts."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def dashboard_link(client: Client) -> str | None:
    """The Dask dashboard's address, or None when the scheduler serves none."""
    try:
        link = client.dashboard_link
    except (KeyError, AttributeError, OSError):
        return None
    return str(link) if link else None


def scheduler_lost(client: Client, exc: BaseException | None = None) -> ClusterError | None:
    """The error to stop a run with when ``client`` lost its scheduler (it died, or the
    network went): the client then cancels every task, and no result can come back.
    ``exc``, an error a call to the scheduler raised, also tells: a connection reset or
    closed comes before the client's status says it is gone."""
    from distributed.comm.core import CommClosedError

    gone = isinstance(exc, ConnectionError | CommClosedError)
    if client.status in ("running", "newly-created") and not gone:
        return None
    address = getattr(client.scheduler, "address", None) or "its address"
    return ClusterError(
        f"lost the Dask scheduler at {address}: what came back before is stored;"
        " run the same command again to resume"
    )


def drive(client: Client, running: dict[str, tuple[Any, Future]], turn: Callable[[], None]) -> None:
    """A driver's loop: call ``turn`` (take in what finished, look at the workers, submit
    more), then again each time a task in ``running`` ends or ``POLL_S`` passes, until
    ``running`` is empty. Whatever still runs when the loop is left (an error, Ctrl-C) is
    cancelled; a lost scheduler ends it with a :class:`ClusterError`."""
    from distributed import wait
    from distributed.client import FuturesCancelledError

    lost: ClusterError | None = None
    try:
        turn()
        while running:
            if lost := scheduler_lost(client):
                raise lost
            # cancelled tasks count as finished: the next turn takes them in
            with suppress(TimeoutError, FuturesCancelledError):
                wait([f for _, f in running.values()], POLL_S, "FIRST_COMPLETED")
            turn()
    except ClusterError:
        raise
    except Exception as exc:
        if lost := scheduler_lost(client, exc):
            raise lost from exc
        raise
    finally:
        # no cancel to send to a scheduler that is gone: it would wait out the timeout
        if running and lost is None and scheduler_lost(client) is None:
            client.cancel([f for _, f in running.values()])


def error_line(exc: BaseException) -> str:
    """The last line of a task's error (a worker's traceback text), or its type's name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1]


class WorkerWatch:
    """Notices workers joining and leaving between polls, and asks the scheduler how
    often a finished task had to start again."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.workers: dict[str, int] = dict(client.nthreads())
        self.can_ask = True

    def redone(self, keys: list[str]) -> dict[str, int]:
        """How many times each finished task was started again after losing its worker."""
        if not keys or not self.can_ask:
            return {}
        try:
            return dict(self.client.run_on_scheduler(_suspicious, keys=keys))
        except Exception:  # a scheduler without Curator, or one refusing to run code:
            self.can_ask = False  # the counts are informative only, stop asking
            return {}

    @property
    def threads(self) -> int:
        return sum(self.workers.values())

    def poll(self) -> tuple[list[str], bool]:
        """Workers that left since the last poll, and whether the set changed at all
        (nothing, once the scheduler is lost: asking it would wait out the connect
        timeout, and the driver's loop stops on the loss right after)."""
        if scheduler_lost(self.client) is not None:
            return [], False
        now = dict(self.client.nthreads())
        gone = sorted(set(self.workers) - set(now))
        changed = set(now) != set(self.workers)
        self.workers = now
        return gone, changed


def _suspicious(dask_scheduler: Any, keys: list[str]) -> dict[str, int]:
    """Runs on the scheduler: how many workers died while running each task."""
    found = {}
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        if ts is not None:
            found[key] = int(ts.suspicious)
    return found
