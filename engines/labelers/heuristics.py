"""Heuristic labeling functions and the label model that combines them (``heuristics@N``).

Each labeling function is a regex over a commit message that votes for one class
(``perf`` or ``non-perf``) when it matches and abstains otherwise. They are noisy and
overlap; a generative label model turns their votes into one probability. The model
is a two-class latent mixture: each function fires with its own probability under each
class (``P(fires | perf)``, ``P(fires | non-perf)``), independently given the class,
and abstaining is evidence too. Its parameters are fitted by expectation-maximisation
on unlabeled messages (no human labels needed), started from each function's declared
polarity so the latent classes keep their meaning. The fitted parameters ship beside
this module in ``heuristics_model.json``; ``python -m engines.labelers.heuristics_fit``
refits them.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from engines.labelers.base import NON_PERF, PERF, Prediction

MODEL_FILE = "heuristics_model.json"
_SMOOTH = 1.0  # pseudo-counts (Beta prior) that keep every probability off 0 and 1
DEGENERATE = 0.55  # a fit where no function is more accurate than this learned nothing


@dataclass(frozen=True)
class LabelingFunction:
    """A regex that votes ``vote`` when it matches (case-insensitive) and abstains otherwise."""

    name: str
    vote: str
    pattern: str

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.IGNORECASE)

    def fires(self, text: str) -> bool:
        return self.regex.search(text) is not None


def _lf(name: str, vote: str, pattern: str) -> LabelingFunction:
    return LabelingFunction(name, vote, pattern)


P, N = PERF, NON_PERF
# Patterns only use bounded gaps ({0,40}), so each scan stays linear in the text length.
LABELING_FUNCTIONS: tuple[LabelingFunction, ...] = (
    # ------------------------------------------------------------------ perf: claims
    _lf("speedup-quantified", P, r"\b\d+(\.\d+)?\s*(x|×|%|times)\s*(faster|speed[- ]?up|quicker)"),
    _lf(
        "less-quantified", P, r"\b(reduc\w*|cut|sav\w*|lower\w*)\b.{0,30}\bby\s+\d+(\.\d+)?\s*(%|x)"
    ),
    _lf("faster", P, r"\b(faster|quicker|speed[- ]?ups?|speed(s|ed|ing)? up|sped up)\b"),
    _lf(
        "improve-performance",
        P,
        r"\b(improv|increas|boost|better|enhanc|optimi[sz])\w*\b.{0,40}\b(perf(ormance)?|speed|throughput|latency|efficiency)\b",
    ),
    _lf(
        "performance-improve",
        P,
        r"\bperf(ormance)?\s+(improvement|fix|boost|optimi[sz]ation|gain|enhancement|tweak|issue|problem|regression|bug|bottleneck|hit)s?\b",
    ),
    _lf("optimize", P, r"\b(optimi[sz](e|es|ed|ing|ation|ations)|de-?optimi[sz]\w*)\b"),
    _lf("efficient", P, r"\b(more\s+efficient(ly)?|efficiency|inefficien\w*)\b"),
    _lf(
        "slow",
        P,
        r"\b(too\s+slow|slowness|slow(ly)?\b.{0,20}\b(fix|path|query|start|load)|slow[- ]?down)\b",
    ),
    _lf(
        "latency-throughput",
        P,
        r"\b(latency|throughput|bottlenecks?|hot\s*(path|spot|loop)|hotspots?)\b",
    ),
    _lf("overhead", P, r"\b(overhead|expensive|costly|cheaper)\b"),
    _lf(
        "memory-footprint",
        P,
        r"\b(memory\s+(usage|footprint|consumption|use|pressure|allocations?)|(fewer|less|unnecessary|redundant|avoid\w*)\s+(memory\s+)?allocations?|allocat\w*\s+less|preallocat\w*|reserve\s+capacity)\b",
    ),
    _lf("cache", P, r"\b(cach(e|es|ed|ing)|memoi[sz]\w*)\b"),
    _lf(
        "avoid-redundant",
        P,
        r"\b(avoid|skip|eliminat\w*|remov\w*|reduc\w*|prevent)\w*\b.{0,30}\b(unnecessary|redundant|needless|extra|repeated|duplicate[d]?|superfluous)\b",
    ),
    _lf(
        "avoid-copy",
        P,
        r"\b(avoid\w*|unnecessary|redundant|extra|zero)[- ]cop(y|ies|ying)\b"
        r"|\bmove\s+instead\s+of\s+cop",
    ),
    _lf(
        "parallel",
        P,
        r"\b(paralleli[sz]\w*|in\s+parallel|vectori[sz]\w*|simd|multithread\w*|concurren\w*|thread\s+pool)\b",
    ),
    _lf(
        "lock-contention",
        P,
        r"\b(lock[- ]?free|contention|fine[- ]grained\s+lock\w*|lock\s+less|lockless)\b",
    ),
    _lf(
        "complexity",
        P,
        r"\bO\((n|log|1|n\^?2|n\s*log)\b|\b(quadratic|linear\s+time|constant\s+time)\b",
    ),
    _lf("lazy-batch", P, r"\b(lazy|lazily|on\s+demand|batch(ed|ing)|bulk)\b"),
    _lf("perf-word", P, r"\bperf(ormance|ormant)?\b"),
    _lf("fast-path", P, r"\b(fast[- ]?path|fast(er)?\s+(way|version|implementation|lookup))\b"),
    # -------------------------------------------------------------- non-perf: topics
    _lf(
        "docs",
        N,
        r"\b(docs?|documentation|readme|changelog|typos?|comments?|javadoc|docstrings?)\b",
    ),
    _lf(
        "tests",
        N,
        r"\b(unit\s+tests?|tests?\s+(for|case|cases)|add(ed|s)?\s+tests?|fix(ed|es)?\s+tests?|testing|test\s+suite)\b",
    ),
    _lf(
        "refactor-style",
        N,
        r"\b(refactor\w*|renam\w*|clean\s*up|cleanup|reformat\w*|format(ting)?|lint\w*|style|whitespace|indent\w*|code\s+quality)\b",
    ),
    _lf(
        "build-release",
        N,
        r"\b(bump(ed)?|version|release|changelog|dependenc(y|ies)|gradle|maven|cmake|makefile|ci|travis|jenkins|github\s+actions|upgrade\s+to)\b",
    ),
    _lf(
        "bugfix",
        N,
        r"\b(crash\w*|null\s*pointer|npe|segfault|exception|wrong|incorrect|broken|regression\s+in\s+behavio\w*|error\s+handling|fix(es|ed)?\s+(a\s+|the\s+)?(bug|issue|crash|error))\b",
    ),
    _lf(
        "feature",
        N,
        r"\b(add(s|ed)?\s+(support|option|feature|button|command|endpoint|ui)|new\s+feature|implement(s|ed)?\s+(support|feature))\b",
    ),
    _lf(
        "ui",
        N,
        r"\b(ui|gui|css|layout|icon|button|dialog|font|colou?r|styles?heet|translation|i18n|locali[sz]ation)\b",
    ),
    _lf("license", N, r"\b(license|licence|copyright|spdx)\b"),
    _lf("revert-merge", N, r"^\s*(revert|merge\s+branch|merge\s+remote)\b"),
    _lf("security", N, r"\b(security|cve-\d+|xss|sanitiz\w*|vulnerab\w*|injection)\b"),
    _lf(
        "perf-tooling",
        N,
        r"\b(perf(ormance)?[- ](tests?|counters?|monitor\w*|events?|stat|tool|pmu|metrics?"
        r"|report\w*)|pmu|uncore)\b",
    ),
    _lf("logging", N, r"\b(add(ed|s)?\s+(more\s+)?(debug\s+)?log(s|ging)?|log\s+messages?)\b"),
)
del P, N


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


def fired(text: str, functions: Sequence[LabelingFunction] = LABELING_FUNCTIONS) -> list[str]:
    """Names of the functions that vote on ``text`` (the rest abstain)."""
    return [f.name for f in functions if f.fires(text)]


def majority_vote(names: Iterable[str], functions: Sequence[LabelingFunction]) -> str | None:
    """The class most firing functions vote for; None on a tie or when all abstain."""
    votes = {f.name: f.vote for f in functions}
    perf = sum(1 for n in names if votes[n] == PERF)
    non = sum(1 for n in names if votes[n] == NON_PERF)
    return PERF if perf > non else NON_PERF if non > perf else None


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
    model = LabelModel(version, prior, {f.name: 0.7 for f in functions}, votes)
    for _ in range(iterations):
        right = dict.fromkeys(votes, 0.0)
        seen = dict.fromkeys(votes, 0)
        for row in rows:
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
    """The shipped label model, or one written by ``heuristics_fit`` at ``path``."""
    if path is None:
        resource = resources.files(__package__ or "engines.labelers") / MODEL_FILE
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
