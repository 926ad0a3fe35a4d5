"""A trained labeler's decision: the threshold on P(perf) chosen on dev data, and how
well its probabilities are calibrated there (expected calibration error and a
reliability table over ten equal-width bins).

Pure functions over plain lists; the labelers apply the stored threshold through
:func:`verdict`, so predict, eval, audits, export and mining all take the same decision.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from engines.labelers.base import NON_PERF, PERF, Prediction

DEFAULT_THRESHOLD = 0.5
DEFAULT_OBJECTIVE = "f1"
BINS = 10
# A threshold chosen for the best F1 on a handful of items follows their noise (on 8
# held-out votes, one item moves it anywhere): below these counts a caller's fallback
# (a warm start's own threshold, else 0.5) is kept instead.
MIN_CHOICE_ITEMS = 40
MIN_CHOICE_PER_CLASS = 10
# On a held-out slice of the training votes (no dev set of the target source), a floored
# model's F1 is nearly flat: the rules decide the messages that carry evidence and the
# model is sure of the rest. In one run the best three thresholds on 376 items were 0.82,
# 0.27 and 0.43, within 0.001 F1 of each other, and 0.5 was 0.002 behind; chosen that way
# off the source, 0.11 once fell below the rules. Within this much F1 (two or three calls
# on such a slice) thresholds count as tied, and ties go to the one nearest 0.5.
HOLDOUT_NEAR_TIE = 0.01


def parse_objective(text: str) -> tuple[str, float | None]:
    """``f1`` -> ("f1", None); ``precision:0.9`` -> ("precision", 0.9); else ValueError."""
    value = text.strip().lower()
    if value == "f1":
        return "f1", None
    kind, sep, target = value.partition(":")
    if kind == "precision" and sep:
        try:
            wanted = float(target)
        except ValueError:
            wanted = math.nan
        if 0.0 < wanted <= 1.0:
            return "precision", wanted
    raise ValueError(f"threshold objective {text!r}: use f1 or precision:P with 0 < P <= 1")


def verdict(p: float, threshold: float = DEFAULT_THRESHOLD) -> Prediction:
    """perf iff ``p >= threshold``; the score is the belief in the label given."""
    label = PERF if p >= threshold else NON_PERF
    return Prediction(label, p if label == PERF else 1.0 - p, {"p_perf": round(p, 6)})


def _counts(probs: Sequence[float], labels: Sequence[int], t: float) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for p, y in zip(probs, labels, strict=True):
        called = p >= t
        tp += called and y == 1
        fp += called and y == 0
        fn += (not called) and y == 1
    return tp, fp, fn


def scores_at(probs: Sequence[float], labels: Sequence[int], t: float) -> dict[str, float | None]:
    """Precision, recall and F1 of the perf class when perf means ``p >= t``."""
    tp, fp, fn = _counts(probs, labels, t)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    return {"precision": precision, "recall": recall, "f1": f1}


def candidate_thresholds(probs: Sequence[float]) -> list[float]:
    """One threshold per distinct decision the data allows. Every threshold in
    ``[0, v1]`` calls all items perf, every one in ``(v[k-1], v[k]]`` those with
    ``p >= v[k]``, every one in ``(v[last], 1]`` none; each range is represented by 0.5
    when it holds 0.5, else by its midpoint (a margin on both sides)."""
    values = sorted({min(1.0, max(0.0, float(p))) for p in probs})
    if not values:
        return [DEFAULT_THRESHOLD]
    ranges = [(0.0, values[0], True)]  # (low, high, low included)
    ranges += [(low, high, False) for low, high in itertools.pairwise(values)]
    if values[-1] < 1.0:
        ranges.append((values[-1], 1.0, False))
    out = []
    for low, high, closed in ranges:
        above_low = low <= DEFAULT_THRESHOLD if closed else low < DEFAULT_THRESHOLD
        holds_half = above_low and high >= DEFAULT_THRESHOLD
        out.append(DEFAULT_THRESHOLD if holds_half else (low + high) / 2)
    return out


def choose_threshold(
    probs: Sequence[float],
    labels: Sequence[int],
    objective: str = DEFAULT_OBJECTIVE,
    near_tie: float = 0.0,
) -> tuple[float, bool]:
    """The threshold ``objective`` picks on these dev probabilities, and whether the
    objective was met. ``f1``: the best perf F1, ties to the threshold nearest 0.5; with
    ``near_tie``, every threshold within that much F1 of the best counts as tied.
    ``precision:P``: the lowest threshold whose precision reaches P (the most recall at
    that precision); when none does, the one with the highest precision."""
    kind, target = parse_objective(objective)
    if not probs or len(set(labels)) < 2:
        return DEFAULT_THRESHOLD, False
    scored = [(t, scores_at(probs, labels, t)) for t in candidate_thresholds(probs)]
    if kind == "f1":
        best = max((s["f1"] or 0.0) for _, s in scored)
        slack = max(near_tie, 1e-12)
        ties = [t for t, s in scored if best - (s["f1"] or 0.0) <= slack]
        return min(ties, key=lambda t: (abs(t - DEFAULT_THRESHOLD), t)), True
    assert target is not None
    reaching = [t for t, s in scored if s["precision"] is not None and s["precision"] >= target]
    if reaching:
        return min(reaching), True
    with_precision = [(s["precision"], t) for t, s in scored if s["precision"] is not None]
    return max(with_precision)[1], False


def reliability(
    probs: Sequence[float], labels: Sequence[int], bins: int = BINS
) -> list[dict[str, Any]]:
    """Per equal-width bin of P(perf) (the last one closed): its range, how many items,
    their mean predicted P(perf) and the observed perf rate (None when empty)."""
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, p in enumerate(probs):
        members[min(bins - 1, max(0, int(float(p) * bins)))].append(i)
    table = []
    for b, idx in enumerate(members):
        n = len(idx)
        table.append(
            {
                "low": round(b / bins, 6),
                "high": round((b + 1) / bins, 6),
                "n": n,
                "mean_p": sum(probs[i] for i in idx) / n if n else None,
                "observed": sum(labels[i] for i in idx) / n if n else None,
            }
        )
    return table


def expected_calibration_error(
    probs: Sequence[float], labels: Sequence[int], bins: int = BINS
) -> float | None:
    """Sum over bins of (bin size / N) * |mean P(perf) - observed perf rate|."""
    if not probs:
        return None
    total = len(probs)
    return sum(
        row["n"] / total * abs(row["mean_p"] - row["observed"])
        for row in reliability(probs, labels, bins)
        if row["n"]
    )


def enough_to_choose(labels: Sequence[int]) -> bool:
    """Whether these labels are enough items of each class to choose a threshold on."""
    positives = sum(labels)
    negatives = len(labels) - positives
    return len(labels) >= MIN_CHOICE_ITEMS and min(positives, negatives) >= MIN_CHOICE_PER_CLASS


def decide(
    probs: Sequence[float],
    labels: Sequence[int],
    objective: str = DEFAULT_OBJECTIVE,
    chosen_on: str = "dev",
    floored: Sequence[bool] | None = None,
    fallback: tuple[float, str] | None = None,
    near_tie: float = 0.0,
) -> dict[str, Any]:
    """The ``decision`` block stored with a model: threshold, objective, where it was
    chosen and on how many items, the scores there, ECE and the reliability table.

    ``floored`` marks the items the rule floor decided (they score 1.0 whatever the
    model believes); with it, the block also says how often those were perf and how
    well the model's own probabilities are calibrated on the other items, since the
    overall ECE mixes the two. ``fallback`` (a threshold and where it comes from) is
    taken instead of a choice when the items are too few (:func:`enough_to_choose`); the
    scores are still those of these items. ``near_tie`` (see :func:`choose_threshold`)
    is recorded when it took part in a choice."""
    parse_objective(objective)
    given_on = chosen_on
    met: bool | None
    if fallback is not None and probs and not enough_to_choose(labels):
        threshold, met = fallback[0], None  # nothing was chosen here: no objective to meet
        chosen_on = (
            f"{fallback[1]} ({chosen_on}: {len(labels)} items, {int(sum(labels))} perf,"
            f" too few to choose on)"
        )
    else:
        threshold, met = choose_threshold(probs, labels, objective, near_tie)
        if not probs or len(set(labels)) < 2:
            chosen_on = f"default ({'no' if not probs else 'one-class'} dev data)"
            met = None
    block: dict[str, Any] = {
        "threshold": round(threshold, 6),
        "objective": objective,
        "objective_met": met,
        "chosen_on": chosen_on,
        "n": len(probs),
        "positives": int(sum(labels)),
    }
    if near_tie and chosen_on == given_on:  # chosen here, not a fallback or the default
        block["near_tie"] = near_tie
    block.update(scores_at(probs, labels, threshold) if probs else {})
    block["ece"] = expected_calibration_error(probs, labels)
    block["reliability"] = reliability(probs, labels) if probs else []
    if floored is not None and probs:
        block["floor"] = floor_summary(probs, labels, floored)
    return block


def floor_summary(
    probs: Sequence[float], labels: Sequence[int], floored: Sequence[bool]
) -> dict[str, Any]:
    """How many items the rule floor decided and their observed perf rate; the other
    items' count and the ECE of the model's probabilities on them."""
    ruled = [y for y, f in zip(labels, floored, strict=True) if f]
    rest = [(p, y) for p, y, f in zip(probs, labels, floored, strict=True) if not f]
    return {
        "n": len(ruled),
        "observed": sum(ruled) / len(ruled) if ruled else None,
        "model_n": len(rest),
        "model_ece": expected_calibration_error([p for p, _ in rest], [y for _, y in rest]),
    }


def threshold_of(meta: Mapping[str, Any]) -> float:
    """The stored decision threshold of a model's metadata (0.5 for older models)."""
    decision = meta.get("decision")
    if isinstance(decision, Mapping) and isinstance(decision.get("threshold"), int | float):
        return float(decision["threshold"])
    return DEFAULT_THRESHOLD
