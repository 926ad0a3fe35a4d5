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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
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
    describe_overlap,
    drop_sources,
    human_items,
    label_counts,
    repository_overlap,
    teacher_items,
    unsettled_text,
    weak_items,
)
from curator.diff_choice import choose_diff_decision, inherited_diff_decision, keep_diff_reader
from curator.warm_start import (
    held_out_sources,
    prepare_warm_start,
    resolve_start,
    stage_learning_curve,
    start_leak,
)
from engines.abandoned import owned_folder, remove_abandoned
from engines.labelers import tfidf
from engines.labelers.base import Labeler
from engines.labelers.calibration import (
    DEFAULT_THRESHOLD,
    HOLDOUT_NEAR_TIE,
    decide,
    parse_objective,
)
from engines.labelers.diff_decision import DIFF_KEY, DiffDecision, read_diff_decision
from engines.labelers.inputs import diffs_learned, input_block, recorded_input, resolve_field
from engines.labelers.registry import RULE_LABELERS, TRAINED_FAMILIES
from engines.labelers.rule_floor import (
    apply_floor,
    floor_block,
    floor_flags,
    floor_terms,
    floored,
    rule_fires,
)
from engines.labelers.storing import predict_stored
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
from engines.labelers.student.data import stratified_holdout
from engines.labelers.student.diff_reader import diff_reader_of
from engines.labelers.student.infer import read_meta
from engines.labelers.student.infer import update_meta as update_student_meta
from engines.labelers.student.learned import CHOICES as PRIOR_EXAMPLE_CHOICES
from engines.labelers.student.learned import message_digest
from engines.labelers.student.prior import prior_diffs as start_prior_diffs
from engines.labelers.student.prior import prior_learned
from store import Store
from store.labeling_inputs import item_sources
from store.models import ModelRow, current_model, list_models, models_dir, register_model
from store.predictions import add_predictions
from store.records import PredictionRow
from store.sets import set_item_ids
from store.teaching import commit_texts, commits_with_diff

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
    same_repos: bool = False
    """Let the training items share repositories (never items) with the dev/eval sets:
    adapting to one project and scoring on its other commits."""
    config: TrainConfig = field(default_factory=TrainConfig)
    weak: str | None = None
    weak_weight: float = 0.3
    weak_min_confidence: float = 0.8
    weak_limit: int | None = None
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
        why = unsettled_text(store, row, rule)
        raise TrainingRefused(
            f"set {name!r} has no settled perf/non-perf labels yet" + (f": {why}" if why else "")
        )
    return _Held(name, truth, commit_texts(store, truth, field_name))


def gather(store: Store, request: TrainRequest) -> tuple[list[LabeledItem], dict[str, Any]]:
    """Training items (repository-disjoint from dev and eval) and their counts."""
    if not request.teacher and not request.vote_sets and not request.weak:
        raise TrainingRefused(
            "nothing to learn from: give teacher labels (--from teacher:MODEL), human votes"
            " (--votes SET) and/or weak labels (--weak LABELER)"
        )
    if request.kind not in KINDS:
        raise TrainingRefused(f"unknown kind {request.kind!r}: use {', '.join(KINDS)}")
    drops = request.exclude_overlap or request.same_repos
    check_roles(request.vote_sets, request.dev_set, request.eval_set, drops)
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
    if request.exclude_overlap or request.same_repos:
        items = [x for x in items if x.item_id not in held_ids]
    overlap = repository_overlap(store, [x.item_id for x in items], held_ids)
    if overlap and request.same_repos:
        counts["shared_repositories"] = len(overlap)
    elif overlap:
        if not request.exclude_overlap:
            raise TrainingRefused(
                f"training data shares {len(overlap)} repositories with the dev/eval sets"
                " (`curator set split` makes disjoint sets; or --exclude-overlap, or"
                f" --same-repos): {describe_overlap(overlap)}"
            )
        items = drop_sources(store, items, overlap)
    if gathered != len(items):
        counts["dropped_for_overlap"] = gathered - len(items)
    if request.weak:
        items = combine_weak(items, weak_examples(store, request, held_ids, counts))
    counts["origins"] = dict(sorted(Counter(x.origin for x in items).items()))
    counts["train"] = label_counts(items)
    counts["train_total"] = len(items)
    if not items:
        raise TrainingRefused(_nothing_left(request, counts, _waiting(store, request)))
    if len({x.label for x in items}) < 2:
        raise TrainingRefused(
            f"all {len(items)} training examples ({_sources(request)}) say"
            f" {items[0].label!r}: a labeler learns from both perf and non-perf examples"
        )
    return items, counts


