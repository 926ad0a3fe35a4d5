"""``curator models show`` as a function: one registered model's base, training data,
input, decision threshold, scores, calibration (ECE) and reliability table, as plain
data the command prints (or dumps as JSON). An ensemble's members, combiner, threshold
and candidates come from its ``ensemble.json``."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from curator.training import perf_f1, train_total
from engines.labelers.diff_decision import describe_diff_decision, diff_decision_of
from engines.labelers.ensemble import FAMILY as ENSEMBLE
from engines.labelers.ensemble import read_spec
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


def label_shares(by_label: Any) -> str:
    """``perf 400, non-perf 800`` from a recorded ``{label: count}`` (other entries,
    such as a held-out slice's ``fraction``, are left out)."""
    if not isinstance(by_label, dict):
        return ""
    return ", ".join(
        f"{label} {n:,}" for label, n in sorted(by_label.items()) if isinstance(n, int)
    )


def examples_text(counts: dict[str, Any]) -> str:
    """``1,200 (perf 400, non-perf 800)``: how many examples a model was trained on,
    then each label's share, from its recorded counts."""
    parts = label_shares(counts.get("train"))
    total = f"{counts.get('train_total') or 0:,}"
    return f"{total} ({parts})" if parts else total


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


def combiner_rows(cv_f1: Any, chosen: Any) -> list[tuple[str, float, str]]:
    """(candidate, cross-validated F1, ``chosen`` or empty) per combiner an ensemble
    weighed on its dev set, as recorded."""
    if not isinstance(cv_f1, dict):
        return []
    return [
        (str(name), float(f1), "chosen" if name == chosen else "")
        for name, f1 in cv_f1.items()
        if isinstance(f1, int | float)
    ]


def describe_combiner(combiner: Any) -> str:
    """``tfidf-lr@2 alone``, ``the mean of the members' P(perf)``..., from an ensemble's
    recorded ``combiner``."""
    kind = combiner.get("kind") if isinstance(combiner, dict) else None
    if kind == "member":
        return f"{combiner.get('member')} alone (the other members are not used)"
    if kind == "mean":
        return "the mean of the members' P(perf)"
    if kind == "stack":
        c = combiner.get("C")
        shown = f"C={c:g}" if isinstance(c, int | float) else "C unknown"
        return f"a logistic-regression stack ({shown}) on the members' P(perf)"
    if kind == "vote":
        return "the Dawid-Skene label model over the members' votes"
    return f"unknown combiner {kind!r}"


def ensemble_report(row: ModelRow) -> dict[str, Any]:
    """An ensemble's members (with the fields each reads), combiner, threshold and the
    candidates' CV F1, from its ``ensemble.json``; ``error`` says why the file could
    not be read (what the store recorded stands in: members, chosen combiner, CV F1)."""
    params = row.params
    counts = params.get("counts") if isinstance(params.get("counts"), dict) else {}
    recorded = row.metrics.get("combiner") if isinstance(row.metrics.get("combiner"), dict) else {}
    try:
        spec: dict[str, Any] = read_spec(row.path or "")
        error = None
    except ValueError as exc:
        spec, error = {**counts, **recorded}, str(exc)
    members = spec.get("members")
    if not isinstance(members, list):
        members = [{"name": str(n)} for n in params.get("members") or []]
    combiner = spec.get("combiner") if isinstance(spec.get("combiner"), dict) else {}
    threshold = spec.get("threshold")
    return {
        "members": [
            {
                "name": str(m.get("name")),
                "input_fields": list(m.get("input_fields") or []),
                "vote_only": bool(m.get("vote_only")),
            }
            for m in members
            if isinstance(m, dict)
        ],
        "combiner": {k: v for k, v in combiner.items() if k != "label_model"},
        "combiner_text": describe_combiner(combiner) if combiner else None,
        "chosen": spec.get("chosen", params.get("combiner")),
        "threshold": threshold if isinstance(threshold, int | float) else None,
        "cv_f1": spec.get("cv_f1") if isinstance(spec.get("cv_f1"), dict) else {},
        "folds": spec.get("folds"),
        "dev_items": spec.get("dev_items"),
        "unlabeled_items": spec.get("unlabeled_items"),
        "error": error,
    }


def _members_input(ensemble: dict[str, Any]) -> str:
    """``each member reads its own: keyword@5 message; tfidf-lr@1 message, files``."""
    parts = [
        f"{m['name']} {', '.join(m['input_fields'])}" if m["input_fields"] else m["name"]
        for m in ensemble["members"]
    ]
    return f"each member reads its own: {'; '.join(parts)}" if parts else "not recorded"


def model_report(row: ModelRow, current: bool) -> dict[str, Any]:
    """Everything ``curator models show`` prints about ``row``. ``decision`` is None for
    models trained before thresholds were chosen (they decide at 0.5) and for ensembles,
    whose ``ensemble`` block says how they decide."""
    params = row.params
    record = recorded_input(params)
    decision = params.get("decision") if isinstance(params.get("decision"), dict) else None
    counts = params.get("counts") if isinstance(params.get("counts"), dict) else {}
    ensemble = ensemble_report(row) if row.family == ENSEMBLE else None
    threshold = decision["threshold"] if decision else 0.5
    if ensemble is not None and ensemble["threshold"] is not None:
        threshold = ensemble["threshold"]
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
        "input_text": _members_input(ensemble) if ensemble else input_text(params, row.metrics),
        "rule_floor": recorded_floor(params),
        "rule_floor_text": describe_floor(recorded_floor(params)),
        "prior_text": describe_prior(
            row.family, _training(row.metrics).get("prior"), params.get("warm_start")
        ),
        "threshold": threshold,
        "decision": decision,
        "ensemble": ensemble,
        "diff_decision_text": describe_diff_decision(diff_decision_of(params)),
        "diff_reader_text": describe_diff_reader(diff_reader_of(params)),
        "scores": score_rows(row.name, row.metrics),
        "training": _training(row.metrics),
    }
