"""Labeler evaluation against final labels, checked against scikit-learn."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

from annotation.evaluation import evaluate
from annotation.set_reports import evaluate_on_set
from annotation.sets import DrawSpec, create_sampled_set
from store import Store
from store.sets import set_item_ids
from tests import raw_sql
from tests.annotation_data import add_items, many, vote

LABELS = ["perf", "non-perf"]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS)), min_size=1, max_size=60)
)
def test_scores_match_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    truth = {i: t for i, (t, _) in enumerate(pairs)}
    predicted = {i: p for i, (_, p) in enumerate(pairs)}
    result = evaluate("x", truth, predicted, LABELS)
    y_true = [t for t, _ in pairs]
    y_pred = [p for _, p in pairs]
    p, r, f, support = precision_recall_fscore_support(
        y_true, y_pred, labels=LABELS, zero_division=0.0
    )
    for i, scores in enumerate(result.classes):
        assert scores.support == support[i]
        if scores.precision is not None:
            assert scores.precision == pytest.approx(p[i])
        if scores.recall is not None:
            assert scores.recall == pytest.approx(r[i])
        named = sum(1 for t, q in pairs if t == LABELS[i] or q == LABELS[i])
        assert (scores.f1 is None) == (named == 0)  # undefined only when no side names it
        if scores.f1 is not None:
            assert scores.f1 == pytest.approx(f[i])
    assert result.accuracy == pytest.approx(accuracy_score(y_true, y_pred))
    matrix = confusion_matrix(y_true, y_pred, labels=LABELS)
    assert [[result.confusion[t][q] for q in LABELS] for t in LABELS] == matrix.tolist()


def test_fpr_and_missing_predictions_are_counted() -> None:
    truth = {1: "perf", 2: "perf", 3: "non-perf", 4: "non-perf", 5: "non-perf"}
    predicted = {1: "perf", 3: "perf", 4: "non-perf"}
    result = evaluate("x", truth, predicted, LABELS)
    assert result.missing == 2
    assert result.predicted == 3
    perf = result.classes[0]
    assert perf.fpr == pytest.approx(0.5)  # one of two scored negatives predicted perf
    assert perf.precision == pytest.approx(0.5)


def test_a_labeler_that_never_names_perf_scores_f1_zero_not_undefined() -> None:
    """Missing every perf item is an F1 of 0 (shown as 0.000), not a dash that reads
    like a labeler that was never scored."""
    truth = {1: "perf", 2: "perf", 3: "non-perf"}
    result = evaluate("x", truth, dict.fromkeys(truth, "non-perf"), LABELS)
    perf = result.classes[0]
    assert perf.precision is None and perf.recall == 0.0
    assert perf.f1 == 0.0
    assert result.as_json()["per_class"]["perf"]["f1"] == 0.0  # type: ignore[index]
    # a set without perf items, where the labeler still says perf once: F1 0 as well
    fp_only = evaluate("x", {1: "non-perf", 2: "non-perf"}, {1: "perf", 2: "non-perf"}, LABELS)
    assert fp_only.classes[0].f1 == 0.0


def test_unexpected_predicted_labels_count_as_errors() -> None:
    result = evaluate("x", {1: "perf", 2: "non-perf"}, {1: "unsure", 2: "non-perf"}, LABELS)
    assert result.confusion["perf"]["unsure"] == 1
    assert result.accuracy == pytest.approx(0.5)


def test_evaluate_on_a_set_uses_final_labels(store: Store) -> None:
    add_items(store, many(20, positive_every=2))
    s, _ = create_sampled_set(store, "gt", DrawSpec(kind="commit", sample=6, seed=1))
    items = set_item_ids(store, s.id)
    for item in items[:5]:
        vote(store, item, "ann", "perf")
        vote(store, item, "bob", "perf")
    result = evaluate_on_set(store, s, "keyword@1")
    assert result.items == 5  # the sixth item has no final label yet
    perf = result.classes[0]
    assert perf.support == 5
    predicted_perf = sum(
        1
        for item in items[:5]
        if raw_sql.scalar(store, "SELECT label FROM predictions WHERE item_id = ?", (item,))
        == "perf"
    )
    assert perf.recall == pytest.approx(predicted_perf / 5)
