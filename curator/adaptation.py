"""Adapting the student to a new source: the learning curve of a warm start.

:func:`run_learning_curve` answers "how many votes from the new source does the student
need?". For each size n and each order it warm-starts a model from the starting student
on the first n settled votes of the new set (with the usual replay share), scores
perf-class F1 on an eval set from other repositories, and throws the model away; the
starting model itself is the n=0 point. Orders:

* ``random``: a seeded shuffle of the votes;
* ``uncertainty``: the starting model's |p - 0.5| ascending, the order in which an
  annotation team working a ``--prefer uncertain`` queue would have labeled them.

Unless ``curve_only``, the full run (all votes) is then trained through
:func:`curator.training.run_training` and registered with the curve in its params, its
meta and ``learning_curve.json``. Progress goes to a callback, a ``threading.Event``
cancels (nothing is registered); the store is not touched while a model learns.
"""

from __future__ import annotations

import random
import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from annotation.sets import SetError, require_set
from annotation.training_data import (
    POSITIVE,
    LabeledItem,
    describe_overlap,
    human_items,
    repository_overlap,
    unsettled_text,
)
from curator.diff_choice import choose_diff_decision
from curator.training import (
    TrainingRefused,
    TrainOutcome,
    TrainRequest,
    _dev_examples,
    _examples,
    _Held,
    _held_out,
    _rules_on,
    _score,
    check_roles,
    run_training,
    student_decision,
)
from curator.warm_start import (
    held_out_sources,
    resolve_start,
    start_leak,
    warm_config,
    with_replay,
)
from engines.labelers.base import Labeler
from engines.labelers.diff_decision import DiffDecision, read_diff_decision
from engines.labelers.rule_floor import apply_floor, floor_block
from engines.labelers.student import FAMILY as STUDENT
from engines.labelers.student import (
    Example,
    StudentLabeler,
    TrainProgress,
    train_student,
)
from engines.labelers.student.data import stratified_holdout
from store import Store
from store.models import ModelRow, models_dir
from store.sets import set_item_ids

ORDERS = ("random", "uncertainty")
DEFAULT_SIZES = (50, 100, 200, 400)


@dataclass(frozen=True)
class CurveRequest:
    """``train`` names the starting model (``from_model``), the new votes, the eval set
    and the knobs; the curve trains on those votes only (no teacher labels)."""

    train: TrainRequest
    sizes: tuple[int, ...] = DEFAULT_SIZES
    orders: tuple[str, ...] = ORDERS
    curve_only: bool = False


@dataclass(frozen=True)
class CurveProgress:
    """Where the curve is: ``label`` says which run (e.g. ``n=100 random (3/8)``);
    ``train`` is that run's own report, None while a model is being scored."""

    label: str
    run: int
    runs: int
    train: TrainProgress | None = None


@dataclass(frozen=True)
class CurvePoint:
    """Perf-class scores of one model of the curve (``n`` = 0: the starting model)."""

    n: int
    order: str
    f1: float | None
    precision: float | None
    recall: float | None
    replayed: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "order": self.order,
            "f1": self.f1,
            "precision": self.precision,
            "recall": self.recall,
            "replayed": self.replayed,
        }


@dataclass
class CurveOutcome:
    """The curve (None when cancelled) and the registered full run, if any."""

    curve: dict[str, Any] | None
    points: list[CurvePoint]
    final: TrainOutcome | None = None
    cancelled: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> ModelRow | None:
        return self.final.model if self.final is not None else None


CurveProgressFn = Callable[[CurveProgress], None]