def _sources(request: TrainRequest) -> str:
    """Where the training examples came from, as the options that named them."""
    named = [f"--from {request.teacher}"] if request.teacher else []
    if request.vote_sets:
        named.append(f"--votes {', '.join(request.vote_sets)}")
    if request.weak:
        named.append(f"--weak {request.weak}")
    return "; ".join(named)


def check_roles(
    vote_sets: Sequence[str], dev_set: str | None, eval_set: str | None, drops: bool = False
) -> None:
    """Refuse a set named both as training votes and as --dev/--eval (unless ``drops``:
    --same-repos or --exclude-overlap leave the held-out items out of training), or as
    both --dev and --eval: the scores would be measured on what the model learned from
    or on what chose its threshold, and look better than they are."""
    for flag, name in (("--dev", dev_set), ("--eval", eval_set)):
        if name and name in vote_sets and not drops:
            raise TrainingRefused(
                f"{flag} {name} is also a --votes set: a model cannot be scored on the items"
                " it learns from (`curator set split` makes disjoint sets; --same-repos"
                " learns from the other votes only)"
            )
    if dev_set and dev_set == eval_set:
        raise TrainingRefused(
            f"--dev and --eval both name {dev_set}: scores on the set that chose the"
            " threshold overstate; give --eval another set, or leave it out (dev scores are"
            " reported)"
        )


def _waiting(store: Store, request: TrainRequest) -> list[str]:
    """For each --votes set with items that are not settled, why (more votes needed,
    conflicts) and the command that settles them."""
    texts = (
        (n, unsettled_text(store, require_set(store, n), request.rule)) for n in request.vote_sets
    )
    return [f"{n}: {t}" for n, t in texts if t]


def _nothing_left(
    request: TrainRequest, counts: dict[str, Any], waiting: Sequence[str] = ()
) -> str:
    """Why no training example is left, from the counts of each source, in one line."""
    why: list[str] = []
    teacher = counts.get("teacher")
    if isinstance(teacher, dict):
        why.append(
            f"{request.teacher}: {teacher['kept']} of its {teacher['predicted']} answers kept"
            f" at --tau {request.tau:g}"
        )
    human = counts.get("human")
    if isinstance(human, dict):
        why.append(
            f"--votes {', '.join(request.vote_sets)}: {human['settled']} items with a settled"
            " perf/non-perf label (skips and ties count as none)"
        )
        why.extend(waiting)
    dropped = counts.get("dropped_for_overlap")
    if dropped:
        why.append(f"{dropped} dropped as items or repositories of --dev/--eval")
    if (weak := weak_note(counts)) is not None:
        why.append(weak)
    return "no training examples left: " + "; ".join(why)


