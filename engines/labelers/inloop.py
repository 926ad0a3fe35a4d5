"""The in-loop model of active learning: TF-IDF + logistic regression refit on the votes
so far in well under a second, then asked how unsure it is about the items still to
label. Small on purpose (word 1-2-grams only, a capped vocabulary): it runs every K
votes in the app's background worker while the annotator keeps voting."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_FEATURES = 50_000


@dataclass
class InLoopModel:
    """A fitted pipeline and the label whose probability it gives."""

    pipeline: Any
    positive: str
    trained_on: int

    def p_positive(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        column = list(self.pipeline.classes_).index(self.positive)
        return [float(row[column]) for row in self.pipeline.predict_proba(list(texts))]

    def uncertainty(self, texts: Sequence[str]) -> list[float]:
        """1 at P = 0.5, 0 at P = 0 or 1 (as ``annotation.sampling.uncertainty``)."""
        return [1.0 - 2.0 * abs(p - 0.5) for p in self.p_positive(texts)]


def fit_inloop(
    texts: Sequence[str], labels: Sequence[str], positive: str, seed: int = 0
) -> InLoopModel | None:
    """Fit on the labeled texts; None until both the positive label and another one
    have been seen (a one-class model says nothing about uncertainty)."""
    if len(texts) != len(labels):
        raise ValueError("texts and labels differ in length")
    if positive not in labels or all(label == positive for label in labels):
        return None
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    pipeline = Pipeline(
        [
            (
                "tfidf",
                TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=MAX_FEATURES),
            ),
            (
                "clf",
                LogisticRegression(
                    C=4.0, solver="liblinear", class_weight="balanced", random_state=seed
                ),
            ),
        ]
    )
    binary = [label if label == positive else "other" for label in labels]
    pipeline.fit(list(texts), binary)
    return InLoopModel(pipeline, positive, len(texts))
