"""Pre-labeling mined rows, and the labelers a worker process builds once and reuses."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from engines.labelers.base import Labeler, run_labeler
from engines.labelers.registry import LabelerSpec, build_labeler
from store.records import CommitRow, PredictionRow

_BUILT: dict[LabelerSpec, Labeler] = {}
_BUILDS: Counter[str] = Counter()
_BUILD_LOCK = threading.Lock()


def label_rows(rows: Sequence[CommitRow], labelers: Sequence[Labeler]) -> None:
    """Attach every labeler's prediction to every row (labelers choose their input field)."""
    if not rows:
        return
    for labeler in labelers:
        predictions = run_labeler(labeler, lambda f: [_text(row, f) for row in rows])
        for row, p in zip(rows, predictions, strict=True):
            row.predictions.append(PredictionRow(labeler.name, p.label, p.score, p.details))


def _text(row: CommitRow, field: str) -> str:
    """A row's field as the store's ``commit_texts`` gives it: ``files``, a list on the
    row, one path per line."""
    value = getattr(row, field)
    return "\n".join(value) if isinstance(value, list | tuple) else value


def labelers_for(specs: Sequence[LabelerSpec]) -> list[Labeler]:
    """The labelers ``specs`` describe, built on first use in this process and kept:
    a worker loads a student's weights once, not once per task."""
    with _BUILD_LOCK:
        for spec in specs:
            if spec not in _BUILT:
                _BUILT[spec] = build_labeler(spec)
                _BUILDS[spec.name] += 1
        return [_BUILT[spec] for spec in specs]


def labeler_builds() -> dict[str, int]:
    """How many times this process built each labeler (once each, on a worker)."""
    with _BUILD_LOCK:
        return dict(_BUILDS)
