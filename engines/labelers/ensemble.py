"""``ensemble@N``: other labelers (keyword, heuristics, TF-IDF, student) as the labeling
functions of one model.

Each member gives P(perf) per item (:func:`engines.labelers.base.p_perf`). On a labeled
dev set the combiner is chosen by stratified, seeded k-fold cross-validation among: each
member alone, the mean of the members' P(perf), and a logistic-regression stack on the
members' clipped logits (a 0/1 "fired" indicator for vote-only members such as
``keyword@1``) with a small grid of C. Every candidate's decision threshold is tuned
inside each training fold for the best F1 and applied to the held-out fold; the
candidate with the best pooled cross-validated F1 wins, ties going to the simpler one.
Since every member alone is a candidate, the chosen combiner's CV F1 on dev is never
below its best member's.

Without labels the ``vote`` combiner fits the Dawid-Skene label model of
:mod:`engines.labelers.heuristics.label_model` on the members' votes over unlabeled
commits (PerfCurator's heuristic-supervision route): each member is two labeling
functions, ``NAME:perf`` and ``NAME:non-perf``.

The fitted ensemble is ``ensemble.json`` in the model's directory: members (concrete
versions), combiner, weights, threshold and the candidates' CV F1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines.labelers.base import NON_PERF, PERF, Labeler, Prediction, p_perf, run_labeler
from engines.labelers.rule_floor import VETO_FIELD
from engines.labelers.student.data import binary_f1

FAMILY = "ensemble"
ENSEMBLE_FILE = "ensemble.json"
COMBINERS = ("auto", "vote")
C_GRID = (0.1, 1.0, 10.0)
_CLIP = 1e-4
_SIMPLICITY = {"member": 0, "mean": 1, "stack": 2}


def logit(p: float) -> float:
    q = min(1.0 - _CLIP, max(_CLIP, p))
    return math.log(q / (1.0 - q))


def features(row: Sequence[float], vote_only: Sequence[bool]) -> list[float]:
    """The stack's inputs for one item: a member's clipped logit, or 0/1 for vote-only."""
    return [
        (1.0 if p >= 0.5 else 0.0) if vote else logit(p)
        for p, vote in zip(row, vote_only, strict=True)
    ]


def best_threshold(scores: Sequence[float], truth: Sequence[int]) -> float:
    """The cut (predict perf when score > cut) with the best F1 on these items, placed
    half-way between two distinct scores; among equal F1, the cut nearest 0.5."""
    pairs = sorted(zip(scores, truth, strict=True), key=lambda x: -x[0])
    positives = sum(truth)
    best, best_f1 = 0.5, binary_f1(truth, [int(s > 0.5) for s in scores])
    tp = fp = 0
    for k, (score, t) in enumerate(pairs):
        tp += t
        fp += 1 - t
        if k + 1 < len(pairs) and pairs[k + 1][0] == score:
            continue  # a cut cannot fall between equal scores
        below = pairs[k + 1][0] if k + 1 < len(pairs) else score - 1e-6
        cut = (score + below) / 2
        f1 = 2 * tp / (tp + fp + positives) if tp else 0.0
        closer = abs(cut - 0.5) < abs(best - 0.5)
        if f1 > best_f1 + 1e-12 or (abs(f1 - best_f1) <= 1e-12 and closer):
            best, best_f1 = cut, f1
    return best


@dataclass(frozen=True)
class Candidate:
    """One way to combine: ``kind`` member / mean / stack; ``member`` the index of a lone
    member; ``c`` the stack's inverse regularisation."""

    kind: str
    member: int | None = None
    c: float | None = None

    def label(self, names: Sequence[str]) -> str:
        if self.kind == "member":
            assert self.member is not None
            return names[self.member]
        return "mean" if self.kind == "mean" else f"stack(C={self.c:g})"

    def fit(self, rows: Sequence[Sequence[float]], truth: Sequence[int], vote_only, seed: int):
        """What to store: nothing for a lone member or the mean, weights for the stack."""
        if self.kind != "stack":
            return None
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(C=self.c, class_weight="balanced", random_state=seed)
        clf.fit([features(r, vote_only) for r in rows], list(truth))
        return [float(w) for w in clf.coef_[0]], float(clf.intercept_[0])

    def scores(self, rows: Sequence[Sequence[float]], fitted: Any, vote_only) -> list[float]:
        if self.kind == "member":
            return [r[self.member] for r in rows]  # type: ignore[index]
        if self.kind == "mean":
            return [sum(r) / len(r) for r in rows]
        weights, intercept = fitted
        return [stack_score(features(r, vote_only), weights, intercept) for r in rows]


