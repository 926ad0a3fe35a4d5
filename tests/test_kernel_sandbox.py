"""The kernel worker's sandbox, asked of the real worker child: it cannot open a network
socket or reach a server listening on this machine, write outside its scratch directory
or fork, and a program it starts (as PoCL starts its linker) is just as confined."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.kernels.checker import KernelWorker


def _namespaces_allowed() -> bool:
    """Whether this system lets an unprivileged process make user+net+mount namespaces."""
    done = subprocess.run(["unshare", "-Urnm", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    listener = socket.create_server(("127.0.0.1", 0))
    yield listener.getsockname()[1]
    listener.close()


def probe(worker: KernelWorker, what: str, path: str = "") -> str:
    worker.send({"op": "probe", "what": what, "path": path})
    return worker.receive(30, f"probing {what}")["probe"]


def test_the_worker_says_how_it_is_confined(worker: KernelWorker) -> None:
    status = worker.sandbox()
    if _namespaces_allowed():
        assert status["missing"] == []
        assert any("namespaces" in step for step in status["applied"])
        assert "seccomp: no fork, no network sockets" in status["applied"]
    else:  # the system refuses: the worker says so, and runs on
        assert any(step.startswith("namespaces") for step in status["missing"])


def test_no_network(worker: KernelWorker, server: int) -> None:
    assert probe(worker, "socket").startswith("PermissionError")
    assert probe(worker, "connect", str(server)).startswith("PermissionError")


def test_no_writes_outside_the_scratch_directory(worker: KernelWorker, tmp_path: Path) -> None:
    outside = tmp_path / "written-by-kernel.txt"
    assert "Read-only file system" in probe(worker, "write", str(outside))
    assert not outside.exists()
    assert worker.scratch is not None
    assert probe(worker, "write", str(worker.scratch / "allowed.txt")) == "allowed"


def test_no_fork_and_started_programs_stay_confined(worker: KernelWorker, tmp_path: Path) -> None:
    assert probe(worker, "fork").startswith("PermissionError")
    assert probe(worker, "subprocess").startswith("PermissionError")
    outside = tmp_path / "from-a-started-program.txt"
    assert probe(worker, "spawn", f"echo x > {outside}") != "started, exit status 0"
    assert not outside.exists()


def test_switched_off_the_same_probes_succeed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The probes are real: without the sandbox (CURATOR_KERNEL_SANDBOX=0) each works."""
    monkeypatch.setenv("CURATOR_KERNEL_SANDBOX", "0")
    with KernelWorker() as open_worker:
        assert open_worker.sandbox()["missing"] == ["not asked for"]
        assert probe(open_worker, "write", str(tmp_path / "x.txt")) == "allowed"
        assert probe(open_worker, "socket") == "allowed"
        assert probe(open_worker, "fork") == "allowed"
    assert (tmp_path / "x.txt").exists()
