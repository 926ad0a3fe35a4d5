"""Plain records for OpenCL kernels: what the kernel engine hands over to be written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

VERDICTS = (
    "useful",
    "no-output",
    "input-insensitive",
    "non-deterministic",
    "timeout",
    "crash",
    "out-of-bounds",
    "compile-error",
    "too-few-instructions",
)
REJECTIONS = ("compile-error", "too-few-instructions")


@dataclass
class KernelRow:
    """One scraped kernel after the rejection filter (and, if accepted, the rewriter)."""

    source: str
    key: str
    source_file: str
    kernel_name: str
    origin: str  # "cl" (a device-code file) or "embedded" (a string in a host file)
    original_source: str
    normalized_source: str | None
    normalized_hash: str
    shim_needed: bool
    shim_names: list[str]
    accepted: bool
    instructions: int | None
    message: str | None
    verdict: str | None  # the rejection reason for refused kernels, else None until checked
    features: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredKernel:
    """A stored kernel as the checker needs it."""

    item_id: int
    source_file: str
    kernel_name: str
    original_source: str
    normalized_source: str | None
    shim_needed: bool
    accepted: bool
    verdict: str | None
    features: dict[str, Any]
    prelude: str = ""  # the lines assumed before the source so it builds (host -D, shim, guesses)


@dataclass(frozen=True)
class KernelCheck:
    """The dynamic checker's result for one stored kernel."""

    item_id: int
    verdict: str
    details: dict[str, Any]
    features: dict[str, Any]
