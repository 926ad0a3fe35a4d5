"""One training run from request to registered model, callable from the CLI or a UI.

:func:`run_training` gathers teacher and human examples, refuses leaks into the dev and
eval sets, trains a student or a TF-IDF baseline in a staging directory, scores it on
the dev and eval sets and registers it (``student@N``, ``tfidf-lr@N``, ``tfidf-svm@N``).
Progress goes to a callback and a ``threading.Event`` cancels; the store is touched
before and after training only, never while the model learns.

:func:`previous_model` and :func:`score_model` serve the comparison a curator makes
before promoting a new version: the new model against the one it would replace, on the
same held-out set.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from annotation.adjudication import final_labels
from annotation.evaluation import Evaluation, evaluate
from annotation.sets import SetError, require_set
from annotation.training_data import (
    BINARY,
    POSITIVE,
    LabeledItem,
    combine,
    drop_sources,
    human_items,
    label_counts,
    repository_overlap,
    teacher_items,
)
from curator.warm_start import held_out_sources, prepare_warm_start, stage_learning_curve
from engines.labelers import tfidf
from engines.labelers.base import Labeler
from engines.labelers.student import FAMILY as STUDENT
from engines.labelers.student import (
    LABELS,
    Example,
    StudentLabeler,
    TrainConfig,
    TrainProgress,
    hard_example,
    train_student,
)
from store import Store
from store.labeling_inputs import item_sources
from store.models import ModelRow, current_model, list_models, models_dir, register_model
from store.predictions import add_predictions
from store.records import PredictionRow
from store.sets import set_item_ids
from store.teaching import commit_texts

KINDS = (STUDENT, "tfidf-lr", "tfidf-svm")


class TrainingRefused(ValueError):
    """The request cannot be trained as asked; the message says why in one line."""


@dataclass(frozen=True)
class TrainRequest:
    """What to learn from and how. ``tau`` is on the teacher's 0-100 confidence scale."""

    kind: str = STUDENT
    teacher: str | None = None
    tau: float = 85.0
    vote_sets: tuple[str, ...] = ()
    dev_set: str | None = None
    eval_set: str | None = None
    rule: str = "majority"
    exclude_overlap: bool = False
    config: TrainConfig = field(default_factory=TrainConfig)
    from_model: str | None = None
    """Warm start: a registered student (``student@N``, ``@latest``, ``@current``)."""
    replay: float = 0.5
    """With a warm start, mix in this many old examples per new one (its replay sample)."""
    learning_curve: dict[str, Any] | None = None
    """A learning curve measured before this run, recorded with the model."""


@dataclass
class TrainOutcome:
    """The registered model (None when cancelled) and what went into it."""

    model: ModelRow | None
    counts: dict[str, Any]
    metrics: dict[str, Any]
    cancelled: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Held:
    name: str
    truth: dict[int, str]
    texts: dict[int, str]


def _held_out(store: Store, name: str | None, rule: str, field_name: str) -> _Held | None:
    if not name:
        return None
    row = require_set(store, name)
    truth = {i: lb for i, lb in final_labels(store, row, rule).items() if lb in BINARY}
    if not truth:
        raise TrainingRefused(f"set {name!r} has no settled perf/non-perf labels yet")
    return _Held(name, truth, commit_texts(store, truth, field_name))