def weak_examples(
    store: Store, request: TrainRequest, held_ids: set[int], counts: dict[str, Any]
) -> list[LabeledItem]:
    """``request.weak``'s confident predictions on unvoted commits outside the held-out
    sets and their repositories (dropped, not refused: nobody chose these items)."""
    # Imported here: annotation.sets pulls in the sampling code only when needed.
    from annotation.sets import resolve_latest

    if not 0.0 <= request.weak_weight <= 1.0:
        raise TrainingRefused(f"--weak-weight must lie in 0..1, not {request.weak_weight}")
    assert request.weak is not None
    try:
        name = resolve_latest(store, request.weak)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    # The limit applies after the repository check below.
    selection = weak_items(store, name, request.weak_min_confidence, request.weak_weight, held_ids)
    if not selection.predicted:
        raise TrainingRefused(f"no predictions by {name}: {how_to_predict(name)}")
    items = selection.items
    overlap = repository_overlap(store, [x.item_id for x in items], held_ids)
    disjoint = drop_sources(store, items, overlap) if overlap else items
    kept = disjoint[: request.weak_limit] if request.weak_limit is not None else disjoint
    counts["weak"] = {
        "labeler": name,
        "predicted": selection.predicted,
        "voted_or_held_out": selection.voted_or_held,
        "below_confidence": selection.below_confidence,
        "other_label": selection.other_label,
        "dropped_for_overlap": len(items) - len(disjoint),
        "kept": len(kept),
        "weight": request.weak_weight,
        "min_confidence": request.weak_min_confidence,
    }
    return kept


def how_to_predict(name: str) -> str:
    """How to get ``name``'s predictions on the unvoted commits --weak learns from."""
    if name.startswith("teacher:"):
        model = name.removeprefix("teacher:")
        return f"ask the teacher with `curator teach --unlabeled --model {model}`"
    family = name.rpartition("@")[0]
    if family not in (*TRAINED_FAMILIES, *RULE_LABELERS):
        known = ", ".join(f"{f}@N" for f in (*TRAINED_FAMILIES, *RULE_LABELERS))
        return f"{name!r} names no labeler ({known} or teacher:MODEL)"
    return f"run `curator predict --labeler {name} --unlabeled`"


def weak_note(counts: dict[str, Any]) -> str | None:
    """One line when ``--weak`` gave no training example, saying why from
    ``counts["weak"]``; None when it gave some (or was not asked for)."""
    weak = counts.get("weak")
    if not isinstance(weak, dict) or weak.get("kept"):
        return None
    name, predicted = weak.get("labeler"), weak.get("predicted", 0)
    reasons = (
        (weak.get("voted_or_held_out", 0), "on commits someone voted on or in --dev/--eval"),
        (weak.get("below_confidence", 0), f"scored below {weak.get('min_confidence')}"),
        (weak.get("other_label", 0), "neither perf nor non-perf"),
        (weak.get("dropped_for_overlap", 0), "from the repositories of --dev/--eval"),
    )
    why = [f"{n:,} {text}" for n, text in reasons if n]
    if not weak.get("weight"):
        why.append("--weak-weight 0 keeps none")
    if not why:
        why.append("none left after the limits")
    return (
        f"--weak {name}: none of its {predicted:,} predictions became a training example"
        f" ({'; '.join(why)})"
    )


def combine_weak(items: Sequence[LabeledItem], weak: Sequence[LabeledItem]) -> list[LabeledItem]:
    """Teacher and human items plus the weak ones on items they do not already label."""
    have = {x.item_id for x in items}
    return sorted([*items, *(x for x in weak if x.item_id not in have)], key=lambda x: x.item_id)


@dataclass
class _Data:
    """The training examples with the input resolved, and what reads them."""

    examples: list[Example]
    config: TrainConfig
    record: dict[str, Any]
    missing: int
    learned: frozenset[int] = frozenset()
    """Items whose message the perf prior the student starts from already learned (to
    be left out of its fine-tuning)."""


