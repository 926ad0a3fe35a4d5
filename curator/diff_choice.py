"""The decision a student takes into its metadata for commits it reads with a diff
(:mod:`engines.labelers.diff_decision`), settled when it is trained.

Chosen on the items it is tuned on (its dev set, else the held-out slice of its votes)
that carry a diff, when there are enough of each class; else inherited from where the
student started: a warm start's own diff decision, or the one the perf prior records.
A student that starts from neither, and has no such items, keeps one threshold.

A student fine-tuned on messages alone from the perf prior also keeps the prior beside
it to read commits with a diff (engines.labelers.student.diff_reader).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engines.labelers.calibration import (
    HOLDOUT_NEAR_TIE,
    choose_threshold,
    enough_to_choose,
    parse_objective,
    scores_at,
)
from engines.labelers.diff_decision import DiffDecision, diff_decision_of, has_diff
from engines.labelers.rule_floor import apply_floor
from engines.labelers.student.data import Example
from engines.labelers.student.diff_reader import record_diff_reader
from engines.labelers.student.infer import read_meta
from engines.labelers.student.prior import applied_prior, prior_diff_decision
from store.models import ModelRow

# An inherited decision was measured on thousands of commits; a dev set of a couple of
# hundred chooses a threshold that follows its own noise (on round 18's halves the best
# F1 sat at 0.66 on one and 0.15 on the other, both worse than 0.3 on the other half,
# while F1 at 0.3 was within 0.01-0.02 of the best on each). So for the F1 objective the
# inherited threshold stands unless the best one beats it by more than this.
INHERITED_NEAR_TIE = 0.02


def inherited_diff_decision(start: ModelRow | None, config: Any) -> DiffDecision | None:
    """What a student trained with ``config`` inherits: its warm start's diff decision,
    else (starting from the perf prior) the prior's."""
    if start is not None:
        return diff_decision_of(read_meta(start.path or ""))
    return prior_diff_decision(config)


def choose_diff_decision(
    raw: Sequence[float],
    texts: Sequence[str],
    labels: Sequence[int],
    floor: Mapping[str, Any] | None,
    objective: str,
    dev_name: str | None,
    inherited: DiffDecision | None,
) -> dict[str, Any] | None:
    """The ``diff`` entry of a student's decision block, or None for one threshold.

    ``raw`` is the network's own P(perf) of ``texts`` (before the floor), the dev set
    ``dev_name``'s items, else (None) the held-out slice's, where near ties count as
    the main threshold's do (``HOLDOUT_NEAR_TIE``). Where enough of the texts carry a
    diff, the threshold is chosen on those, floored with the inherited
    ``floor_yields_below`` (none without an inheritance)."""
    chosen_on, near_tie = (f"dev:{dev_name}", 0.0) if dev_name else ("holdout", HOLDOUT_NEAR_TIE)
    keep = [k for k, text in enumerate(texts) if has_diff(text)]
    picked = [labels[k] for k in keep]
    yields = inherited.floor_yields_below if inherited is not None else None
    if keep and enough_to_choose(picked):
        kept_texts = [texts[k] for k in keep]
        probs = [raw[k] for k in keep]
        if floor:
            probs = apply_floor(probs, kept_texts, floor, yields)
        threshold, met = choose_threshold(probs, picked, objective, near_tie)
        where = f"{chosen_on}: its {len(keep)} items with a diff"
        if inherited is not None and parse_objective(objective)[0] == "f1":
            best = scores_at(probs, picked, threshold)["f1"] or 0.0
            kept = scores_at(probs, picked, inherited.threshold)["f1"] or 0.0
            if best - kept <= INHERITED_NEAR_TIE:
                threshold = inherited.threshold
                where = (
                    f"{inherited.chosen_on}; kept on {where}, within"
                    f" {INHERITED_NEAR_TIE:g} F1 of the best there"
                )
        chosen = DiffDecision(threshold, yields, where)
        return {
            **chosen.as_json(),
            "objective_met": met,
            "n": len(keep),
            "positives": int(sum(picked)),
            **scores_at(probs, picked, threshold),
        }
    return inherited.as_json() if inherited is not None else None


def keep_diff_reader(
    config: Any, started_from: Any, examples: Sequence[Example], student_dir: Path
) -> dict[str, Any] | None:
    """Copy the prior into ``student_dir`` and return the ``diff_reader`` block when the
    student started from it (``started_from``: the training's prior record) and learned
    from messages alone; else None."""
    if started_from is None or not examples or config.input_field != "model_input":
        return None  # nothing to keep, or it never reads a diff
    if any(has_diff(e.text) for e in examples):
        return None  # it learned how to read diffs itself
    info = applied_prior(config)
    return record_diff_reader(student_dir, info) if info is not None else None