def gather(store: Store, request: TrainRequest) -> tuple[list[LabeledItem], dict[str, Any]]:
    """Training items (repository-disjoint from dev and eval) and their counts."""
    if not request.teacher and not request.vote_sets:
        raise TrainingRefused(
            "nothing to learn from: give teacher labels (--from teacher:MODEL) and/or"
            " human votes (--votes SET)"
        )
    if request.kind not in KINDS:
        raise TrainingRefused(f"unknown kind {request.kind!r}: use {', '.join(KINDS)}")
    counts: dict[str, Any] = {}
    teacher: list[LabeledItem] = []
    if request.teacher:
        if not request.teacher.startswith("teacher:"):
            raise TrainingRefused(f"--from takes teacher:MODEL, not {request.teacher!r}")
        selection = teacher_items(store, request.teacher, request.tau / 100.0)
        if not selection.predicted:
            raise TrainingRefused(f"no predictions by {request.teacher}: run `curator teach`")
        teacher = selection.items
        counts["teacher"] = {
            "predicted": selection.predicted,
            "kept": len(selection.items),
            "below_tau": selection.below_tau,
            "other_label": selection.other_label,
        }
    try:
        sets = [require_set(store, name) for name in request.vote_sets]
        human = human_items(store, sets, request.rule)
    except (SetError, ValueError) as exc:
        raise TrainingRefused(str(exc)) from exc
    if request.vote_sets:
        counts["human"] = {"settled": len(human), "sets": list(request.vote_sets)}
    items = combine(teacher, human)
    held_ids: set[int] = set()
    for name in (request.dev_set, request.eval_set):
        if name:
            try:
                held_ids.update(set_item_ids(store, require_set(store, name).id))
            except SetError as exc:
                raise TrainingRefused(str(exc)) from exc
    gathered = len(items)
    if request.exclude_overlap:
        items = [x for x in items if x.item_id not in held_ids]
    overlap = repository_overlap(store, [x.item_id for x in items], held_ids)
    if overlap:
        if not request.exclude_overlap:
            shown = ", ".join(f"{src} ({n} items)" for src, n in list(overlap.items())[:5])
            more = f" and {len(overlap) - 5} more" if len(overlap) > 5 else ""
            raise TrainingRefused(
                f"training data shares {len(overlap)} repositories with the dev/eval sets:"
                f" {shown}{more}; use repository-disjoint sets (`curator set split`) or"
                " --exclude-overlap to drop those training items"
            )
        items = drop_sources(store, items, overlap)
    if gathered != len(items):
        counts["dropped_for_overlap"] = gathered - len(items)
    counts["train"] = label_counts(items)
    counts["train_total"] = len(items)
    if not items:
        raise TrainingRefused("no training examples left (check --tau, the sets' votes)")
    if len({x.label for x in items}) < 2:
        raise TrainingRefused(f"all {len(items)} training examples say {items[0].label!r}")
    return items, counts


def _examples(
    store: Store, items: Sequence[LabeledItem], field_name: str
) -> tuple[list[Example], int]:
    texts = commit_texts(store, [x.item_id for x in items], field_name)
    sources = item_sources(store, texts)
    examples = [
        Example(
            texts[x.item_id],
            int(x.label == POSITIVE),
            x.p_positive,
            sources.get(x.item_id, ""),
            x.item_id,
            x.origin,
        )
        for x in items
        if x.item_id in texts
    ]
    return examples, len(items) - len(examples)


def _score(labeler: Labeler, held: _Held) -> Evaluation:
    ids = sorted(held.texts)
    predicted = labeler.predict([held.texts[i] for i in ids])
    return evaluate(
        labeler.name, held.truth, {i: p.label for i, p in zip(ids, predicted, strict=True)}, BINARY
    )


