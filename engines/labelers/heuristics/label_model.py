"""The label model that combines the heuristic labeling functions
(:mod:`engines.labelers.heuristics.functions`) into one probability, and the labeler that
uses it (``heuristics@N``).

The model is a two-class latent mixture: each function fires with its own probability
under each class (``P(fires | perf)``, ``P(fires | non-perf)``), independently given the
class, and abstaining is evidence too. Its parameters are fitted by
expectation-maximisation on unlabeled messages (no human labels needed), started from each
function's declared polarity so the latent classes keep their meaning. The fitted
parameters ship beside this module in ``heuristics_model.json``;
``python -m engines.labelers.heuristics.fit`` refits them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from engines.labelers.base import NON_PERF, PERF, Prediction
from engines.labelers.heuristics.functions import LABELING_FUNCTIONS, LabelingFunction, fired

MODEL_FILE = "heuristics_model.json"
_SMOOTH = 1.0  # pseudo-counts (Beta prior) that keep every probability off 0 and 1
DEGENERATE = 0.55  # a fit where no function is more accurate than this learned nothing


@dataclass(frozen=True)
class LabelModel:
    """``prior`` = P(perf); ``accuracy[name]`` = P(the function is right | it votes);
    ``votes[name]`` = the class the function votes for."""

    version: int
    prior: float
    accuracy: dict[str, float]
    votes: dict[str, str]

    def p_perf(self, fired: Iterable[str]) -> float:
        """P(perf | the votes of the functions that fired); abstentions say nothing."""
        log_odds = math.log(self.prior) - math.log(1.0 - self.prior)
        for name in fired:
            accuracy = self.accuracy.get(name)
            if accuracy is None:
                continue
            weight = math.log(accuracy) - math.log(1.0 - accuracy)
            log_odds += weight if self.votes[name] == PERF else -weight
        if log_odds < -700:
            return 0.0
        return 1.0 / (1.0 + math.exp(-log_odds))

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "prior_perf": self.prior,
            "functions": {
                name: {"vote": self.votes[name], "accuracy": self.accuracy[name]}
                for name in self.accuracy
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LabelModel:
        functions = data["functions"]
        return cls(
            int(data["version"]),
            float(data["prior_perf"]),
            {k: float(v["accuracy"]) for k, v in functions.items()},
            {k: str(v["vote"]) for k, v in functions.items()},
        )


def fit_label_model(
    texts: Sequence[str],
    functions: Sequence[LabelingFunction] = LABELING_FUNCTIONS,
    version: int = 1,
    iterations: int = 100,
    tolerance: float = 1e-6,
    prior: float = 0.5,
) -> LabelModel:
    """Fit each function's accuracy by EM on unlabeled texts (Dawid-Skene with one
    accuracy per function), starting from 70% each.

    The class balance ``prior`` is given, not fitted: with one frequent function EM would
    otherwise drift to "everything is perf". Accuracies stay in [0.5, 0.99]: a function
    is assumed no worse than chance for the class it votes for."""
    rows = [fired(t, functions) for t in texts]
    votes = {f.name: f.vote for f in functions}
    return fit_vote_rows(rows, votes, version, iterations, tolerance, prior)


def fit_vote_rows(
    rows: Sequence[Iterable[str]],
    votes: dict[str, str],
    version: int = 1,
    iterations: int = 100,
    tolerance: float = 1e-6,
    prior: float = 0.5,
) -> LabelModel:
    """:func:`fit_label_model` on precomputed votes: ``rows`` holds, per item, the names
    of the functions that fired; ``votes`` maps every function to the class it votes for
    (the ensemble's members vote through here)."""
    fired_sets = [set(r) for r in rows]
    model = LabelModel(version, prior, dict.fromkeys(votes, 0.7), votes)
    for _ in range(iterations):
        right = dict.fromkeys(votes, 0.0)
        seen = dict.fromkeys(votes, 0)
        for row in fired_sets:
            for name in row:
                # Judged by the other functions' votes only, so a frequent function
                # cannot confirm itself.
                p = model.p_perf(n for n in row if n != name)
                seen[name] += 1
                right[name] += p if votes[name] == PERF else 1.0 - p
        accuracy = {
            name: min(0.99, max(0.5, (right[name] + _SMOOTH) / (seen[name] + 2 * _SMOOTH)))
            for name in votes
        }
        change = max(abs(accuracy[n] - model.accuracy[n]) for n in votes)
        model = LabelModel(version, prior, accuracy, votes)
        if change < tolerance:
            break
    if max(model.accuracy.values()) < DEGENERATE:
        raise ValueError(
            "the functions hardly ever vote on the same texts here, so EM cannot tell their"
            " accuracies apart (all ended near 0.5); fit on more, or more varied, messages"
        )
    return model


def load_model(path: str | Path | None = None) -> LabelModel:
    """The shipped label model, or one written by ``heuristics.fit`` at ``path``."""
    if path is None:
        resource = resources.files(__package__ or "engines.labelers.heuristics") / MODEL_FILE
        data = json.loads(resource.read_text(encoding="utf-8"))
    else:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    return LabelModel.from_json(data)


class HeuristicLabeler:
    """``heuristics@N``: labeling-function votes combined by the label model.

    ``score`` is the model's probability of the label it gives; ``details`` lists the
    functions that fired for each class and ``p_perf``.
    """

    input_field = "message"

    def __init__(
        self,
        model: LabelModel | None = None,
        functions: Sequence[LabelingFunction] = LABELING_FUNCTIONS,
    ) -> None:
        self.model = model if model is not None else load_model()
        unknown = sorted(set(self.model.accuracy) - {f.name for f in functions})
        if unknown:
            raise ValueError(f"the label model knows functions this list lacks: {unknown}")
        self.functions = [f for f in functions if f.name in self.model.accuracy]
        self.name = f"heuristics@{self.model.version}"

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        predictions = []
        for text in texts:
            names = fired(text if isinstance(text, str) else str(text or ""), self.functions)
            p = self.model.p_perf(names)
            label = PERF if p > 0.5 else NON_PERF
            votes = {
                PERF: [f.name for f in self.functions if f.name in names and f.vote == PERF],
                NON_PERF: [f.name for f in self.functions if f.name in names and f.vote != PERF],
            }
            predictions.append(
                Prediction(
                    label, p if label == PERF else 1.0 - p, {"p_perf": round(p, 6), "votes": votes}
                )
            )
        return predictions
