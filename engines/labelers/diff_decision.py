"""How a trained labeler decides the commits it reads together with their diff.

Out of the box a student chooses its threshold on the held-out slice of the shared
messages, which carry no diff. The commits it is then asked about (a mined history, a
new source) are read as message || diff, and there it behaves differently: the perf
commits the keyword rules are silent on get a lower P(perf) than on the messages, and
of the rules' matches that the network itself reads as plainly not perf, most are not.
A model may therefore carry a second decision for texts with a diff (``"diff"`` in its
decision block):

- ``threshold``: perf iff P(perf) reaches it, in place of the model's own threshold;
- ``floor_yields_below``: where the network's own P(perf) is below this, the keyword
  floor does not lift the text to 1.0 (the test-only veto is unchanged).

It is chosen on the model's own tuning items that carry a diff when there are enough of
each class, else taken from where the model started: the perf prior records one measured
on team rounds it never learned from, and a warm start keeps its start's. Texts without
a diff (imported messages) are decided as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DIFF_KEY = "diff"

# Where the diff of a message || diff text begins (representation.model_input).
_DIFF_START = re.compile(r"\n\n(?=diff --git |@@ |--- )")


def message_part(text: str) -> str:
    """The commit message of a ``message`` or ``message || diff`` text."""
    match = _DIFF_START.search(text)
    return text[: match.start()] if match else text


@dataclass(frozen=True)
class DiffDecision:
    """The decision for texts read with a diff."""

    threshold: float
    floor_yields_below: float | None
    chosen_on: str

    def as_json(self) -> dict[str, Any]:
        return {
            "threshold": round(self.threshold, 6),
            "floor_yields_below": self.floor_yields_below,
            "chosen_on": self.chosen_on,
        }


def _probability(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def read_diff_decision(block: Any) -> DiffDecision | None:
    """The decision a ``diff`` record holds; None when there is none or it is malformed
    (a threshold outside [0, 1] is not a decision to act on)."""
    if not isinstance(block, Mapping):
        return None
    threshold = _probability(block.get("threshold"))
    if threshold is None:
        return None
    yields = _probability(block.get("floor_yields_below"))
    return DiffDecision(threshold, yields, str(block.get("chosen_on") or "unrecorded"))


def diff_decision_of(meta: Mapping[str, Any]) -> DiffDecision | None:
    """The diff decision in a model's metadata (its ``decision`` block), if any."""
    decision = meta.get("decision")
    return read_diff_decision(decision.get(DIFF_KEY)) if isinstance(decision, Mapping) else None


def has_diff(text: str) -> bool:
    """Whether a text is a message || diff (the diff begins after the message)."""
    return message_part(text) != text


def yields_below(diff: DiffDecision | None) -> float | None:
    return diff.floor_yields_below if diff is not None else None


def thresholds_for(
    texts: Sequence[str], threshold: float, diff: DiffDecision | None
) -> list[float]:
    """The threshold each text is decided at: the diff decision's for texts with a diff."""
    if diff is None:
        return [threshold] * len(texts)
    return [diff.threshold if has_diff(t) else threshold for t in texts]


def describe_diff_decision(diff: DiffDecision | None) -> str | None:
    """``commits read with a diff: perf iff P(perf) >= 0.3; ...`` for ``models show``."""
    if diff is None:
        return None
    text = f"commits read with a diff: perf iff P(perf) >= {diff.threshold:.4g}"
    if diff.floor_yields_below is not None:
        text += (
            f"; the rules' matches stay perf only where the model's own P(perf) is at"
            f" least {diff.floor_yields_below:.4g}"
        )
    return f"{text} (from {diff.chosen_on})"
