"""The contract every machine labeler follows, and the prediction it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

PERF = "perf"
NON_PERF = "non-perf"


@dataclass(frozen=True)
class Prediction:
    """One labeler's verdict on one item.

    ``score`` is the labeler's belief in ``label`` (0..1); ``details`` holds whatever
    explains the verdict (matched keywords with their spans, a teacher's raw reply...)
    and must be JSON-serialisable.
    """

    label: str
    score: float
    details: dict[str, Any] = field(default_factory=dict)


class Labeler(Protocol):
    """Anything that can pre-label a batch of texts.

    ``name`` is the stable identifier stored with each prediction, e.g. ``keyword@1``;
    ``input_field`` names the commit text it reads: ``message`` or ``model_input``
    (message || diff).
    """

    name: str
    input_field: str

    def predict(self, texts: Sequence[str]) -> list[Prediction]: ...