def curve_points(curve: object) -> list[CurvePoint]:
    """The points of a stored curve (a model's ``params["learning_curve"]``): the keyword
    rules on the same eval items (curves stored since they were recorded), then n=0
    (the starting model) and the rest; [] when there is none or it cannot be read."""
    if not isinstance(curve, dict) or not isinstance(curve.get("points"), list):
        return []
    points = []
    for row in [curve.get("rules"), curve.get("start"), *curve["points"]]:
        if not isinstance(row, dict):
            continue
        try:
            points.append(
                CurvePoint(
                    int(row["n"]),
                    str(row["order"]),
                    _num(row.get("f1")),
                    _num(row.get("precision")),
                    _num(row.get("recall")),
                    int(row.get("replayed") or 0),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return points


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _point(
    store: Store, n: int, order: str, labeler: Labeler, held: _Held, replayed: int = 0
) -> CurvePoint:
    return _scored_point(n, order, _score(store, labeler, held).as_json(), replayed)


def _scored_point(n: int, order: str, scores: dict[str, Any], replayed: int = 0) -> CurvePoint:
    perf = scores["per_class"].get(POSITIVE, {})
    return CurvePoint(n, order, perf.get("f1"), perf.get("precision"), perf.get("recall"), replayed)


def _curve_decision(
    labeler: StudentLabeler,
    dev: Sequence[Example],
    dev_name: str | None,
    holdout: Sequence[Example],
    objective: str,
    fallback: tuple[float, str],
    inherited: DiffDecision | None,
) -> tuple[float, DiffDecision | None]:
    """A curve model's decision threshold and its decision for commits read with a
    diff, chosen as a registered model's are: on the dev set, else on the held-out slice
    of its votes when that holds enough of each class, for the run's objective; else the
    starting model's (which stands in for its source for both). The network reads the
    tuning items once."""
    tuning = dev or holdout
    if not tuning:
        return fallback[0], inherited
    texts = [e.text for e in tuning]
    labels = [e.label for e in tuning]
    raw = labeler.model_probabilities(texts)
    probs = apply_floor(raw, texts, labeler.floor) if labeler.floor else raw
    named = dev_name if dev else None
    decision = student_decision(probs, labels, objective, named, None, fallback)
    chosen = choose_diff_decision(raw, texts, labels, labeler.floor, objective, named, inherited)
    return float(decision["threshold"]), read_diff_decision(chosen)


def _check(request: CurveRequest) -> None:
    train = request.train
    if not train.from_model:
        raise TrainingRefused("--curve needs a starting model: --from-model student@current")
    if not train.vote_sets:
        raise TrainingRefused("--curve needs the new source's votes: --votes SET")
    if not train.eval_set:
        raise TrainingRefused("--curve needs an eval set from other repositories: --eval SET")
    if train.teacher:
        raise TrainingRefused("--curve learns from --votes only: drop --from teacher:...")
    if train.kind != "student":
        raise TrainingRefused(f"--curve warm-starts students only, not {train.kind}")
    bad = [o for o in request.orders if o not in ORDERS]
    if bad or not request.orders:
        raise TrainingRefused(f"--order takes random, uncertainty or both, not {bad or '-'}")
    if not request.sizes or min(request.sizes) < 1:
        raise TrainingRefused("--curve takes positive sizes, e.g. 50,100,200,400")
    check_roles(train.vote_sets, train.dev_set, train.eval_set, train.same_repos)


def _new_votes(store: Store, train: TrainRequest) -> list[LabeledItem]:
    """The settled votes of the new sets, less any item of the eval (or dev) set; refused
    when they share a repository with it, unless ``same_repos``."""
    try:
        items = human_items(store, [require_set(store, n) for n in train.vote_sets], train.rule)
        held_ids = {
            i
            for name in (train.eval_set, train.dev_set)
            if name
            for i in set_item_ids(store, require_set(store, name).id)
        }
    except (SetError, ValueError) as exc:
        raise TrainingRefused(str(exc)) from exc
    overlap = repository_overlap(store, [x.item_id for x in items], held_ids)
    if overlap and not train.same_repos:
        raise TrainingRefused(
            f"the eval/dev sets share {len(overlap)} repositories with the new votes"
            f" ({', '.join(train.vote_sets)}; `curator set split` makes disjoint sets, or"
            f" --same-repos): {describe_overlap(overlap, 3)}"
        )
    items = [x for x in items if x.item_id not in held_ids]
    if not items:
        why = [
            (n, unsettled_text(store, require_set(store, n), train.rule)) for n in train.vote_sets
        ]
        shown = "; ".join(f"{n}: {w}" for n, w in why if w)
        raise TrainingRefused(
            f"no settled perf/non-perf votes in {', '.join(train.vote_sets)}"
            + (f"; {shown}" if shown else "")
        )
    return items


def ordered(
    order: str, examples: Sequence[Example], p_start: Sequence[float], seed: int
) -> list[Example]:
    """The examples in the order they would have been labeled."""
    idx = sorted(range(len(examples)), key=lambda i: examples[i].item_id or 0)
    if order == "random":
        random.Random(seed).shuffle(idx)
    else:
        idx.sort(key=lambda i: abs(p_start[i] - 0.5))  # stable: ties by item id
    return [examples[i] for i in idx]


def curve_sizes(sizes: Sequence[int], available: int, notes: list[str]) -> list[int]:
    """The sizes to train, ascending; those above the votes available become one point
    at all of them."""
    kept = sorted({n for n in sizes if n <= available})
    if any(n > available for n in sizes):
        notes.append(f"only {available} settled votes: sizes above {available} use all of them")
        if available not in kept:
            kept.append(available)
    return kept


def run_learning_curve(
    store: Store,
    request: CurveRequest,
    progress: CurveProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> CurveOutcome:
    """Measure the learning curve, then (unless ``curve_only``) train and register the
    full warm-started run with the curve; raises :class:`TrainingRefused` on bad input."""
    _check(request)
    train = request.train
    assert train.from_model and train.eval_set
    try:
        start = resolve_start(store, train.from_model)
        config = warm_config(train.config, start)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    items = _new_votes(store, train)
    data = _examples(store, items, config, STUDENT, start)
    config = data.config
    field_name = config.input_field
    try:
        held = _held_out(store, train.eval_set, train.rule, field_name)
        dev = _held_out(store, train.dev_set, train.rule, field_name)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    assert held is not None
    examples = data.examples
    leak = start_leak(store, start, (("--eval", train.eval_set), ("--dev", train.dev_set)))
    notes: list[str] = [leak] if leak else []
    sizes = curve_sizes(request.sizes, len(examples), notes)
    runs = len(sizes) * len(request.orders) + (0 if request.curve_only else 1)

    def report(label: str, run: int, inner: TrainProgress | None = None) -> None:
        if progress is not None:
            progress(CurveProgress(label, run, runs, inner))

    report(f"scoring {start.name}", 0)
    rules = _rules_on(held.truth, held.texts, floor_block(config.rule_floor))
    rules_point = _scored_point(0, f"{rules['labeler']} (rules)", rules)
    assert start.path is not None
    labeler = StudentLabeler(start.path, start.name, batch_size=64)
    start_point = _point(store, 0, "start", labeler, held)
    p_start = labeler.probabilities([e.text for e in examples])
    start_threshold = labeler.threshold
    start_diff = labeler.diff
    del labeler
    dev_examples = _dev_examples(dev) if dev else []
    banned = held_out_sources(store, (train.eval_set, train.dev_set))
    root = models_dir(store)
    root.mkdir(parents=True, exist_ok=True)
    points: list[CurvePoint] = []
    run = 0
    for order in request.orders:
        queue = ordered(order, examples, p_start, config.seed)
        for n in sizes:
            run += 1
            label = f"n={n} {order} ({run}/{runs})"
            votes, holdout = (
                (queue[:n], [])
                if dev
                else stratified_holdout(queue[:n], config.holdout, config.seed)
            )
            mixed, counts, note = with_replay(start, votes, train.replay, config.seed, banned)
            if note and note not in notes:
                notes.append(note)
            staging = root / f".curve-{uuid.uuid4().hex[:12]}"
            try:
                result = train_student(
                    config,
                    mixed,
                    dev_examples,
                    staging,
                    lambda r, label=label, run=run: report(label, run, r),
                    cancel,
                )
                if result.cancelled:
                    return CurveOutcome(None, points, cancelled=True, notes=notes)
                report(f"{label}: scoring on {held.name}", run)
                scored = StudentLabeler(staging, "curve", batch_size=64)
                scored.floor = floor_block(config.rule_floor)
                scored.threshold, scored.diff = _curve_decision(
                    scored,
                    dev_examples,
                    train.dev_set,
                    holdout,
                    config.threshold_objective,
                    (start_threshold, f"from {start.name}"),
                    start_diff,
                )
                points.append(_point(store, n, order, scored, held, counts["mixed"]))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    curve = {
        "from_model": start.name,
        "votes": list(train.vote_sets),
        "eval": held.name,
        "dev": train.dev_set,
        "replay": train.replay,
        "same_repos": train.same_repos,
        "seed": config.seed,
        "available": len(examples),
        "rules": rules_point.as_json(),  # the keyword rules on the same eval items
        "start": start_point.as_json(),
        "points": [p.as_json() for p in points],
    }
    if request.curve_only:
        return CurveOutcome(curve, [rules_point, start_point, *points], notes=notes)
    final_label = f"full run: {len(examples)} votes ({runs}/{runs})"
    final = run_training(
        store,
        replace(train, learning_curve=curve),
        lambda r: report(final_label, runs, r),
        cancel,
    )
    notes.extend(n for n in final.notes if n not in notes)
    return CurveOutcome(
        curve, [rules_point, start_point, *points], final, cancelled=final.cancelled, notes=notes
    )
