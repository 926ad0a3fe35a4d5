"""The rejection filter (CLgen section 4.1): a real build on the OpenCL device, the shim
header tried only when the plain build fails, and a minimum static instruction count
measured on the LLVM IR that clang's OpenCL front end produces."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engines.kernels.checker import KernelWorker
from engines.kernels.features import instruction_count, parse_ir, static_features
from engines.kernels.hostflags import HostDefine
from engines.kernels.infer import Assumption, classify_refusal, resolve_build
from engines.kernels.typesearch import TypeDefinition

MIN_INSTRUCTIONS = 3
CLANG_TIMEOUT_S = 60.0
CL_STANDARDS = ("CL1.2", "CL3.0")
_TIMED_OUT = -9


class ToolError(Exception):
    """clang is missing or failed in a way that says nothing about the kernel."""


@dataclass
class FilterResult:
    accepted: bool
    verdict: str | None  # "compile-error" or "too-few-instructions" when refused
    message: str | None
    source: str  # the source that compiled: with the shim entries when they were needed
    shim_names: list[str] = field(default_factory=list)
    instructions: int | None = None
    features: dict[str, Any] = field(default_factory=dict)
    assumptions: list[Assumption] = field(default_factory=list)
    builds: int = 1
    missing_type: str | None = None  # why a struct type the kernel uses was not guessed

    @property
    def refusal(self) -> str | None:
        """The named reason of a refusal (:data:`engines.kernels.infer.REFUSAL_CLASSES`)."""
        return None if self.accepted else classify_refusal(self.verdict, self.message, self.source)

    def assumed(self) -> list[dict[str, str]]:
        return [a.as_dict() for a in self.assumptions]


def clang_path() -> str:
    path = shutil.which("clang")
    if path is None:
        raise ToolError("clang not found on PATH (scripts/setup.sh installs it)")
    return path


def run_clang(
    argv: list[str], source: str, timeout: float = CLANG_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """clang on ``source`` (its stdin) in an empty folder, so that an ``#include`` the
    kernel still holds is never looked for among the caller's files. A clang still
    running after ``timeout`` seconds is killed and reported as a failed run (exit -9,
    ``compiler timeout``), a refusal of that kernel rather than the end of the mine run."""
    with tempfile.TemporaryDirectory(prefix="curator-clang-") as empty:
        try:
            return subprocess.run(
                argv,
                input=source,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                cwd=empty,
            )
        except subprocess.TimeoutExpired:
            message = f"compiler timeout: clang gave no result within {timeout:g} s"
            return subprocess.CompletedProcess(argv, _TIMED_OUT, "", f"error: {message}")


def opencl_version_define(std: str) -> str:
    """``-D__OPENCL_VERSION__=120`` for ``CL1.2``: an OpenCL device compiler defines it
    (PoCL does), clang alone does not, so code the host shares with the device behind
    ``#ifndef __OPENCL_VERSION__`` (ArrayFire's ``KParam`` methods) would reach clang."""
    major, _, minor = std.removeprefix("CL").partition(".")
    return f"-D__OPENCL_VERSION__={major}{minor or '0'}0"


def lower_to_ir(source: str, optimize: str = "-O1") -> tuple[str | None, str]:
    """OpenCL C to textual LLVM IR for the SPIR target; (None, message) when clang fails."""
    message = ""
    for std in CL_STANDARDS:
        proc = run_clang(
            [
                clang_path(),
                "-x",
                "cl",
                f"-cl-std={std}",
                opencl_version_define(std),
                "-Xclang",
                "-finclude-default-header",
                "-Dinline=",
                "-target",
                "spir64",
                optimize,
                "-S",
                "-emit-llvm",
                "-w",
                "-o",
                "-",
                "-",
            ],
            source,
        )
        if proc.returncode == 0:
            return proc.stdout, ""
        message = message or proc.stderr.replace("<stdin>", "kernel.cl").strip()
        if proc.returncode == _TIMED_OUT:  # another standard would only wait as long
            break
    return None, message


_KERNEL_DEFINED = re.compile(r"^define\b[^\n]*\bspir_kernel\b", re.MULTILINE)


def measure(source: str) -> tuple[int | None, dict[str, int], str]:
    """Instruction count and static features of ``source``; (None, {}, why) on failure.
    When the build holds no kernel (an ``#if`` leaves it out) the count is 0, whatever
    helpers outside the ``#if`` compile: they alone are no kernel to run."""
    ir, message = lower_to_ir(source)
    if ir is None:
        return None, {}, f"clang: {message}"
    try:
        module = parse_ir(ir)
    except RuntimeError as exc:
        return None, {}, f"llvmlite: {str(exc).strip()}"
    if not _KERNEL_DEFINED.search(ir):
        return 0, {}, ""
    return instruction_count(module), static_features(module), ""


def rejection_filter(
    worker: KernelWorker,
    source: str,
    min_instructions: int = MIN_INSTRUCTIONS,
    host: dict[str, HostDefine] | None = None,
    lookup: Callable[[str], TypeDefinition | None] | None = None,
) -> FilterResult:
    """Accept ``source`` when it builds on the device (with what the host passes, the
    shim and bounded guesses when it must: :func:`engines.kernels.infer.resolve_build`)
    and has at least ``min_instructions`` instructions; the compiler's message goes with
    a refusal."""
    built = worker.build(source)
    assumptions: list[Assumption] = []
    compiled = source
    builds = 1
    if not built.ok:

        def build(text: str) -> tuple[bool, str]:
            again = worker.build(text)
            return again.ok, again.message

        resolved = resolve_build(build, source, built.message, host, lookup=lookup)
        builds += resolved.builds
        if not resolved.ok:
            message = (
                resolved.message if resolved.builds or resolved.missing_type else built.message
            )
            return FilterResult(
                False,
                "compile-error",
                message,
                source,
                assumptions=resolved.assumptions,
                builds=builds,
                missing_type=resolved.missing_type,
            )
        compiled, assumptions = resolved.source, resolved.assumptions
    names = [a.name for a in assumptions if a.origin != "no-header"]
    count, feats, problem = measure(compiled)
    if count is None:
        return FilterResult(
            False, "compile-error", problem, compiled, names, None, {}, assumptions, builds
        )
    if count < min_instructions or count == 0:  # 0: no kernel to run, whatever the minimum
        message = f"{count} instructions in the optimised IR; the minimum is {min_instructions}"
        if count == 0:  # even an empty kernel has its `ret`: no kernel was compiled
            message += " (no function in the build: an #if or #ifdef leaves the kernel out)"
        return FilterResult(
            False,
            "too-few-instructions",
            message,
            compiled,
            names,
            count,
            feats,
            assumptions,
            builds,
        )
    return FilterResult(True, None, None, compiled, names, count, feats, assumptions, builds)
