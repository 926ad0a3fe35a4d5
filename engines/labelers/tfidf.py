"""TF-IDF baselines: word and character n-gram TF-IDF features with logistic regression
(``tfidf-lr``) or a linear SVM (``tfidf-svm``), trained on human or teacher labels.

Features come in two shapes: ``text`` reads the whole text as one bag of n-grams (every
model trained on messages alone); ``fields`` reads a ``message || diff`` text as its
message, its diff's changed lines and a rule flag, each apart (``tfidf_fields``).

Out-of-fold predictions give an honest score on the very items a model was trained on:
each item is predicted by a model fitted without its fold, and folds are grouped by
repository when sources are known, so no repository is on both sides.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engines.files import staged_file, update_json_atomically, write_text_atomically
from engines.labelers.base import Prediction
from engines.labelers.calibration import DEFAULT_THRESHOLD, threshold_of, verdict
from engines.labelers.inputs import recorded_input
from engines.labelers.model_files import read_json_object, unreadable
from engines.labelers.rule_floor import RuleLayered, apply_floor, recorded_floor

KINDS = ("lr", "svm")
FEATURES = ("text", "fields")
FIELDS_C = 4.0  # inverse regularization of the fielded model, as measured (docs/labelers.md)
MODEL_FILE = "model.pkl"
META_FILE = "curator_tfidf.json"


def family(kind: str) -> str:
    """``lr`` -> ``tfidf-lr``: the name under which models of this kind are versioned."""
    if kind not in KINDS:
        raise ValueError(f"unknown TF-IDF model {kind!r}: use {' or '.join(KINDS)}")
    return f"tfidf-{kind}"


def build_pipeline(
    kind: str, seed: int = 0, features: str = "text", rule_version: int | None = None
) -> Any:
    """An unfitted scikit-learn pipeline: the features (``text``: word 1-2-grams plus char
    2-5-grams of the whole text; ``fields``: see ``tfidf_fields``, with the rule flag of
    keyword list ``rule_version``), then the classifier (balanced class weights, as
    positives are often the minority)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.svm import LinearSVC

    family(kind)
    if features not in FEATURES:
        raise ValueError(f"TF-IDF features {features!r}: use {' or '.join(FEATURES)}")
    if features == "fields":
        from engines.labelers.tfidf_fields import fielded_features

        union: Any = fielded_features(rule_version)
    else:
        union = FeatureUnion(
            [
                (
                    "words",
                    TfidfVectorizer(
                        ngram_range=(1, 2), min_df=1, sublinear_tf=True, max_features=200_000
                    ),
                ),
                (
                    "chars",
                    TfidfVectorizer(
                        analyzer="char_wb",
                        ngram_range=(2, 5),
                        sublinear_tf=True,
                        max_features=200_000,
                    ),
                ),
            ]
        )
    if kind == "lr":
        clf: Any = LogisticRegression(
            C=FIELDS_C if features == "fields" else 10.0,
            max_iter=3000 if features == "fields" else 2000,
            class_weight="balanced",
            random_state=seed,
        )
    else:
        clf = LinearSVC(C=0.5, class_weight="balanced", random_state=seed)
    return Pipeline([("tfidf", union), ("clf", clf)])


def as_text(value: object) -> str:
    """A text a model can read: None as empty, anything else as its string."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def positive_scores(model: Any, texts: Sequence[str]) -> list[float]:
    """P(positive) for LR; for the SVM, the logistic of its margin (a monotone score)."""
    clean = [as_text(t) for t in texts]
    if not clean:
        return []
    clf = model.named_steps["clf"]
    if hasattr(clf, "predict_proba"):
        return [float(p) for p in model.predict_proba(clean)[:, 1]]
    return [1.0 / (1.0 + math.exp(-float(m))) for m in model.decision_function(clean)]


def with_alternates(
    texts: Sequence[str],
    labels: Sequence[int],
    alternates: Sequence[str | None] | None,
    weights: Sequence[float] | None = None,
) -> tuple[list[str], list[int], list[float] | None]:
    """The training texts plus, for each example with an alternate text (its message
    alone, for one that has a diff), a second copy under the same label and weight."""
    out_texts, out_labels = list(texts), list(labels)
    out_weights = list(weights) if weights is not None else None
    for i, (alt, y) in enumerate(zip(alternates or (), labels, strict=False)):
        if alt is not None:
            out_texts.append(alt)
            out_labels.append(y)
            if out_weights is not None and weights is not None:
                out_weights.append(weights[i])
    return out_texts, out_labels, out_weights


def fit(
    kind: str,
    texts: Sequence[str],
    labels: Sequence[int],
    seed: int = 0,
    sample_weight: Sequence[float] | None = None,
    features: str = "text",
    rule_version: int | None = None,
) -> Any:
    """Fit a pipeline; ``sample_weight`` (one per text) scales each example's loss."""
    if len(set(labels)) < 2:
        raise ValueError("TF-IDF training needs examples of both classes")
    model = build_pipeline(kind, seed, features, rule_version)
    extra = {} if sample_weight is None else {"clf__sample_weight": list(sample_weight)}
    model.fit([as_text(t) for t in texts], list(labels), **extra)
    return model