def stack_score(x: Sequence[float], weights: Sequence[float], intercept: float) -> float:
    z = intercept + sum(w * v for w, v in zip(weights, x, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def candidates(members: int) -> list[Candidate]:
    found = [Candidate("member", member=i) for i in range(members)]
    if members > 1:
        found.append(Candidate("mean"))
        found.extend(Candidate("stack", c=c) for c in C_GRID)
    return found


@dataclass
class Choice:
    """The combiner picked on dev: its candidate, fitted weights, threshold, and every
    candidate's cross-validated F1 (by label)."""

    candidate: Candidate
    fitted: Any
    threshold: float
    cv_f1: dict[str, float] = field(default_factory=dict)
    folds: int = 0


def choose_combiner(
    rows: Sequence[Sequence[float]],
    truth: Sequence[int],
    names: Sequence[str],
    vote_only: Sequence[bool],
    folds: int = 5,
    seed: int = 0,
) -> Choice:
    """Cross-validate every candidate on ``rows`` (one P(perf) per member per item) and
    fit the best on all of them; raises ValueError with too few labeled items."""
    from sklearn.model_selection import StratifiedKFold

    positives = sum(truth)
    k = min(folds, positives, len(truth) - positives)
    if k < 2:
        raise ValueError("the dev set needs at least two items of each class to choose a combiner")
    splits = list(
        StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(rows, list(truth))
    )
    pool = candidates(len(names))
    cv: dict[str, float] = {}
    best: Candidate | None = None
    best_key: tuple[float, int] | None = None
    oof_best: list[float] = []
    for cand in pool:
        guessed = [0] * len(truth)
        oof = [0.0] * len(truth)
        for train_idx, test_idx in splits:
            tr_rows = [rows[i] for i in train_idx]
            tr_truth = [truth[i] for i in train_idx]
            fitted = cand.fit(tr_rows, tr_truth, vote_only, seed)
            cut = best_threshold(cand.scores(tr_rows, fitted, vote_only), tr_truth)
            for i, s in zip(
                test_idx, cand.scores([rows[i] for i in test_idx], fitted, vote_only), strict=True
            ):
                oof[i] = s
                guessed[i] = int(s > cut)
        f1 = binary_f1(truth, guessed)
        cv[cand.label(names)] = round(f1, 6)
        key = (round(f1, 9), -_SIMPLICITY[cand.kind])
        if best_key is None or key > best_key:
            best, best_key, oof_best = cand, key, oof
    assert best is not None
    fitted = best.fit(rows, truth, vote_only, seed)
    # The stack's cut comes from its out-of-fold scores, not from in-sample ones.
    scored = oof_best if best.kind == "stack" else best.scores(rows, fitted, vote_only)
    return Choice(best, fitted, best_threshold(scored, truth), cv, k)


def member_votes(name: str, p: float) -> str | None:
    """A member's labeling-function vote for the label model (None: abstains)."""
    if abs(p - 0.5) < 1e-9:
        return None
    return f"{name}:{PERF if p > 0.5 else NON_PERF}"


def fit_vote_model(rows: Sequence[Sequence[float]], names: Sequence[str], prior: float = 0.5):
    """The Dawid-Skene label model over the members' votes on unlabeled items."""
    from engines.labelers.heuristics.label_model import fit_vote_rows

    votes = {f"{n}:{label}": label for n in names for label in (PERF, NON_PERF)}
    fired = [
        {v for v in (member_votes(n, p) for n, p in zip(names, r, strict=True)) if v} for r in rows
    ]
    return fit_vote_rows(fired, votes, prior=prior)


def combined_scores(spec: Mapping[str, Any], rows: Sequence[Sequence[float]]) -> list[float]:
    """P(perf) by the stored combiner for each row of members' P(perf)."""
    names = [m["name"] for m in spec["members"]]
    vote_only = [bool(m.get("vote_only")) for m in spec["members"]]
    combiner = spec["combiner"]
    kind = combiner["kind"]
    if kind == "vote":
        from engines.labelers.heuristics.label_model import LabelModel

        model = LabelModel.from_json(combiner["label_model"])
        return [
            model.p_perf(
                v for v in (member_votes(n, p) for n, p in zip(names, r, strict=True)) if v
            )
            for r in rows
        ]
    if kind == "member":
        index = names.index(combiner["member"])
        return Candidate("member", member=index).scores(rows, None, vote_only)
    if kind == "mean":
        return Candidate("mean").scores(rows, None, vote_only)
    fitted = (combiner["weights"], combiner["intercept"])
    return Candidate("stack", c=combiner.get("C")).scores(rows, fitted, vote_only)


def read_spec(path: str | Path) -> dict[str, Any]:
    """An ensemble's ``ensemble.json``; ValueError naming the file when it is missing or
    damaged."""
    from engines.labelers.model_files import read_json_object

    where = Path(path) / ENSEMBLE_FILE
    if not where.is_file():
        raise ValueError(f"{path}: not a Curator ensemble (no {ENSEMBLE_FILE})")
    return read_json_object(where)


def write_spec(path: Path, spec: Mapping[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / ENSEMBLE_FILE).write_text(json.dumps(spec, indent=2, sort_keys=True), encoding="utf-8")


def member_rows(members: Sequence[Labeler], fetch) -> list[list[float]]:
    """One row per item: every member's P(perf), each member fed the field it reads."""
    columns = [[p_perf(x) for x in run_labeler(m, fetch)] for m in members]
    return [list(r) for r in zip(*columns, strict=True)] if columns else []


class EnsembleLabeler:
    """A fitted ensemble over already-built member labelers (the registry builds them
    once per ensemble, in the order ``ensemble.json`` lists them).

    ``input_fields`` are the fields its members read; :meth:`predict_fields` feeds each
    member its own. :meth:`predict` (one text per item) gives every member that text.
    ``details`` carry ``p_perf``, each member's P(perf) and the combiner.
    """

    def __init__(
        self, path: str | Path, name: str, members: Sequence[Labeler], spec: Mapping | None = None
    ) -> None:
        self.spec = dict(spec) if spec is not None else read_spec(path)
        self.name = name
        self.members = list(members)
        expected = [m["name"] for m in self.spec["members"]]
        built = [m.name for m in self.members]
        if built != expected:
            raise ValueError(f"{name}: built members {built} differ from {expected}")
        self.threshold = float(self.spec.get("threshold", 0.5))
        fields: list[str] = []
        for m in self.members:
            for f in getattr(m, "input_fields", None) or (m.input_field,):
                if f not in fields:
                    fields.append(f)
        self.input_fields: tuple[str, ...] = tuple(fields)
        self.input_field = "model_input" if "model_input" in fields else fields[0]

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        # one text per item is a commit text, never its file: members that veto by the
        # file (engines.labelers.rule_floor) go without the veto here
        fields = [f for f in self.input_fields if f != VETO_FIELD]
        return self.predict_fields(dict.fromkeys(fields, texts))

    def predict_fields(self, texts: Mapping[str, Sequence[str]]) -> list[Prediction]:
        rows = member_rows(self.members, lambda f: texts[f])
        combined = combined_scores(self.spec, rows)
        kind = self.spec["combiner"]["kind"]
        found = []
        for row, p in zip(rows, combined, strict=True):
            label = PERF if p > self.threshold else NON_PERF
            details = {
                "p_perf": round(p, 6),
                "threshold": round(self.threshold, 6),
                "combiner": kind,
                "members": {m.name: round(q, 6) for m, q in zip(self.members, row, strict=True)},
            }
            found.append(Prediction(label, p if label == PERF else 1.0 - p, details))
        return found