def run_training(
    store: Store,
    request: TrainRequest,
    progress: Callable[[TrainProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> TrainOutcome:
    """Train, score and register one model; raises :class:`TrainingRefused` on bad input."""
    config = request.config
    items, counts = gather(store, request)
    try:
        dev = _held_out(store, request.dev_set, request.rule, config.input_field)
        test = _held_out(store, request.eval_set, request.rule, config.input_field)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    examples, missing = _examples(store, items, config.input_field)
    if missing:
        counts["without_text"] = missing
    if not examples:
        raise TrainingRefused("none of the training items is a commit with text")
    config, examples, notes = _warm_start(store, request, examples, counts)
    root = models_dir(store)
    root.mkdir(parents=True, exist_ok=True)
    staging = root / f".staging-{uuid.uuid4().hex[:12]}"
    try:
        if request.kind == STUDENT:
            dev_examples = (
                [
                    hard_example(dev.texts[i], int(dev.truth[i] == POSITIVE))
                    for i in sorted(dev.texts)
                ]
                if dev
                else []
            )
            result = train_student(config, examples, dev_examples, staging, progress, cancel)
            if result.cancelled:
                return TrainOutcome(None, counts, {}, cancelled=True, notes=notes)
            labeler: Labeler = StudentLabeler(staging, "staged", batch_size=64)
            training: dict[str, Any] = {
                "epochs_run": result.epochs_run,
                "best_epoch": result.best_epoch,
                "best_dev_f1": result.best_dev_f1,
                "final_loss": result.final_loss,
                "seconds": round(result.seconds, 1),
                "history": result.history,
            }
            oof: list[float] | None = None
        else:
            labeler, training, oof = _train_tfidf(request, examples, staging)
        metrics: dict[str, Any] = {"training": training}
        for label, held in (("dev", dev), ("eval", test)):
            if held is not None:
                metrics[label] = {"set": held.name, **_score(labeler, held).as_json()}
        if oof is not None:
            truth = {e.item_id: LABELS[e.label] for e in examples if e.item_id is not None}
            guessed = {
                e.item_id: tfidf.to_prediction(p).label
                for e, p in zip(examples, oof, strict=True)
                if e.item_id is not None
            }
            metrics["out_of_fold"] = evaluate("oof", truth, guessed, BINARY).as_json()
        params = {
            "kind": request.kind,
            "teacher": request.teacher,
            "tau": request.tau if request.teacher else None,
            "votes": list(request.vote_sets),
            "dev": request.dev_set,
            "eval": request.eval_set,
            "rule": request.rule,
            "counts": counts,
            "config": asdict(config),
        }
        if request.from_model:
            params["warm_start"] = counts["replay"]["from"]
        if request.learning_curve is not None:
            params["learning_curve"] = request.learning_curve
            stage_learning_curve(staging, request.learning_curve)
        base = config.resolved_base() if request.kind == STUDENT else "tfidf"
        model = register_model(store, request.kind, base, params, metrics, staging)
        if oof is not None:
            _store_out_of_fold(store, model.name, examples, oof)
        return TrainOutcome(model, counts, metrics, notes=notes)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _warm_start(
    store: Store, request: TrainRequest, examples: list[Example], counts: dict[str, Any]
) -> tuple[TrainConfig, list[Example], list[str]]:
    """The config and examples to train on: unchanged, or warm-started with replay."""
    if not request.from_model:
        return request.config, examples, []
    if request.kind != STUDENT:
        raise TrainingRefused(f"--from-model warm-starts students only, not {request.kind}")
    try:
        banned = held_out_sources(store, (request.dev_set, request.eval_set))
        warm = prepare_warm_start(
            store, request.from_model, request.replay, request.config, examples, banned
        )
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    counts["replay"] = {"from": warm.model, **warm.counts}
    return warm.config, warm.examples, [warm.note] if warm.note else []


def perf_f1(scores: object) -> float | None:
    """F1 of the perf class from scores in ``curator eval --json``'s shape (a model's
    ``metrics["dev"]``, ``metrics["eval"]``...), None when absent."""
    if not isinstance(scores, dict):
        return None
    try:
        value = scores["per_class"]["perf"]["f1"]
    except (KeyError, TypeError):
        return None
    return float(value) if isinstance(value, int | float) else None


def train_total(model: ModelRow) -> int | None:
    """How many examples a registered model was trained on, when recorded."""
    counts = model.params.get("counts")
    total = counts.get("train_total") if isinstance(counts, dict) else None
    return total if isinstance(total, int) else None


def previous_model(store: Store, new: ModelRow) -> ModelRow | None:
    """What ``new`` would replace: its family's current version, else the newest older one."""
    current = current_model(store, new.family)
    if current is not None and current.name != new.name:
        return current
    older = [m for m in list_models(store, new.family) if m.version < new.version]
    return older[-1] if older else None


def score_model(
    store: Store, model: ModelRow, set_name: str, rule: str = "majority"
) -> dict[str, Any]:
    """A registered model's scores on a set's settled labels, predicted afresh (the set
    may have gained votes since the model's own evaluation)."""
    # Imported here: the registry pulls in torch only when a student is loaded.
    from engines.labelers.registry import load_labeler

    field_name = model.params.get("config", {}).get("input_field", "model_input")
    try:
        held = _held_out(store, set_name, rule, field_name)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    assert held is not None
    labeler = load_labeler(store, model.name)
    return {"set": held.name, **_score(labeler, held).as_json()}


def _train_tfidf(
    request: TrainRequest, examples: Sequence[Example], staging: Path
) -> tuple[Labeler, dict[str, Any], list[float] | None]:
    kind = request.kind.split("-", 1)[1]
    texts = [e.text for e in examples]
    labels = [e.label for e in examples]
    seed = request.config.seed
    model = tfidf.fit(kind, texts, labels, seed)
    tfidf.save(
        model, staging, {"kind": kind, "input_field": request.config.input_field, "seed": seed}
    )
    oof = None
    human = [e for e in examples if e.origin == "human"]
    if human and len(human) == len(examples):
        try:
            oof = tfidf.out_of_fold(kind, texts, labels, [e.source for e in examples], seed=seed)
        except ValueError:
            oof = None
    return tfidf.TfidfLabeler(staging, "staged"), {"examples": len(examples)}, oof


def _store_out_of_fold(
    store: Store, name: str, examples: Sequence[Example], scores: Sequence[float]
) -> None:
    """Out-of-fold verdicts on the training items, so evaluating the model on the set it
    learned from measures unseen data."""
    rows = []
    for e, p in zip(examples, scores, strict=True):
        if e.item_id is None:
            continue
        verdict = tfidf.to_prediction(p)
        rows.append(
            (
                e.item_id,
                PredictionRow(name, verdict.label, verdict.score, {**verdict.details, "oof": True}),
            )
        )
    add_predictions(store, rows)
