"""Training, registered models and promotions: what the Train screen asks of the
service.

A training run takes minutes and imports torch, which holds the interpreter lock: it
runs in a child process (:mod:`curator.training_child`) on a connection of its own and
never holds the app's lanes; the store is read before and written after training,
never during. The worker that started it only relays the child's reports.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from curator.adaptation import CurvePoint, curve_points
from curator.charts import HOW_TO_SIMULATE, Chart, ChartError, active_learning_chart
from curator.training import (
    TrainingRefused,
    TrainOutcome,
    TrainRequest,
    previous_model,
    run_training,
    score_model,
)
from curator.training_child import Report, run_in_child
from curator.tui.service.lanes import ServiceBase
from engines.labelers.student import FAMILY as STUDENT
from engines.labelers.student import TrainProgress
from engines.labelers.student.bases import resolve_base
from store import Store, open_store
from store.models import ModelRow, Promotion, current_model, list_models, promote_model
from store.teaching import teacher_names


@dataclass(frozen=True)
class LearningCurve:
    """A registered model's learning curve: F1 on ``eval_set`` per number of new votes,
    warm-started from ``from_model`` (the n=0 point)."""

    model: str
    from_model: str
    eval_set: str
    points: list[CurvePoint]


@dataclass(frozen=True)
class Comparison:
    """The new model and the one it would replace, scored on the same set."""

    new: ModelRow
    new_scores: dict[str, Any] | None
    previous: ModelRow | None
    previous_scores: dict[str, Any] | None
    note: str = ""
    warnings: tuple[str, ...] = ()
    """What the run said on the way (e.g. a warm start without a replay sample)."""


class TrainingService(ServiceBase):
    """Teachers to learn from, training runs, models and promotions."""

    def teachers(self) -> list[str]:
        """Teachers with stored answers, the one with the most first."""
        return self._slow(teacher_names)

    def models(self, family: str) -> list[ModelRow]:
        """A family's registered versions, oldest first."""
        return self._slow(lambda s: list_models(s, family))

    def current_model(self, family: str) -> ModelRow | None:
        """The family's promoted version (``family@current``), if any."""
        return self._slow(lambda s: current_model(s, family))

    def warm_starts(self) -> list[str]:
        """What a student can warm-start from: ``student@current`` when one has been
        promoted, then the registered students, newest first."""

        def names(s: Store) -> list[str]:
            current = current_model(s, STUDENT)
            found = [m.name for m in list_models(s, STUDENT)][::-1]
            return ([f"{STUDENT}@current"] if current is not None else []) + found

        return self._slow(names)

    def learning_curve(self, family: str) -> LearningCurve | None:
        """The learning curve of the family's newest model that has one, if any."""

        def newest(s: Store) -> LearningCurve | None:
            for model in reversed(list_models(s, family)):
                curve = model.params.get("learning_curve")
                points = curve_points(curve)
                if points and isinstance(curve, dict):
                    return LearningCurve(
                        model.name,
                        str(curve.get("from_model", "?")),
                        str(curve.get("eval", "?")),
                        points,
                    )
            return None

        return self._slow(newest)

    def active_learning_chart(self) -> Chart | str:
        """The newest stored active-learning simulation as a chart, or how to make one."""

        def newest(s: Store) -> Chart | str:
            try:
                return active_learning_chart(s)
            except ChartError:
                return (
                    "no active-learning simulation stored yet: `"
                    + HOW_TO_SIMULATE
                    + "` measures F1 against votes (re-ranking, fixed order, random) and"
                    " keeps it here"
                )

        return self._slow(newest)

    def promote(self, name: str, note: str | None = None) -> Promotion | None:
        """Make ``name`` its family's current version, promoted by this annotator; None
        when it already is; KeyError when no such model is registered."""
        return self._quick(lambda s: promote_model(s, name, self.annotator, note))

    def train(
        self,
        request: TrainRequest,
        progress: Callable[[TrainProgress], None],
        cancel: threading.Event,
        registered: Callable[[ModelRow], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Comparison | None:
        """Train, register and compare with the previous version, in a child process;
        call from a worker, which only waits on the child and relays its reports.

        None when ``cancel`` (or ``should_stop()``) stopped the run (nothing
        registered). ``registered`` hears of the new model before the previous version
        is scored. Raises :class:`TrainingRefused` when the request cannot be trained
        and :class:`~curator.training_child.ChildFailed` (one line) when the run failed."""

        def heard(kind: str, value: Any) -> None:
            if kind == "progress":
                progress(value)
            elif kind == "registered" and registered is not None:
                registered(value)

        job = (self.db_path, self.cache, request)
        result: Comparison | None = run_in_child(_train_here, job, heard, cancel, should_stop)
        return result


def _train_here(
    report: Report, cancel: threading.Event, db_path: Path, cache: Path, request: TrainRequest
) -> Comparison | None:
    """The training run itself, in the child (:mod:`curator.training_child`): torch is
    imported here, never in the app's process."""
    try:
        base = resolve_base(request.config.base, cache)
    except (OSError, ValueError) as exc:
        raise TrainingRefused(f"base model {exc}") from exc
    request = replace(request, config=replace(request.config, base=base))
    with open_store(db_path) as store:
        outcome = run_training(store, request, lambda r: report("progress", r), cancel)
        if outcome.model is None:
            return None
        report("registered", outcome.model)
        compared = _compare(store, outcome, request.eval_set or request.dev_set)
        return replace(compared, warnings=tuple(outcome.notes))


def _compare(store: Store, outcome: TrainOutcome, on: str | None) -> Comparison:
    new = outcome.model
    assert new is not None
    part = "eval" if outcome.metrics.get("eval") else "dev"
    new_scores = outcome.metrics.get(part)
    previous = previous_model(store, new)
    if previous is None:
        return Comparison(new, new_scores, None, None, f"the first {new.family}")
    if on is None:
        return Comparison(new, None, previous, None, "choose an eval set to compare on")
    try:
        previous_scores = score_model(store, previous, on)
    except (TrainingRefused, ValueError, OSError) as exc:
        return Comparison(new, new_scores, previous, None, f"{previous.name}: {exc}")
    return Comparison(new, new_scores, previous, previous_scores)
