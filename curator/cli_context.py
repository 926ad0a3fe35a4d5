"""What a command takes from its invocation: the settings (read once per run, see
``curator.settings``), the store they name, and the annotator rule.

The annotator rule, the same for every command: the name is ``--annotator``, else
``$CURATOR_ANNOTATOR``, else ``annotator`` in ``./curator.toml``, else in the user's
config file. A vote (``curator vote``, ``curator undo``) must have one and stops with
how to set it; the app and ``curator models promote`` fall back to the login name.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curator.presentation.cli_output import EXIT_USAGE, fail, protect_database, warn
from curator.presentation.migration_progress import MigrationBar
from curator.settings import (
    Settings,
    SettingsError,
    load_settings,
    unknown_variables,
    user_config_path,
)
from store import Store, open_store
from store.connection import BUSY_TIMEOUT_MS, StoreError

if TYPE_CHECKING:
    from engines.kernels.checker import KernelWorker


def how_to_name() -> str:
    """How to set the annotator, naming this user's config file (``XDG_CONFIG_HOME``
    moves it from ``~/.config``)."""
    return (
        '--annotator NAME, or set CURATOR_ANNOTATOR, or annotator = "NAME" in ./curator.toml'
        f" or {user_config_path()}"
    )


class _Run:
    """The settings of the current invocation: read on first use, once per run."""

    root_flags: dict[str, Any] = {}  # noqa: RUF012 - replaced, never mutated
    settings: Settings | None = None


def begin_run(**root_flags: Any) -> None:
    """Called by the root command at the start of every invocation: forget the last
    run's settings (tests invoke the app many times in one process) and remember the
    root's flags (``curator --db X COMMAND``), which hold for every command."""
    _Run.root_flags = {k: v for k, v in root_flags.items() if v is not None}
    _Run.settings = None


def settings(**flags: Any) -> Settings:
    """The run's settings with this command's flags on top; a bad config file or value
    exits 2 with one line. Nothing is read until a command asks."""
    try:
        if _Run.settings is None:
            _Run.settings = load_settings(_Run.root_flags)
            for line in unknown_variables(os.environ):
                warn(line)
        return _Run.settings.with_flags(**flags)
    except SettingsError as exc:
        fail(str(exc), EXIT_USAGE)


def open_db(db: Path | None, create: bool = True) -> Store:
    """Open the store the settings name (``--db`` first) or exit with a one-line error;
    a long migration (search indexes for a large existing store) shows a bar, and a wait
    for another process's write lock (opening, or any write later) says so. Commands
    that only read pass ``create=False``: a mistyped path is an error, not a new empty
    store (and new folders) that reads as "nothing here"."""
    bar = MigrationBar()
    path = settings(db=db).db
    if not create and not Path(path).exists():
        fail(
            f"{path}: no such database (`curator mine ...` or `curator import items ...`"
            " create one; --db or $CURATOR_DB names another)",
            EXIT_USAGE,
        )
    protect_database(Path(path))
    try:
        return open_store(path, progress=bar, waiting=_say_waiting)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        bar.close()


def _say_waiting(path: Path) -> None:
    """One line on stderr when a command starts waiting for another process's lock."""
    warn(
        f"{path}: another process holds the write lock (a long write, or the migration of"
        f" an older database); waiting up to {BUSY_TIMEOUT_MS // 1000} s for it"
    )


def login_name() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "annotator"


def required_annotator(flag: str | None, doing: str = "voting") -> str:
    """The annotator for a vote; exits 2 saying how to set one when none is set."""
    name = (settings(annotator=flag).annotator or "").strip()
    if not name:
        fail(f"say who is {doing}: {how_to_name()}", EXIT_USAGE)
    return name


def annotator_or_login(flag: str | None) -> str:
    """The annotator, else the login name (the app, promotions)."""
    return (settings(annotator=flag).annotator or "").strip() or login_name()


def kernel_worker() -> KernelWorker:
    """The OpenCL worker child with the settings' device and memory cap."""
    from engines.kernels.checker import KernelWorker

    s = settings()
    return KernelWorker(memory_mb=s.kernel_memory_mb, device=s.opencl_device)


def report_sandbox(worker: KernelWorker) -> None:
    """Say once, before kernels run, what of the kernel sandbox the system refused."""
    from engines.kernels.checker import WorkerFailure

    try:
        status = worker.sandbox()
    except WorkerFailure as exc:
        warn(f"the kernel worker did not start: {exc.detail}")
        return
    if status["missing"] == ["not asked for"]:
        warn("kernels run without the sandbox (CURATOR_KERNEL_SANDBOX=0)")
    elif status["missing"]:
        warn(
            "kernels run without part of the sandbox, which this system refused: "
            + "; ".join(status["missing"])
            + " (they still run in a child process with a memory cap and timeouts)"
        )
