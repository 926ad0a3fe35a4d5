"""The parts of a ``message || diff`` text that a fielded TF-IDF model reads apart.

A bag of n-grams over the whole text lets the diff's many tokens drown the message's
few, and character n-grams over code cost much and say little. A fielded model instead
reads three fields, each with its own vocabulary:

* the commit message, as word 1-2-grams and character 2-5-grams;
* the diff's changed lines (``+``/``-`` lines, headers dropped), as identifier and
  operator 1-2-grams, weighted below the message;
* one flag: whether the keyword rules of a pinned list version match the message.

Everything here is picklable (module-level functions and classes), as fitted models
are stored as pickles and loaded by later Curator versions. The module imports
scikit-learn: import it only where a TF-IDF model is built or loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sklearn.base import BaseEstimator, TransformerMixin

from engines.labelers.keyword import find_matches, packaged_terms
from engines.labelers.rule_floor import message_part
from engines.labelers.tfidf import as_text

CODE_TOKENS = r"[A-Za-z][A-Za-z0-9]+|[+\-*/<>=&|]+"
CODE_WEIGHT = 0.7
MAX_CHANGED_CHARS = 20_000
_SIGNS = ("+", "-")
_HEADERS = ("+++", "---")


def messages(texts: Sequence[object]) -> list[str]:
    """The message of each text (the whole text when it has no diff)."""
    return [message_part(as_text(t)) for t in texts]


def changed_lines(texts: Sequence[object]) -> list[str]:
    """The lines each text's diff adds or removes, with their signs (empty without one)."""
    out = []
    for value in texts:
        text = as_text(value)
        diff = text[len(message_part(text)) :]
        lines = (x for x in diff.splitlines() if x[:1] in _SIGNS and x[:3] not in _HEADERS)
        out.append("\n".join(lines)[:MAX_CHANGED_CHARS])
    return out


class RuleFlag(TransformerMixin, BaseEstimator):
    """A one-column feature: 1 where keyword list ``version`` matches the message."""

    def __init__(self, version: int) -> None:
        self.version = version

    def fit(self, texts: Sequence[object], y: Any = None) -> RuleFlag:
        packaged_terms(self.version)  # fail at fit time, not at prediction, on a bad version
        return self

    def transform(self, texts: Sequence[object]) -> Any:
        from scipy.sparse import csr_matrix

        terms = packaged_terms(self.version)
        flags = [[1.0 if find_matches(m, terms) else 0.0] for m in messages(texts)]
        return csr_matrix(flags, shape=(len(flags), 1))


class CodeVectorizer(TransformerMixin, BaseEstimator):
    """TF-IDF over changed lines that tolerates training data without any diff (a fold
    of message-only examples): it then contributes no columns instead of failing."""

    def __init__(self, max_features: int = 50_000) -> None:
        self.max_features = max_features

    def _vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(
            ngram_range=(1, 2),
            sublinear_tf=True,
            min_df=2,
            max_features=self.max_features,
            token_pattern=CODE_TOKENS,
        )

    def fit(self, texts: Sequence[str], y: Any = None) -> CodeVectorizer:
        vectorizer = self._vectorizer()
        try:
            vectorizer.fit(texts)
        except ValueError:  # no token occurs twice: nothing to learn from
            vectorizer = None
        self.vectorizer_ = vectorizer
        return self

    def transform(self, texts: Sequence[str]) -> Any:
        from scipy.sparse import csr_matrix

        if self.vectorizer_ is None:
            return csr_matrix((len(texts), 0))
        return self.vectorizer_.transform(texts)


def fielded_features(rule_version: int | None) -> Any:
    """The unfitted feature union of a fielded model (``rule_version`` None: no flag)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion, Pipeline
    from sklearn.preprocessing import FunctionTransformer

    def field(name: str, pick: Any, vectorizer: Any) -> tuple[str, Any]:
        return name, Pipeline([("field", FunctionTransformer(pick)), ("tfidf", vectorizer)])

    # the message is cut out once and read both as words and as characters
    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)
    parts = [
        field("message", messages, FeatureUnion([("words", words), ("chars", chars)])),
        field("code", changed_lines, CodeVectorizer()),
    ]
    weights = {"message": 1.0, "code": CODE_WEIGHT}
    if rule_version is not None:
        parts.append(("rule", RuleFlag(rule_version)))
        weights["rule"] = 1.0
    return FeatureUnion(parts, transformer_weights=weights)
