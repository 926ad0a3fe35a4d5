"""``curator models show`` as a function: one registered model's base, training data,
input, decision threshold, scores, calibration (ECE) and reliability table, as plain
data the command prints (or dumps as JSON)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from curator.training import perf_f1, train_total
from engines.labelers.diff_decision import describe_diff_decision, diff_decision_of
from engines.labelers.inputs import describe, recorded_input
from engines.labelers.rule_floor import describe_floor, recorded_floor
from engines.labelers.student.diff_reader import describe_diff_reader, diff_reader_of
from store.models import ModelRow

SCORE_PARTS = ("dev", "eval", "holdout", "out_of_fold")
_PART_SETS = {"holdout": "held-out slice of the votes", "out_of_fold": "training set (5-fold)"}


def score_rows(name: str, metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's scores part by part (dev set, eval set, its held-out slice, out of
    fold), each followed by the keyword rules' on the same items when recorded."""
    rules = metrics.get("rules") if isinstance(metrics.get("rules"), dict) else {}
    rows = []
    for part in SCORE_PARTS:
        for scores, labeler in ((metrics.get(part), name), (rules.get(part), None)):
            if not isinstance(scores, dict):
                continue
            perf = (scores.get("per_class") or {}).get("perf") or {}
            rows.append(
                {
                    "role": part,
                    "labeler": labeler or str(scores.get("labeler")),
                    "rules": labeler is None,
                    "set": scores.get("set", _PART_SETS.get(part, "training set")),
                    "items": scores.get("items_predicted"),
                    "precision": perf.get("precision"),
                    "recall": perf.get("recall"),
                    "f1": perf_f1(scores),
                    "accuracy": scores.get("accuracy"),
                }
            )
    return rows


def below_the_rules(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(model row, rules row) pairs where the rules score a higher F1 on the same items."""
    pairs = []
    for model, rules in pairwise(rows):
        if model["rules"] or not rules["rules"] or model["role"] != rules["role"]:
            continue
        if model["f1"] is not None and rules["f1"] is not None and rules["f1"] > model["f1"]:
            pairs.append((model, rules))
    return pairs


def _training(metrics: dict[str, Any]) -> dict[str, Any]:
    training = metrics.get("training")
    if not isinstance(training, dict):
        return {}
    return {k: v for k, v in training.items() if k != "history"}


def describe_prior(family: str, prior: Any, warm_start: Any = None) -> str | None:
    """``perf-prior@1 (rank 32; learned from ...)``, ``student@N (warm start)``, ``none``
    for a student that started from its base alone, None for other kinds."""
    if family != "student":
        return None
    if warm_start:
        return f"{warm_start} (warm start)"
    if not isinstance(prior, dict):
        return "none (started from its base alone)"
    learned = prior.get("learned_from") or {}
    total = sum(v for v in learned.values() if isinstance(v, int))
    return f"{prior.get('name')} (rank {prior.get('rank')}; learned from {total:,} labeled commits)"


def skipped_text(learned: dict[str, Any]) -> str:
    """What a student starting from the perf prior left out (``counts["prior_learned"]``)."""
    skipped, kept = learned.get("skipped", 0), learned.get("kept", 0)
    text = f"left out {skipped:,} examples the perf prior had already learned"
    if not kept:
        return f"{text}: nothing new to fine-tune on, so the model is the prior as it is"
    return f"{text}; fine-tuned on the other {kept:,}"


def input_text(params: dict[str, Any], metrics: dict[str, Any]) -> str:
    """What the model reads, e.g. ``message || diff (...), read in fields: ...`` for a
    TF-IDF model that reads message and changed lines apart."""
    text = describe(recorded_input(params))
    if _training(metrics).get("features") == "fields":
        text += ", read in fields: message, changed lines, rule flag"
    return text


def model_report(row: ModelRow, current: bool) -> dict[str, Any]:
    """Everything ``curator models show`` prints about ``row``. ``decision`` is None for
    models trained before thresholds were chosen (they decide at 0.5)."""
    params = row.params
    record = recorded_input(params)
    decision = params.get("decision") if isinstance(params.get("decision"), dict) else None
    counts = params.get("counts") if isinstance(params.get("counts"), dict) else {}
    return {
        "name": row.name,
        "family": row.family,
        "version": row.version,
        "current": current,
        "base": row.base,
        "created_at": row.created_at,
        "path": row.path,
        "sources": {
            "teacher": params.get("teacher"),
            "tau": params.get("tau"),
            "votes": params.get("votes", []),
            "dev": params.get("dev"),
            "eval": params.get("eval"),
        },
        "train_total": train_total(row),
        "counts": counts,
        "input": record,
        "input_text": input_text(params, row.metrics),
        "rule_floor": recorded_floor(params),
        "rule_floor_text": describe_floor(recorded_floor(params)),
        "prior_text": describe_prior(
            row.family, _training(row.metrics).get("prior"), params.get("warm_start")
        ),
        "threshold": decision["threshold"] if decision else 0.5,
        "decision": decision,
        "diff_decision_text": describe_diff_decision(diff_decision_of(params)),
        "diff_reader_text": describe_diff_reader(diff_reader_of(params)),
        "scores": score_rows(row.name, row.metrics),
        "training": _training(row.metrics),
    }