def _examples(
    store: Store,
    items: Sequence[LabeledItem],
    config: TrainConfig,
    kind: str,
    start: ModelRow | None = None,
) -> _Data:
    """Examples in the resolved input field (``auto``: messages when no training commit
    had a diff and the student starts neither from a perf prior nor from a model
    (``start``, a warm start) that learned from diffs, else message || diff); with
    message || diff and diff dropout on, an example that has a diff also carries its
    message alone (the student drops the diff in some epochs; TF-IDF learns from both
    copies)."""
    ids = [x.item_id for x in items]
    messages = commit_texts(store, ids, "message")
    with_diff = commits_with_diff(store, list(messages))
    present = [x for x in items if x.item_id in messages]
    n_diff = sum(1 for x in present if x.item_id in with_diff)
    prior_diffs = start_prior_diffs(config) if kind == STUDENT and start is None else 0
    start_diffs = diffs_learned(recorded_input(start.params)) if start is not None else 0
    try:
        field_name = resolve_field(config.input_field, n_diff, prior_diffs + start_diffs)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    texts = messages if field_name == "message" else commit_texts(store, ids, field_name)
    dropout = config.diff_dropout if field_name == "model_input" and n_diff else 0.0
    sources = item_sources(store, texts)
    examples = [
        Example(
            texts[x.item_id],
            int(x.label == POSITIVE),
            x.p_positive,
            sources.get(x.item_id, ""),
            x.item_id,
            x.origin,
            messages[x.item_id] if dropout > 0 and x.item_id in with_diff else None,
            x.weight,
        )
        for x in present
    ]
    copies = sum(1 for e in examples if e.message is not None) if kind != STUDENT else 0
    record = input_block(
        field_name, config.input_field, n_diff, len(present) - n_diff, dropout, copies
    )
    if copies:
        record["diff_dropout"] = 0.0
    if field_name == "model_input" and prior_diffs:
        record["prior_examples_with_diff"] = prior_diffs
    if field_name == "model_input" and start_diffs:
        record["start_examples_with_diff"] = start_diffs
    resolved = replace(config, input_field=field_name)
    skipping = kind == STUDENT and start is None
    learned = _learned_by_prior(config, messages) if skipping else frozenset()
    return _Data(examples, resolved, record, len(items) - len(present), learned)


def _learned_by_prior(config: TrainConfig, messages: dict[int, str]) -> frozenset[int]:
    """The items whose message the prior a student starts from learned, when it skips
    them (``prior_examples`` ``skip``)."""
    if config.prior_examples not in PRIOR_EXAMPLE_CHOICES:
        choices = ", ".join(PRIOR_EXAMPLE_CHOICES)
        raise TrainingRefused(f"prior examples {config.prior_examples!r}: use {choices}")
    if config.prior_examples != "skip":
        return frozenset()
    try:
        digests = prior_learned(config)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    if not digests:
        return frozenset()
    return frozenset(i for i, text in messages.items() if message_digest(text) in digests)


PRIOR_LEAK_SHARE = 0.05
"""The share of a held-out set's items whose message the perf prior learned from above
which training says the scores there overstate."""


def _prior_leak(
    store: Store, config: TrainConfig, dev: _Held | None, test: _Held | None
) -> list[str]:
    """A line for --dev and one for --eval when the perf prior the student starts from
    learned the messages of a share of their items (``PRIOR_LEAK_SHARE`` or more: a few
    short messages, "Update README", recur across projects): its scores there overstate
    (and on --dev, the threshold and the stopping epoch lean on them)."""
    try:
        digests = prior_learned(config)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    found = []
    for flag, held in (("--dev", dev), ("--eval", test)):
        if held is None or not digests:
            continue
        messages = commit_texts(store, list(held.truth), "message")
        learned = sum(1 for text in messages.values() if message_digest(text) in digests)
        if learned and learned >= PRIOR_LEAK_SHARE * len(held.truth):
            found.append(
                f"the perf prior this student starts from learned the messages of {learned:,}"
                f" of the {len(held.truth):,} settled items of {flag} {held.name}: scores there"
                " overstate (--prior none starts without it)"
            )
    return found


def _skip_learned(
    examples: list[Example], learned: frozenset[int], counts: dict[str, Any]
) -> tuple[list[Example], list[Example] | None]:
    """The examples to fine-tune on, without those the prior learned, and the ones to
    keep as the replay sample (None: the same)."""
    if not learned:
        return examples, None
    kept = [e for e in examples if e.item_id not in learned]
    counts["prior_learned"] = {"skipped": len(examples) - len(kept), "kept": len(kept)}
    counts["train"] = _label_counts(kept)
    counts["train_total"] = len(kept)
    return kept, examples