def out_of_fold(
    kind: str,
    texts: Sequence[str],
    labels: Sequence[int],
    groups: Sequence[str] | None = None,
    folds: int = 5,
    seed: int = 0,
    alternates: Sequence[str | None] | None = None,
    features: str = "text",
    rule_version: int | None = None,
) -> list[float]:
    """P(positive) for every example from a model that never saw its fold; folds group
    examples by ``groups`` (repositories) when there are enough distinct groups. An
    example's alternate text (see :func:`with_alternates`) joins its fold's training."""
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    n = len(texts)
    scores = [0.0] * n
    if groups is not None and len(set(groups)) >= folds:
        splits = GroupKFold(n_splits=folds).split(texts, labels, groups)
    else:
        minority = min(sum(labels), n - sum(labels))
        if minority < 2:
            raise ValueError("out-of-fold scoring needs at least two examples of each class")
        k = min(folds, minority)
        splits = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(texts, labels)
    for train_idx, test_idx in splits:
        fold_labels = [labels[i] for i in train_idx]
        if len(set(fold_labels)) < 2:
            majority = fold_labels[0]
            for i in test_idx:
                scores[i] = float(majority)
            continue
        fold_texts, fold_labels, _ = with_alternates(
            [texts[i] for i in train_idx],
            fold_labels,
            [alternates[i] for i in train_idx] if alternates is not None else None,
        )
        model = fit(kind, fold_texts, fold_labels, seed, None, features, rule_version)
        for i, s in zip(
            test_idx, positive_scores(model, [texts[i] for i in test_idx]), strict=True
        ):
            scores[i] = s
    return scores


def save(model: Any, out_dir: Path, meta: dict[str, Any]) -> None:
    """The fitted pipeline (pickle) and its metadata into ``out_dir`` (created)."""
    with staged_file(out_dir / MODEL_FILE) as tmp, tmp.open("wb") as handle:
        pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
    write_text_atomically(out_dir / META_FILE, json.dumps(meta, indent=2, sort_keys=True))


def read_meta(path: str | Path) -> dict[str, Any]:
    """A TF-IDF model's metadata; ValueError naming the file when it is missing or
    damaged."""
    meta_path = Path(path) / META_FILE
    if not meta_path.is_file():
        raise ValueError(f"{path}: not a Curator TF-IDF model (no {META_FILE})")
    return read_json_object(meta_path)


def update_meta(path: str | Path, **fields: Any) -> dict[str, Any]:
    """Add or replace top-level entries of a TF-IDF model's metadata."""
    return update_json_atomically(Path(path) / META_FILE, read_meta(path), **fields)


def to_prediction(p: float, threshold: float = DEFAULT_THRESHOLD) -> Prediction:
    """perf iff ``p >= threshold`` (the model's stored decision threshold)."""
    return verdict(p, threshold)


class TfidfLabeler(RuleLayered):
    """A fitted TF-IDF model loaded from its directory (only load directories you trust:
    the model is a pickle)."""

    def __init__(self, path: str | Path, name: str) -> None:
        where = Path(path)
        meta = read_meta(where)
        try:
            with (where / MODEL_FILE).open("rb") as handle:
                self.model = pickle.load(handle)
        except Exception as exc:  # a damaged pickle raises whatever its bytes lead to
            raise unreadable(where / MODEL_FILE, exc) from None
        if not callable(getattr(self.model, "predict", None)):
            raise unreadable(where / MODEL_FILE, "it holds no fitted model")
        self.name = name
        self.input_record = recorded_input(meta)
        self.input_field: str = self.input_record["field"]
        self.threshold = threshold_of(meta)
        self.floor = recorded_floor(meta)

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        """P(perf) of each text, with the model's rule floor applied when it has one."""
        probs = positive_scores(self.model, texts)
        return apply_floor(probs, texts, self.floor) if self.floor else probs

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        """perf iff P(perf) reaches the model's decision threshold (0.5 for models
        trained before thresholds were chosen)."""
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        return [to_prediction(p, self.threshold) for p in self.probabilities(texts)]
