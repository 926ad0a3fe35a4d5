"""``curator train --kind ensemble`` as a function: resolve the members, choose and fit
the combiner (on a dev set by cross-validation, or the label model on unlabeled commits),
write ``ensemble.json`` and register ``ensemble@N``. See :mod:`engines.labelers.ensemble`."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.sets import SetError, require_set
from annotation.training_data import POSITIVE
from curator.training import (
    TrainingRefused,
    TrainOutcome,
    _held_out,
    _score,
    check_roles,
    staging_folder,
)
from curator.warm_start import learned_held_out
from engines.labelers import ensemble
from engines.labelers.base import Labeler, input_fields
from engines.labelers.keyword import packaged_terms
from engines.labelers.registry import LabelerError, LabelerSpec, build_labeler, resolve_labeler
from store import Store
from store.labeling_inputs import commit_item_ids
from store.models import current_model, get_model, latest_model, models_dir, register_model
from store.sets import set_item_ids
from store.teaching import commit_texts

DEFAULT_RULES = ("heuristics@1",)
DEFAULT_TRAINED = ("tfidf-lr", "student")
UNLABELED_LIMIT = 20_000


@dataclass(frozen=True)
class EnsembleRequest:
    """Members (empty: the defaults), the combiner (``auto``: chosen on ``dev_set``;
    ``vote``: the label model on unlabeled commits) and the sets."""

    members: tuple[str, ...] = ()
    combiner: str = "auto"
    dev_set: str | None = None
    eval_set: str | None = None
    rule: str = "majority"
    seed: int = 0
    folds: int = 5
    unlabeled_limit: int = UNLABELED_LIMIT


def default_members(store: Store) -> list[str]:
    """The current keyword rules, heuristics@1, and the current (else latest) tfidf-lr and
    student."""
    names = [f"keyword@{packaged_terms().version}", *DEFAULT_RULES]
    for family in DEFAULT_TRAINED:
        row = current_model(store, family) or latest_model(store, family)
        if row is not None:
            names.append(row.name)
    return names


def resolve_members(store: Store, names: Sequence[str]) -> list[LabelerSpec]:
    """Each member name resolved to a concrete version; a bad name refuses in one line."""
    specs: list[LabelerSpec] = []
    for name in names:
        if name.startswith("teacher:"):
            raise TrainingRefused(
                f"member {name}: teacher answers exist only for the items it was asked about,"
                " so an ensemble cannot use it on new commits; use it through a student"
                " (`curator train --from {name}`)"
            )
        try:
            spec = resolve_labeler(store, name)
        except (LabelerError, ValueError, OSError) as exc:
            raise TrainingRefused(f"member {name}: {exc}") from None
        if spec.family == ensemble.FAMILY:
            raise TrainingRefused(f"member {name}: an ensemble cannot be a member")
        if spec.name in {s.name for s in specs}:
            raise TrainingRefused(f"member {name}: named twice ({spec.name})")
        specs.append(spec)
    if not specs:
        raise TrainingRefused("an ensemble needs at least one member")
    return specs


def member_rows(
    store: Store, members: Sequence[Labeler], item_ids: Sequence[int]
) -> tuple[list[int], list[list[float]]]:
    """The stored commits among ``item_ids`` and every member's P(perf) on each, each
    member reading its own field."""
    fields = {f for m in members for f in input_fields(m)}
    texts = {f: commit_texts(store, item_ids, f) for f in sorted(fields)}
    present = [i for i in item_ids if all(i in t for t in texts.values())]
    if not present:
        return [], []
    return present, ensemble.member_rows(members, lambda f: [texts[f][i] for i in present])


def _members_json(specs: Sequence[LabelerSpec], members, rows) -> list[dict[str, Any]]:
    found = []
    for j, (spec, labeler) in enumerate(zip(specs, members, strict=True)):
        vote_only = all(r[j] in (0.0, 1.0) for r in rows) if rows else False
        found.append(
            {"name": spec.name, "input_fields": list(input_fields(labeler)), "vote_only": vote_only}
        )
    return found


def _fit_on_dev(store: Store, request: EnsembleRequest, specs, members, note) -> dict[str, Any]:
    held = _held_out(store, request.dev_set, request.rule, "message")
    assert held is not None
    ids, rows = member_rows(store, members, sorted(held.truth))
    truth = [int(held.truth[i] == POSITIVE) for i in ids]
    described = _members_json(specs, members, rows)
    names = [m["name"] for m in described]
    try:
        choice = ensemble.choose_combiner(
            rows, truth, names, [m["vote_only"] for m in described], request.folds, request.seed
        )
    except ValueError as exc:
        raise TrainingRefused(f"--dev {request.dev_set}: {exc}") from None
    cand = choice.candidate
    combiner: dict[str, Any] = {"kind": cand.kind}
    if cand.kind == "member":
        combiner["member"] = names[cand.member or 0]
    elif cand.kind == "stack":
        weights, intercept = choice.fitted
        combiner.update({"C": cand.c, "weights": weights, "intercept": intercept})
    note(f"combiner chosen by {choice.folds}-fold CV on {request.dev_set} ({len(ids)} items)")
    return {
        "members": described,
        "combiner": combiner,
        "chosen": cand.label(names),
        "threshold": choice.threshold,
        "cv_f1": choice.cv_f1,
        "folds": choice.folds,
        "dev_items": len(ids),
    }


def _fit_votes(store: Store, request: EnsembleRequest, specs, members, note) -> dict[str, Any]:
    if len(members) < 3:
        raise TrainingRefused(
            "the vote combiner needs at least three members: with two, the label model cannot"
            " tell whose votes are right (or give --dev SET to choose a combiner on labels)"
        )
    held: set[int] = set()
    for name in (request.dev_set, request.eval_set):
        if name:
            held.update(set_item_ids(store, require_set(store, name).id))
    pool = [i for i in commit_item_ids(store, unvoted_only=True) if i not in held]
    ids, rows = member_rows(store, members, pool[: request.unlabeled_limit])
    if not ids:
        raise TrainingRefused("no unlabeled commits to fit the label model on: mine or import some")
    described = _members_json(specs, members, rows)
    try:
        model = ensemble.fit_vote_model(rows, [m["name"] for m in described])
    except ValueError as exc:
        raise TrainingRefused(f"label model: {exc}") from None
    note(
        f"no labels used: Dawid-Skene label model fitted on the members' votes over"
        f" {len(ids)} unlabeled commits (heuristic supervision)"
    )
    return {
        "members": described,
        "combiner": {"kind": "vote", "label_model": model.as_json()},
        "chosen": "vote",
        "threshold": 0.5,
        "unlabeled_items": len(ids),
    }


def _check_members_held_out(
    store: Store,
    specs: Sequence[LabelerSpec],
    request: EnsembleRequest,
    note: Callable[[str], None],
) -> None:
    """Refuse a trained member that learned from items of --dev: the combiner would be
    fitted on its answers to what it memorised, and trust it far beyond its worth. A
    member that learned from items of --eval is noted: the ensemble's eval scores
    overstate there."""
    for spec in specs:
        row = get_model(store, spec.name)
        if row is None:  # a rule labeler: it learned from nothing
            continue
        if found := learned_held_out(store, row, (("--dev", request.dev_set),)):
            raise TrainingRefused(
                f"member {found}: the combiner would trust what it memorised; give --members"
                " without it, or a --dev set it did not learn from"
            )
        if found := learned_held_out(store, row, (("--eval", request.eval_set),)):
            note(f"member {found}: the ensemble's scores there overstate")


def train_ensemble(
    store: Store, request: EnsembleRequest, note: Callable[[str], None] = lambda s: None
) -> TrainOutcome:
    """Fit, score and register ``ensemble@N``; raises :class:`TrainingRefused`."""
    if request.combiner not in ensemble.COMBINERS:
        raise TrainingRefused(f"--combiner must be auto or vote, not {request.combiner!r}")
    check_roles((), request.dev_set, request.eval_set)
    if request.combiner == "auto" and not request.dev_set:
        note("no --dev set: using the label-model (vote) combiner on unlabeled commits")
    specs = resolve_members(store, request.members or default_members(store))
    _check_members_held_out(store, specs, request, note)
    try:
        members = [build_labeler(s) for s in specs]
        if request.combiner == "vote" or not request.dev_set:
            spec = _fit_votes(store, request, specs, members, note)
        else:
            spec = _fit_on_dev(store, request, specs, members, note)
    except (SetError, LabelerError) as exc:
        raise TrainingRefused(str(exc)) from None
    labeler = ensemble.EnsembleLabeler("", "staged", members, spec)
    metrics: dict[str, Any] = {"combiner": {k: spec.get(k) for k in ("chosen", "cv_f1", "folds")}}
    for role, name in (("dev", request.dev_set), ("eval", request.eval_set)):
        held = _held_out(store, name, request.rule, "message") if name else None
        if held is not None:
            metrics[role] = {"set": held.name, **_score(store, labeler, held).as_json()}
    staging = staging_folder(models_dir(store))
    try:
        ensemble.write_spec(staging, {**spec, "metrics": metrics})
        params = {
            "kind": ensemble.FAMILY,
            "members": [s.name for s in specs],
            "combiner": spec["chosen"],
            "dev": request.dev_set,
            "eval": request.eval_set,
            "rule": request.rule,
            "seed": request.seed,
            "counts": {k: spec[k] for k in ("dev_items", "unlabeled_items") if k in spec},
        }
        model = register_model(store, ensemble.FAMILY, ensemble.FAMILY, params, metrics, staging)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return TrainOutcome(model, params["counts"], metrics)
