"""The dynamic checker (CLgen section 5.2) and the worker child it runs kernels in.

A kernel runs four times on payloads A1, B1, A2, B2 with A1 = A2, B1 = B2, A1 != B1.
Verdicts: ``no-output`` (a run leaves its buffers as they were), ``input-insensitive``
(A and B give the same outputs), ``non-deterministic`` (A1 != A2 or B1 != B2), else
``useful``; ``out-of-bounds`` when a run wrote into a buffer's guard region, or when a
fifth run of payload A with other guard values gives other outputs (a read past the end);
``compile-error``, ``timeout`` and ``crash`` when it gets no further. Payload policies
(:mod:`engines.kernels.payload`) are tried in order while a kernel crashes or writes
out of bounds; A and B always share their scalars and differ in their buffers.

Kernels run in a long-lived child process (:class:`KernelWorker`) with a memory cap;
each stage has its own timeout. A child that hangs is killed, one that dies is
reported, and the next request starts a fresh child. The child confines itself
(:mod:`engines.kernels.sandbox`: no network, a read-only file system but its scratch
directory, no new programs) unless ``CURATOR_KERNEL_SANDBOX=0``;
:meth:`KernelWorker.sandbox` says what the system allowed.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engines.kernels.payload import DEFAULT_POLICIES, POLICIES, dimensions, geometry, int_value
from engines.kernels.worker import (
    DEVICE_ENV,
    MEMORY_ENV,
    SCRATCH_ENV,
    read_frame,
    write_frame,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MEMORY_MB = 4096
BUILD_TIMEOUT_S = 60.0
START_TIMEOUT_S = 60.0
FIRST_LAUNCH_ALLOWANCE_S = 10.0
SEEDS = (1, 2, 1, 2)  # A1, B1, A2, B2
SANDBOX_ENV = "CURATOR_KERNEL_SANDBOX"  # "0": run kernels unconfined, as before
RTOL = 1e-5
ATOL = 1e-6


class WorkerFailure(Exception):
    """The worker child timed out or died; ``verdict`` says which."""

    def __init__(self, verdict: str, detail: str) -> None:
        super().__init__(detail)
        self.verdict = verdict
        self.detail = detail


@dataclass
class BuildOutcome:
    ok: bool
    message: str
    kernels: list[str] = field(default_factory=list)
    device: str = ""


@dataclass
class CheckOutcome:
    verdict: str
    details: dict[str, Any]
    runs: list[tuple[list[np.ndarray], list[np.ndarray]]] = field(default_factory=list)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name if code < 0 else f"exit status {code}"
    except ValueError:
        return f"signal {-code}"


class KernelWorker:
    """One reusable worker child; replaced after a timeout or a crash."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB, device: str | None = None) -> None:
        """``device`` narrows the OpenCL device by name (None: the first that works)."""
        self.memory_mb = memory_mb
        self.device_wanted = device
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr_file: Any = None
        self.restarts = 0
        self.device = ""
        self.stderr_mark = 0
        self.scratch: Path | None = None
        self.confine = os.environ.get(SANDBOX_ENV, "1").strip() != "0"
        self.interrupted = False  # set by interrupt(): no child starts after it

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is not None and self.proc.poll() is None:
            return self.proc
        self._discard()
        if self.interrupted:
            raise WorkerFailure("crash", "interrupted: no new worker is started")
        env = dict(os.environ)
        env[MEMORY_ENV] = str(self.memory_mb)
        if self.device_wanted:
            env[DEVICE_ENV] = self.device_wanted
        env.setdefault("POCL_KERNEL_CACHE", "0")
        env.setdefault("PYOPENCL_NO_CACHE", "1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.scratch = Path(tempfile.mkdtemp(prefix="curator-kernel-"))
        # PoCL's cache and temporary files: the one place the confined child may write
        env.update(TMPDIR=str(self.scratch), POCL_CACHE_DIR=str(self.scratch))
        if self.confine:
            env[SCRATCH_ENV] = str(self.scratch)
        self.stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the child
        # the compiler looks for an #include it cannot place in this empty folder: never
        # in Curator's own files (the child imports them through PYTHONPATH)
        workdir = self.scratch / "work"
        workdir.mkdir()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engines.kernels.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            bufsize=0,
            env=env,
            cwd=str(workdir),
        )
        if self.interrupted:  # interrupt() ran while the child was starting
            self.proc.kill()
        return self.proc

    def _stderr_tail(self) -> str:
        if self.stderr_file is None:
            return ""
        self.stderr_file.seek(self.stderr_mark)
        lines = self.stderr_file.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-3:])[-400:]

    def _discard(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
        if self.stderr_file is not None:
            self.stderr_file.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        self.proc = None
        self.stderr_file = None
        self.stderr_mark = 0

    def _fail(self, verdict: str, detail: str) -> WorkerFailure:
        tail = self._stderr_tail()
        self._discard()
        self.restarts += 1
        return WorkerFailure(verdict, f"{detail}; stderr: {tail}" if tail else detail)

    def send(self, message: dict[str, Any]) -> None:
        proc = self._start()
        assert proc.stdin is not None and self.stderr_file is not None
        self.stderr_mark = self.stderr_file.seek(0, os.SEEK_END)
        try:
            write_frame(proc.stdin, message)  # type: ignore[arg-type]
        except (BrokenPipeError, OSError) as exc:
            raise self._fail("crash", f"worker gone before the request ({exc})") from None

    def receive(self, timeout: float, stage: str) -> dict[str, Any]:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            raise self._fail("timeout", f"no answer within {timeout:g} s while {stage}")
        reply = read_frame(proc.stdout)  # type: ignore[arg-type]
        if reply is None:
            code = proc.wait()
            raise self._fail("crash", f"runtime died while {stage} ({_signal_name(code)})")
        if reply.get("stage") == "failed" or ("error" in reply and "stage" not in reply):
            raise WorkerFailure("crash", str(reply.get("error")))
        return reply

    def build(self, source: str, timeout: float = BUILD_TIMEOUT_S) -> BuildOutcome:
        """Compile ``source`` on the OpenCL device; a compiler crash or hang is a failed
        build whose message says so."""
        first = self.proc is None
        try:
            self.send({"op": "build", "source": source})
            reply = self.receive(timeout + (START_TIMEOUT_S if first else 0), "compiling")
        except WorkerFailure as exc:
            return BuildOutcome(False, f"compiler {exc.verdict}: {exc.detail}")
        self.device = reply.get("device", self.device)
        return BuildOutcome(reply["ok"], reply["message"], reply["kernels"], self.device)

    def sandbox(self) -> dict[str, list[str]]:
        """How the child is confined: ``applied`` and ``missing`` steps (starts it)."""
        first = self.proc is None
        self.send({"op": "sandbox"})
        reply = self.receive(START_TIMEOUT_S if first else BUILD_TIMEOUT_S, "starting")
        return reply["sandbox"]

    def interrupt(self) -> None:
        """Kill the child from another thread; the stage waiting on it ends as a crash,
        and no later stage starts another child (a check that restarts its worker after
        a crash would otherwise run on, unseen, after esc)."""
        self.interrupted = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None and self.proc.stdin is not None:
            try:
                write_frame(self.proc.stdin, {"op": "exit"})  # type: ignore[arg-type]
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()

    def __enter__(self) -> KernelWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _equal(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    for x, y in zip(a, b, strict=True):
        if x.shape != y.shape:
            return False
        if np.issubdtype(x.dtype, np.floating):
            if not np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def judge(runs: list[tuple[list[np.ndarray], list[np.ndarray]]]) -> tuple[str, dict[str, Any]]:
    """CLgen's verdict from the inputs and outputs of the four runs A1, B1, A2, B2.

    Only buffers some run changed count as outputs when comparing A with B: unchanged
    input buffers differ between A and B by construction."""
    (a1_in, a1), (b1_in, b1), (_a2_in, a2), (_b2_in, b2) = runs
    if _equal(a1, a1_in) or _equal(b1, b1_in):
        return "no-output", {"reason": "a run left every global buffer unchanged"}
    written = [
        i for i in range(len(a1)) if any(not _equal([out[i]], [inp[i]]) for inp, out in runs)
    ]

    def pick(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return [arrays[i] for i in written]

    if _equal(pick(a1), pick(b1)) or _equal(pick(a2), pick(b2)):
        return "input-insensitive", {"reason": "inputs A and B gave the same outputs"}
    if not _equal(a1, a2) or not _equal(b1, b2):
        return "non-deterministic", {"reason": "the same input gave different outputs"}
    return "useful", {"written_buffers": len(written)}


def probe_verdict(probe: dict[str, Any], first: list[np.ndarray]) -> str | None:
    """What the guard probe says of a kernel whose four runs looked sound, given A1's
    outputs (``first``): ``out-of-bounds`` when other guard values changed its outputs,
    ``non-deterministic`` when one more run of A as it was changed them too (A1 and A2
    agreed by chance), else None."""
    if _equal(probe["outputs"], first):
        return None
    control = probe.get("control")
    if control is not None and not _equal(control, first):
        return "non-deterministic"
    return "out-of-bounds"


RETRY_VERDICTS = frozenset({"crash", "out-of-bounds"})


def check_kernel(
    worker: KernelWorker,
    source: str,
    kernel: str | None = None,
    global_size: int = 1024,
    local_size: int = 32,
    timeout: float = 5.0,
    seeds: Sequence[int] = SEEDS,
    on_stage: Callable[[str, float], None] | None = None,
    policies: Sequence[str] = DEFAULT_POLICIES,
    role_names: list[str] | None = None,
) -> CheckOutcome:
    """Build ``source`` and run ``kernel`` (the only one when None) on the four payloads,
    under each payload policy in turn while the verdict is ``crash`` or
    ``out-of-bounds`` (a policy that would give the same payload as one tried is
    skipped). The verdict of the first policy that gets further is kept; when none
    does, an out-of-bounds write found by any policy, else the first policy's verdict.
    ``details["payload_policy"]`` names the policy the verdict comes from and
    ``details["policies_tried"]`` what each one gave. ``role_names``: the argument names
    as written, when ``source`` is a renamed (normalised) kernel.

    ``on_stage(stage, fraction)`` hears of each stage before the checker waits on it.
    """
    tried: list[dict[str, Any]] = []
    outcomes: list[CheckOutcome] = []
    for policy in policies:
        if outcomes and not _differs(policy, outcomes[0].details, source, global_size, role_names):
            continue
        outcome = _attempt(
            worker,
            source,
            kernel,
            global_size,
            local_size,
            timeout,
            seeds,
            on_stage,
            policy,
            role_names,
        )
        outcome.details["payload_policy"] = policy
        outcomes.append(outcome)
        tried.append({"policy": policy, "verdict": outcome.verdict})
        if outcome.verdict not in RETRY_VERDICTS or "args" not in outcome.details:
            break
    final = outcomes[-1]
    if final.verdict in RETRY_VERDICTS:
        final = next((o for o in outcomes if o.verdict == "out-of-bounds"), outcomes[0])
    if len(tried) > 1:
        final.details["policies_tried"] = tried
    return final


def _differs(
    policy: str,
    first: dict[str, Any],
    source: str,
    global_size: int,
    role_names: list[str] | None,
) -> bool:
    """Whether ``policy`` gives another payload than CLgen's for this kernel."""
    rule = POLICIES[policy]
    if rule.pad > 1:
        return True
    if rule.shaped and dimensions(source) > 1:
        return True
    shape = geometry(global_size, 1)
    args = [a["name"] for a in first.get("args", [])]
    names = role_names if role_names and len(role_names) == len(args) else args
    alias = dict(zip(args, names, strict=True))
    return any(
        int_value(alias.get(name, name), rule, shape, global_size) != value
        for name, value in first.get("scalars", {}).items()
        if isinstance(value, int)
    )


def _attempt(
    worker: KernelWorker,
    source: str,
    kernel: str | None,
    global_size: int,
    local_size: int,
    timeout: float,
    seeds: Sequence[int],
    on_stage: Callable[[str, float], None] | None,
    policy: str,
    role_names: list[str] | None = None,
) -> CheckOutcome:
    """One policy's four runs and CLgen's verdict on them."""
    first = worker.proc is None
    stages = len(seeds) + 2

    def stage(name: str, done: int) -> str:
        if on_stage is not None:
            on_stage(name if policy == "clgen" else f"{name} ({policy})", done / stages)
        return name

    details: dict[str, Any] = {"global_size": global_size, "timeout_s": timeout}
    runs: list[tuple[list[np.ndarray], list[np.ndarray]]] = []
    spilled: set[str] = set()
    started = time.perf_counter()
    try:
        worker.send(
            {
                "op": "run",
                "source": source,
                "kernel": kernel,
                "global_size": global_size,
                "local_size": local_size,
                "seeds": list(seeds),
                "policy": policy,
                "probe": len(seeds) == 4,
                "role_names": role_names,
            }
        )
        built = worker.receive(
            BUILD_TIMEOUT_S + (START_TIMEOUT_S if first else 0), stage("compiling", 0)
        )
        if not built["ok"]:
            details["message"] = built["message"]
            return CheckOutcome("compile-error", details)
        if "unsupported" in built:
            details["message"] = f"no payload rule: {built['unsupported']}"
            return CheckOutcome("crash", details)
        details.update(
            kernel=built["kernel"],
            local_size=built["local_size"],
            transfer_bytes=built["transfer_bytes"],
            args=built["args"],
            scalars=built.get("scalars", {}),
            range=built.get("range", [global_size]),
        )
        for index in range(len(seeds)):
            # PoCL compiles the work-group function at the first launch: allow for it
            allowed = timeout + (FIRST_LAUNCH_ALLOWANCE_S if index == 0 else 0.0)
            ran = worker.receive(
                allowed, stage(f"running {'ABAB'[index % 4]}{index // 2 + 1}", index + 1)
            )
            if "error" in ran:
                details["message"] = f"launch failed: {ran['error']}"
                return CheckOutcome("crash", details)
            runs.append((ran["inputs"], ran["outputs"]))
            spilled.update(ran.get("oob", []))
        probe = None
        if len(seeds) == 4:
            probe = worker.receive(timeout, stage("probing the guards", stages - 1))
            if "error" in probe:
                details["probe"] = probe["error"]
                probe = None
        worker.receive(timeout, stage("finishing", stages - 1))
    except WorkerFailure as exc:
        details["message"] = exc.detail
        return CheckOutcome(exc.verdict, details, runs)
    finally:
        details["seconds"] = round(time.perf_counter() - started, 4)
    if spilled:
        details["out_of_bounds"] = sorted(spilled)
        details["message"] = "a run wrote past the end of " + ", ".join(sorted(spilled))
        return CheckOutcome("out-of-bounds", details, runs)
    if len(seeds) != 4:
        return CheckOutcome("useful", details, runs)
    verdict, why = judge(runs)
    if verdict in ("useful", "input-insensitive", "no-output") and probe is not None:
        probed = probe_verdict(probe, runs[0][1])
        if probed == "non-deterministic":
            details["reason"] = "a third run of input A gave other outputs"
            return CheckOutcome(probed, details, runs)
        if probed == "out-of-bounds":
            details["message"] = (
                "a run read past the end of a buffer (its outputs follow the guard)"
            )
            details["out_of_bounds"] = "read"
            return CheckOutcome(probed, details, runs)
    details.update(why)
    return CheckOutcome(verdict, details, runs)