def _score(store: Store, labeler: Labeler, held: _Held) -> Evaluation:
    found = predict_stored(store, labeler, sorted(held.texts))
    return evaluate(labeler.name, held.truth, {i: p.label for i, p in found}, BINARY)


def run_training(
    store: Store,
    request: TrainRequest,
    progress: Callable[[TrainProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> TrainOutcome:
    """Train, score and register one model; raises :class:`TrainingRefused` on bad input."""
    try:
        parse_objective(request.config.threshold_objective)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    items, counts = gather(store, request)
    start = _start_of(store, request)
    data = _examples(store, items, request.config, request.kind, start)
    config = data.config
    try:
        dev = _held_out(store, request.dev_set, request.rule, config.input_field)
        test = _held_out(store, request.eval_set, request.rule, config.input_field)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    if data.missing:
        counts["without_text"] = data.missing
    if not data.examples:
        raise TrainingRefused("none of the training items is a commit with text")
    examples, holdout = data.examples, []
    if request.kind == STUDENT and dev is None:
        examples, holdout = stratified_holdout(examples, config.holdout, config.seed)
    if holdout:
        counts["held_out"] = {"fraction": config.holdout, **_label_counts(holdout)}
        counts["train"] = _label_counts(examples)
        counts["train_total"] = len(examples)
    examples, replay = _skip_learned(examples, data.learned, counts)
    config, examples, notes = _warm_start(store, request, start, config, examples, counts)
    if request.kind == STUDENT and start is None:
        notes.extend(_prior_leak(store, config, dev, test))
    if (weak := weak_note(counts)) is not None:
        notes.insert(0, weak)
    root = models_dir(store)
    root.mkdir(parents=True, exist_ok=True)
    staging = staging_folder(root)
    try:
        if request.kind == STUDENT:
            fallback = _start_threshold(start)
            inherited = inherited_diff_decision(start, config)
            trained = _train_student(
                config,
                examples,
                dev,
                holdout,
                fallback,
                staging,
                progress,
                cancel,
                replay,
                inherited,
            )
            if trained is None:
                return TrainOutcome(None, counts, {}, cancelled=True, notes=notes)
        else:
            trained = _train_tfidf(request.kind, config, examples, dev, staging)
        labeler, training, oof, decision = trained
        _record_decision(request.kind, staging, labeler, data.record, decision)
        metrics: dict[str, Any] = {"training": training}
        floor = floor_block(config.rule_floor)
        rules: dict[str, Any] = {}  # the keyword rules on the same items, part by part
        for label, held in (("dev", dev), ("eval", test)):
            if held is not None:
                metrics[label] = {"set": held.name, **_score(store, labeler, held).as_json()}
                rules[label] = {"set": held.name, **_rules_on(held.truth, held.texts, floor)}
        if oof is not None:
            metrics["out_of_fold"] = _scores_at(examples, oof, decision["threshold"], "oof")
            rules["out_of_fold"] = _rules_on(*_truth_and_texts(examples), floor)
        if "holdout" in training:
            metrics["holdout"] = training.pop("holdout")
            rules["holdout"] = _rules_on(*_truth_and_texts(holdout), floor)
        if rules:
            metrics["rules"] = rules
        params = {
            "kind": request.kind,
            "teacher": request.teacher,
            "tau": request.tau if request.teacher else None,
            "votes": list(request.vote_sets),
            "dev": request.dev_set,
            "eval": request.eval_set,
            "rule": request.rule,
            "counts": counts,
            "config": _config_record(config, training),
            "input": data.record,
            "decision": decision,
            "rule_floor": floor_block(config.rule_floor),
        }
        if request.kind == STUDENT and (reader := diff_reader_of(read_meta(staging))):
            params["diff_reader"] = reader
        if request.from_model:
            params["warm_start"] = counts["replay"]["from"]
        if request.learning_curve is not None:
            params["learning_curve"] = request.learning_curve
            stage_learning_curve(staging, request.learning_curve)
        if cancel is not None and cancel.is_set():  # a TF-IDF fit, or scoring, ran past it
            return TrainOutcome(None, counts, {}, cancelled=True, notes=notes)
        base = config.resolved_base() if request.kind == STUDENT else "tfidf"
        model = register_model(store, request.kind, base, params, metrics, staging)
        if oof is not None:
            _store_out_of_fold(store, model.name, examples, oof, decision["threshold"])
        return TrainOutcome(model, counts, metrics, notes=notes)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def staging_folder(root: Path) -> Path:
    """A new folder to stage a model in, ``root/.staging-HOST+PID+...``; the folders a
    killed run (a training child killed from the app, an out-of-memory kill) left there
    are removed first, each of them up to a model's weights."""
    root.mkdir(parents=True, exist_ok=True)
    remove_abandoned(root, "staging", 0)
    return owned_folder(root, "staging")


def _config_record(config: TrainConfig, training: dict[str, Any]) -> dict[str, Any]:
    """The config as stored with the model, with the step size the student took when
    the run chose it (``lr`` None)."""
    record = asdict(config)
    if record.get("lr") is None and training.get("lr") is not None:
        record["lr"] = training["lr"]
    return record


_Trained = tuple[Labeler, dict[str, Any], list[float] | None, dict[str, Any]]
"""The staged labeler, its training summary, out-of-fold scores to store (TF-IDF on
human votes only) and its decision block."""


def _label_counts(examples: Sequence[Example]) -> dict[str, int]:
    return {LABELS[y]: n for y in (1, 0) if (n := sum(1 for e in examples if e.label == y))}


def _dev_examples(held: _Held) -> list[Example]:
    return [hard_example(held.texts[i], int(held.truth[i] == POSITIVE)) for i in sorted(held.texts)]


def _start_threshold(start: ModelRow | None) -> tuple[float, str]:
    """The threshold a student keeps when its held-out slice is too small to choose one
    on: the warm start's own, else the default."""
    if start is None:
        return DEFAULT_THRESHOLD, "default"
    decision = read_meta(start.path or "").get("decision") or {}
    return float(decision.get("threshold", DEFAULT_THRESHOLD)), f"from {start.name}"


def _train_student(
    config: TrainConfig,
    examples: Sequence[Example],
    dev: _Held | None,
    holdout: Sequence[Example],
    fallback: tuple[float, str],
    staging: Path,
    progress: Callable[[TrainProgress], None] | None,
    cancel: threading.Event | None,
    replay: Sequence[Example] | None = None,
    inherited: DiffDecision | None = None,
) -> _Trained | None:
    """Fine-tune on ``examples``, stop early on the dev set and choose the threshold
    there (without one, the held-out slice chooses the threshold only: a slice of the
    training source says little about when to stop for another); None when cancelled.
    ``replay``: the examples to keep the replay sample of, when not ``examples``.
    ``inherited``: the diff decision of where it started (curator.diff_choice)."""
    tuning = _dev_examples(dev) if dev else list(holdout)
    early_stop = tuning if dev else []
    result = train_student(config, examples, early_stop, staging, progress, cancel, replay)
    if result.cancelled:
        return None
    update_student_meta(staging, rule_floor=floor_block(config.rule_floor))
    reader = keep_diff_reader(config, result.prior, examples, staging)
    if reader is not None:
        update_student_meta(staging, diff_reader=reader)
    labeler = StudentLabeler(staging, "staged", batch_size=64)
    training: dict[str, Any] = {
        "epochs_run": result.epochs_run,
        "best_epoch": result.best_epoch,
        "best_dev_f1": result.best_dev_f1,
        "final_loss": result.final_loss,
        "seconds": round(result.seconds, 1),
        "history": result.history,
        "prior": result.prior,
        "lr": result.lr,
    }
    texts = [e.text for e in tuning]
    raw = labeler.model_probabilities(texts) if tuning else []
    floor = floor_block(config.rule_floor)
    probs = apply_floor(raw, texts, floor) if floor else raw
    flags = floor_flags(texts, floor)
    truth = [e.label for e in tuning]
    decision = student_decision(
        probs, truth, config.threshold_objective, dev.name if dev else None, flags, fallback
    )
    diff = choose_diff_decision(
        raw, texts, truth, floor, config.threshold_objective, dev.name if dev else None, inherited
    )
    if diff is not None:
        decision[DIFF_KEY] = diff
    if not dev and tuning:  # how the model does on its held-out slice, at that threshold
        decided = floored(probs, flags) if flags is not None else probs
        training["holdout"] = _scores_at(tuning, decided, decision["threshold"])
    return labeler, training, None, decision


def student_decision(
    probs: Sequence[float],
    labels: Sequence[int],
    objective: str,
    dev_name: str | None,
    flags: Sequence[bool] | None,
    fallback: tuple[float, str],
) -> dict[str, Any]:
    """A student's decision block: chosen on its dev set ``dev_name`` as given, else on
    the held-out slice of its votes, where ``fallback`` stands in for a slice too small
    to choose on and near ties go to 0.5 (``HOLDOUT_NEAR_TIE``)."""
    if dev_name:
        return decide(probs, labels, objective, f"dev:{dev_name}", flags)
    return decide(probs, labels, objective, "holdout", flags, fallback, HOLDOUT_NEAR_TIE)


def _train_tfidf(
    family: str,
    config: TrainConfig,
    examples: Sequence[Example],
    dev: _Held | None,
    staging: Path,
) -> _Trained:
    """Fit on ``examples`` (plus a message-only copy of each one that carries its
    message: diff dropout's equivalent); the threshold is chosen on the dev set, else on
    out-of-fold scores over the training examples."""
    kind = family.split("-", 1)[1]
    texts = [e.text for e in examples]
    labels = [e.label for e in examples]
    alternates = [e.message for e in examples]
    seed = config.seed
    weights = [e.weight for e in examples]
    fit_texts, fit_labels, fit_weights = tfidf.with_alternates(texts, labels, alternates, weights)
    uniform = all(w == 1.0 for w in weights)
    floor = floor_block(config.rule_floor)
    # a model that reads message || diff reads the two apart (tfidf_fields)
    features = "fields" if config.input_field == "model_input" else "text"
    flag = floor_terms(floor).version if floor and features == "fields" else None
    model = tfidf.fit(
        kind, fit_texts, fit_labels, seed, None if uniform else fit_weights, features, flag
    )
    tfidf.save(
        model,
        staging,
        {
            "kind": kind,
            "input_field": config.input_field,
            "seed": seed,
            "rule_floor": floor,
            "features": features,
            "rule_flag": flag,
        },
    )
    labeler = tfidf.TfidfLabeler(staging, "staged")
    all_human = all(e.origin == "human" for e in examples)
    oof = oof_flags = None
    if dev is None or all_human:
        groups = [e.source for e in examples]
        try:
            oof = tfidf.out_of_fold(
                kind, texts, labels, groups, 5, seed, alternates, features, flag
            )
        except ValueError:
            oof = None
        if oof is not None and floor:
            oof_flags = floor_flags(texts, floor)  # the rules run once over the texts
            oof = floored(oof, oof_flags or [])
    if dev is not None:
        ids = sorted(dev.texts)
        dev_texts = [dev.texts[i] for i in ids]
        probs = labeler.probabilities(dev_texts)
        truth = [int(dev.truth[i] == POSITIVE) for i in ids]
        flags = floor_flags(dev_texts, floor)
        decision = decide(probs, truth, config.threshold_objective, f"dev:{dev.name}", flags)
    else:
        decision = decide(
            oof or [], labels if oof else [], config.threshold_objective, "out_of_fold", oof_flags
        )
    copies = sum(1 for a in alternates if a is not None)
    training = {"examples": len(examples), "message_copies": copies, "features": features}
    return labeler, training, oof if all_human else None, decision


def _record_decision(
    kind: str,
    staging: Path,
    labeler: Labeler,
    record: dict[str, Any],
    decision: dict[str, Any],
) -> None:
    """The input block and the decision into the model's metadata; the staged labeler
    takes the threshold at once (dev and eval scores below use it)."""
    update = update_student_meta if kind == STUDENT else tfidf.update_meta
    update(staging, input=record, decision=decision)
    labeler.threshold = decision["threshold"]  # type: ignore[attr-defined]
    labeler.diff = read_diff_decision(decision.get(DIFF_KEY))  # type: ignore[attr-defined]


def _scores_at(
    examples: Sequence[Example], probs: Sequence[float], threshold: float, name: str = "model"
) -> dict[str, Any]:
    """Scores of ``probs`` (one per example) decided at ``threshold``, item by item."""
    truth, _ = _truth_and_texts(examples)
    guessed = {
        e.item_id: tfidf.to_prediction(p, threshold).label
        for e, p in zip(examples, probs, strict=True)
        if e.item_id is not None
    }
    return evaluate(name, truth, guessed, BINARY).as_json()


def _truth_and_texts(examples: Sequence[Example]) -> tuple[dict[int, str], dict[int, str]]:
    truth = {e.item_id: LABELS[e.label] for e in examples if e.item_id is not None}
    texts = {e.item_id: e.text for e in examples if e.item_id is not None}
    return truth, texts


def _rules_on(
    truth: dict[int, str], texts: dict[int, str], floor: dict[str, Any] | None
) -> dict[str, Any]:
    """The keyword rules (the floor's list, else the current one) on the same items: the
    labeler every trained model must not fall below."""
    terms = floor_terms(floor)
    guessed = {i: LABELS[int(rule_fires(texts[i], terms))] for i in texts}
    return evaluate(f"keyword@{terms.version}", truth, guessed, BINARY).as_json()


def _start_of(store: Store, request: TrainRequest) -> ModelRow | None:
    """The student a warm start begins from, resolved once for the run (None without
    ``--from-model``); only students warm-start."""
    if not request.from_model:
        return None
    if request.kind != STUDENT:
        raise TrainingRefused(f"--from-model warm-starts students only, not {request.kind}")
    try:
        return resolve_start(store, request.from_model)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc


def _warm_start(
    store: Store,
    request: TrainRequest,
    start: ModelRow | None,
    config: TrainConfig,
    examples: list[Example],
    counts: dict[str, Any],
) -> tuple[TrainConfig, list[Example], list[str]]:
    """The config and examples to train on: unchanged, or warm-started with replay
    (old examples join the training part only, never the held-out slice)."""
    if start is None:
        return config, examples, []
    try:
        banned = held_out_sources(store, (request.dev_set, request.eval_set))
        warm = prepare_warm_start(start, request.replay, config, examples, banned)
    except ValueError as exc:
        raise TrainingRefused(str(exc)) from exc
    counts["replay"] = {"from": warm.model, **warm.counts}
    held = (("--dev", request.dev_set), ("--eval", request.eval_set))
    notes = [n for n in (start_leak(store, start, held), warm.note) if n]
    return warm.config, warm.examples, notes


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

    field_name = recorded_input(model.params)["field"]
    try:
        held = _held_out(store, set_name, rule, field_name)
    except SetError as exc:
        raise TrainingRefused(str(exc)) from exc
    assert held is not None
    labeler = load_labeler(store, model.name)
    return {"set": held.name, **_score(store, labeler, held).as_json()}


def _store_out_of_fold(
    store: Store,
    name: str,
    examples: Sequence[Example],
    scores: Sequence[float],
    threshold: float,
) -> None:
    """Out-of-fold verdicts on the training items, so evaluating the model on the set it
    learned from measures unseen data."""
    rows = []
    for e, p in zip(examples, scores, strict=True):
        if e.item_id is None:
            continue
        verdict = tfidf.to_prediction(p, threshold)
        rows.append(
            (
                e.item_id,
                PredictionRow(name, verdict.label, verdict.score, {**verdict.details, "oof": True}),
            )
        )
    add_predictions(store, rows)
