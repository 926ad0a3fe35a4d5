"""Plain records that cross into the store: what engines hand over to be written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PredictionRow:
    """A labeler's verdict on one item, as stored in ``predictions``."""

    labeler: str
    label: str
    score: float | None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class CommitRow:
    """One mined commit, ready to become an ``items`` row plus a ``commits`` row."""

    source: str
    sha: str
    branch: str | None
    author_date: str | None
    message: str
    diff: str
    file: str
    files: list[str]
    language: str
    functions: list[str]
    code_before: str
    code_after: str
    added: int
    deleted: int
    model_input: str
    function_md5: str | None
    diff_hash: str
    provenance: dict[str, Any] = field(default_factory=dict)
    predictions: list[PredictionRow] = field(default_factory=list)


@dataclass(frozen=True)
class Checkpoint:
    """How far one source has been processed under one set of options (``scope``)."""

    kind: str
    source: str
    scope: str
    last_key: str | None
    counters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SaveResult:
    """What happened to one row on save: ``stored``, ``duplicate`` or ``known``."""

    status: str
    item_id: int
    matched_on: str | None = None
