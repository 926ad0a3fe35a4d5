"""Reading commits with a diff through the weights a student started from.

Out of the box a student starts from the packaged base plus the perf prior, which
learned message || diff of the team's commits, and is then fine-tuned on messages of the
shared source alone. That fine-tune helps it on that source and pulls it, a little, away
from what the prior knew about commits of other sources read with their diff (measured
on ten clean rounds: docs/label-quality-rounds.md, "Round 19"). So such a student keeps its start
beside it: ``diff_reader.safetensors`` in its folder is a copy of the prior it started
from, and the labeler reads texts with a diff through base + prior and texts without one
through its own weights. Each text is read once, by one of the two.

Recorded only when the fine-tune read no diff at all (a student that learned from diffs
reads them with what it learned) and the student started from the prior itself (not a
warm start). The metadata's ``diff_reader`` block names the prior and the base version
it fits; a student whose base is not installed as recorded fails to load in one line.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engines.files import staged_file
from engines.labelers.student.prior import (
    DEFAULT_PACKAGE,
    PriorInfo,
    apply_prior,
    base_version,
    load_prior_tensors,
)

DIFF_READER_FILE = "diff_reader.safetensors"
DIFF_READER_KEY = "diff_reader"
DIFF_READER_CACHE = "openvino_diff_reader"
"""Where the OpenVINO path keeps the diff reader's compiled model, beside its own."""


def record_diff_reader(student_dir: Path, prior: PriorInfo) -> dict[str, Any]:
    """Copy ``prior`` into the student's folder; return the metadata block naming it."""
    target = student_dir / DIFF_READER_FILE
    with staged_file(target) as staging:
        shutil.copyfile(prior.weights, staging)
    return {
        "file": DIFF_READER_FILE,
        "weights": f"its base plus {prior.label}, as it started",
        "prior": prior.label,
        "base": prior.meta.get("base", "minilm"),
        "base_package_version": prior.meta.get("base_package_version"),
    }


def diff_reader_of(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``diff_reader`` block of a student's metadata, if it has one."""
    block = meta.get(DIFF_READER_KEY)
    return dict(block) if isinstance(block, Mapping) and block.get("file") else None


def diff_reader_base(meta: Mapping[str, Any], block: Mapping[str, Any]) -> str:
    """The base to rebuild the diff reader on: the installed packaged MiniLM when the
    student was trained on it (ValueError when another version is installed than the one
    its prior fits), else the base the student recorded."""
    config = meta.get("config")
    if isinstance(config, Mapping) and config.get("base") is None:
        from engines.labelers.student.infer import default_base

        wanted = block.get("base_package_version")
        installed = base_version()
        if wanted and installed != wanted:
            raise ValueError(
                f"its diff reader fits {DEFAULT_PACKAGE} {wanted}, and"
                f" {installed or 'none'} is installed: retrain the student"
            )
        return default_base()
    return str(meta.get("base"))


def load_diff_reader(student_dir: Path, block: Mapping[str, Any], base: str) -> Any:
    """The torch classifier ``base`` + the recorded prior, as the student started.

    ValueError in one line when the prior copy is missing or does not fit the base."""
    from engines.labelers.student.infer import load_encoder

    weights = student_dir / str(block["file"])
    if not weights.is_file():
        raise ValueError(f"{student_dir}: its diff reader {weights.name} is missing")
    _, model = load_encoder(base)
    try:
        apply_prior(model, load_prior_tensors(weights))
    except ValueError as exc:
        raise ValueError(f"{weights}: {exc}") from exc
    return model


def describe_diff_reader(block: Mapping[str, Any] | None) -> str | None:
    """``commits with a diff are read through its base plus perf-prior@4 ...``."""
    if not block:
        return None
    return (
        f"commits with a diff are read through {block.get('weights', 'its start')}"
        " (its fine-tune read messages only); messages through its own weights"
    )
