"""The keyword rules as a floor under a trained labeler's belief.

A model that learned from the messages of one source misses, on another source, perf
commits whose wording it never saw, and it misses them with confidence: no threshold
brings them back. The keyword rules do not depend on the source they were tuned on in
the same way. With a floor, a message the rules call perf gets P(perf) = 1 whatever the
model believes; every other message keeps the model's probability. The decision
threshold is chosen on these floored probabilities, so the model only has to decide the
messages the rules are silent on.

The floor reads the commit message only (the part before the diff of a message || diff
text), as the keyword labeler does. A model records its floor in its metadata
(``"rule_floor": {"labeler": "keyword@2"}``) and keeps the list of that version when the
packaged list moves on; models trained without one have none.

Models trained since the floor gained a veto (``"vetoes": "test-only"`` in the record)
also call a commit non-perf, whatever the rules and the model say, when every file it
changes is a test, benchmark or example (engines.labelers.path_veto). The veto reads the
commit's ``files`` beside the model's own text (:func:`fields_read`); texts without
files (imported messages) are never vetoed.

A model's decision for commits read with a diff (engines.labelers.diff_decision) may set
a level of the network's own P(perf) below which the floor gives way on such commits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engines.labelers.base import Prediction
from engines.labelers.calibration import verdict
from engines.labelers.diff_decision import DiffDecision, has_diff, message_part, thresholds_for
from engines.labelers.keyword import TermList, find_matches, packaged_terms
from engines.labelers.path_veto import only_tests

RULES = ("keyword", "none")
DEFAULT_RULE = "keyword"
VETO = "test-only"
VETO_FIELD = "files"


def floor_block(rule: str) -> dict[str, Any] | None:
    """The ``rule_floor`` record for a training run's choice (None for ``none``)."""
    if rule not in RULES:
        raise ValueError(f"rule floor {rule!r}: use {' or '.join(RULES)}")
    if rule == "none":
        return None
    return {"labeler": f"keyword@{packaged_terms().version}", "reads": "message", "vetoes": VETO}


def recorded_floor(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The floor a model's metadata records, if any."""
    block = meta.get("rule_floor")
    return dict(block) if isinstance(block, Mapping) and block.get("labeler") else None


def floor_terms(block: Mapping[str, Any] | None) -> TermList:
    """The term list a floor record names (``keyword@1`` keeps version 1's list)."""
    name = str((block or {}).get("labeler", ""))
    version = name.rpartition("@")[2]
    return packaged_terms(int(version) if version.isdecimal() else None)


def rule_fires(text: str, terms: TermList | None = None) -> bool:
    """Whether the keyword rules call this text's message perf."""
    return bool(find_matches(message_part(text), terms))


def vetoes(block: Mapping[str, Any] | None) -> bool:
    """Whether a floor record carries the test-only veto."""
    return block is not None and block.get("vetoes") == VETO


def apply_floor(
    probs: Sequence[float],
    texts: Sequence[str],
    block: Mapping[str, Any] | None = None,
    yields_below: float | None = None,
) -> list[float]:
    """``probs`` with 1.0 wherever the rules fire on the matching text's message.

    ``block`` is the model's floor record; its list is used (the current one when None).
    ``yields_below`` (a model's diff decision): on a text with a diff whose own P(perf)
    is below it, the floor does not fire. The veto is applied apart (:func:`apply_veto`):
    it reads the files the commit changes.
    """
    terms = floor_terms(block)
    flags = [rule_fires(t, terms) for t in texts]
    if yields_below is not None:
        flags = [
            f and not (p < yields_below and has_diff(t))
            for f, p, t in zip(flags, probs, texts, strict=True)
        ]
    return floored(probs, flags)


def apply_veto(
    probs: Sequence[float], files: Sequence[str], block: Mapping[str, Any] | None
) -> list[float]:
    """``probs`` with 0.0 where the record vetoes and every file the matching commit
    changes (one per line) is a test, benchmark or example; the veto wins over the
    rules."""
    if not vetoes(block):
        return list(probs)
    return [0.0 if only_tests(f) else float(p) for p, f in zip(probs, files, strict=True)]


def probabilities_by_field(
    probabilities: Callable[[Sequence[str]], list[float]],
    texts: Mapping[str, Sequence[str]],
    field: str,
    block: Mapping[str, Any] | None,
) -> list[float]:
    """A trained labeler's floored P(perf) of the texts of its own ``field``, with the
    veto applied from the commits' ``files`` when the caller gave them."""
    probs = probabilities(texts[field])
    if VETO_FIELD in texts:
        probs = apply_veto(probs, texts[VETO_FIELD], block)
    return probs


def fields_read(field: str, block: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The commit fields a model reading ``field`` needs: the commit's ``files`` too when
    its floor vetoes."""
    return (field, VETO_FIELD) if vetoes(block) else (field,)


def floored(probs: Sequence[float], flags: Sequence[bool]) -> list[float]:
    """``probs`` with 1.0 where ``flags`` (from :func:`floor_flags`) say the rules fire."""
    return [1.0 if f else float(p) for p, f in zip(probs, flags, strict=True)]


def floor_flags(texts: Sequence[str], block: Mapping[str, Any] | None) -> list[bool] | None:
    """Which of ``texts`` the floor ``block`` decides (None when there is no floor)."""
    if not block:
        return None
    terms = floor_terms(block)
    return [rule_fires(t, terms) for t in texts]


def describe_floor(block: Mapping[str, Any] | None) -> str:
    """``keyword@3 (messages it matches are perf)`` or ``none``; a floor of an older list
    than the packaged one says so, since only retraining puts the newer list under it."""
    if not block:
        return "none"
    text = f"{block['labeler']} (messages it matches are perf)"
    if vetoes(block):
        text += "; commits changing only tests, benchmarks or examples are non-perf"
    current = f"keyword@{packaged_terms().version}"
    name = str(block["labeler"])
    if name.startswith("keyword@") and name != current:
        text += f"; {current} is newer: retrain to put it under the model"
    return text


class RuleLayered:
    """What a trained labeler with a rule layer (a student, a TF-IDF model) adds to its
    own :meth:`probabilities` (floored, on its own field): the fields it reads, with the
    commit's files when its floor vetoes, and predictions that apply the veto."""

    input_field: str
    floor: dict[str, Any] | None
    threshold: float
    diff: DiffDecision | None = None

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        raise NotImplementedError

    @property
    def input_fields(self) -> tuple[str, ...]:
        """Its own field, and the commit's ``file`` when its floor vetoes."""
        return fields_read(self.input_field, self.floor)

    def predict_fields(self, texts: Mapping[str, Sequence[str]]) -> list[Prediction]:
        """perf iff the floored, vetoed P(perf) reaches the model's threshold (its diff
        decision's for texts read with a diff)."""
        probs = probabilities_by_field(self.probabilities, texts, self.input_field, self.floor)
        limits = thresholds_for(texts[self.input_field], self.threshold, self.diff)
        return [verdict(p, t) for p, t in zip(probs, limits, strict=True)]
