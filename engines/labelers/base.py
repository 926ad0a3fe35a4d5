"""The contract every machine labeler follows, and the prediction it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


class MultiFieldLabeler(Labeler, Protocol):
    """A labeler whose parts read different commit texts (an ensemble: keyword and
    heuristics read the message, a student ``model_input``). ``input_fields`` names them
    all; ``predict_fields`` takes one sequence of texts per field, aligned by position.
    ``input_field`` stays for callers that can only give one text per item."""

    input_fields: tuple[str, ...]

    def predict_fields(self, texts: Mapping[str, Sequence[str]]) -> list[Prediction]: ...


def input_fields(labeler: Labeler) -> tuple[str, ...]:
    """Every commit text ``labeler`` reads: its ``input_fields`` when it declares them,
    else its one ``input_field``."""
    fields = getattr(labeler, "input_fields", None)
    return tuple(fields) if fields else (labeler.input_field,)


def run_labeler(labeler: Labeler, fetch: Callable[[str], Sequence[str]]) -> list[Prediction]:
    """Predict with any labeler, giving it the texts it reads: ``fetch(field)`` returns the
    items' texts of one field (``message``, ``model_input``), the same items in the same
    order for every field. Every call site that runs a labeler goes through here."""
    predict_fields = getattr(labeler, "predict_fields", None)
    if predict_fields is not None:
        return list(predict_fields({f: fetch(f) for f in input_fields(labeler)}))
    return list(labeler.predict(fetch(labeler.input_field)))


def p_perf(prediction: Prediction) -> float:
    """The prediction's probability of ``perf``: ``details["p_perf"]`` when the labeler
    gives it, else its score read as confidence in its label (a rule's 1.0 is a vote)."""
    value = prediction.details.get("p_perf") if isinstance(prediction.details, dict) else None
    if isinstance(value, int | float):
        return min(1.0, max(0.0, float(value)))
    score = min(1.0, max(0.0, float(prediction.score)))
    return score if prediction.label == PERF else 1.0 - score
