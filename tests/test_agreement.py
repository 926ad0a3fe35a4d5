"""Agreement figures pinned to published worked examples and independent computations."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from annotation.agreement import (
    agreement_report,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    landis_koch,
    pairwise_cohen,
    specific_agreement,
)

# Fleiss' kappa worked example (Wikipedia, "Fleiss' kappa"): 10 subjects, 14 raters,
# 5 categories; P-bar = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _counts(table: list[list[int]]) -> list[dict[str, int]]:
    return [{str(j + 1): n for j, n in enumerate(row) if n} for row in table]


def test_fleiss_matches_the_published_example() -> None:
    result = fleiss_kappa(_counts(FLEISS_TABLE))
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.expected == pytest.approx(0.213, abs=5e-4)
    assert result.kappa == pytest.approx(0.210, abs=5e-4)
    assert result.items == 10


def test_fleiss_matches_statsmodels_on_the_example() -> None:
    assert fleiss_kappa(_counts(FLEISS_TABLE)).kappa == pytest.approx(
        sm_fleiss(np.array(FLEISS_TABLE)), abs=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda raters: st.lists(
            st.lists(st.integers(0, 2), min_size=raters, max_size=raters), min_size=2, max_size=25
        )
    )
)
def test_fleiss_matches_statsmodels_with_constant_raters(rows: list[list[int]]) -> None:
    table = np.array([[Counter(r)[c] for c in range(3)] for r in rows])
    with np.errstate(all="ignore"):
        expected = sm_fleiss(table)
    ours = fleiss_kappa([{str(c): int(n) for c, n in enumerate(row) if n} for row in table]).kappa
    if ours is None:
        assert not math.isfinite(expected) or np.allclose(table.sum(0) / table.sum(), [1, 0, 0])
    else:
        assert ours == pytest.approx(expected, abs=1e-9)


def test_cohen_textbook_example() -> None:
    # 50 proposals: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> po 0.7, kappa 0.4
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    kappa, observed = cohen_kappa(pairs)
    assert observed == pytest.approx(0.7)
    assert kappa == pytest.approx(0.4)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1, max_size=40))
def test_cohen_matches_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    ours, _ = cohen_kappa(pairs)
    a, b = zip(*pairs, strict=True)
    if len(set(a) | set(b)) == 1:
        assert ours is None  # undefined: chance agreement is 1
        return
    with np.errstate(all="ignore"):
        theirs = cohen_kappa_score(list(a), list(b))
    if math.isnan(theirs):
        assert ours is None
    else:
        assert ours == pytest.approx(theirs, abs=1e-9)


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units,
# missing values; nominal alpha = 0.743.
KRIPPENDORFF_EXAMPLE = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _ratings_from_coders(coders: dict[str, list[int | None]]) -> dict[int, dict[str, str]]:
    units = len(next(iter(coders.values())))
    return {u: {c: str(v[u]) for c, v in coders.items() if v[u] is not None} for u in range(units)}


def test_krippendorff_matches_the_published_example() -> None:
    alpha = krippendorff_alpha(_ratings_from_coders(KRIPPENDORFF_EXAMPLE))
    assert alpha == pytest.approx(0.743, abs=5e-4)


def _alpha_by_coincidences(ratings: dict[int, dict[str, str]]) -> float:
    """Nominal alpha written out from the coincidence matrix, independently of the package."""
    values = sorted({v for r in ratings.values() for v in r.values()})
    o = {(a, b): 0.0 for a in values for b in values}
    for r in ratings.values():
        m = len(r)
        if m < 2:
            continue
        labels = list(r.values())
        for i, a in enumerate(labels):
            for j, b in enumerate(labels):
                if i != j:
                    o[(a, b)] += 1.0 / (m - 1)
    n_c = {a: sum(o[(a, b)] for b in values) for a in values}
    n = sum(n_c.values())
    d_o = sum(o[(a, b)] for a in values for b in values if a != b)
    d_e = sum(n_c[a] * n_c[b] for a in values for b in values if a != b) / (n - 1)
    return 1.0 - d_o / d_e


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["r1", "r2", "r3", "r4"]),
            st.sampled_from("xyz"),
            min_size=0,
            max_size=4,
        ),
        min_size=2,
        max_size=20,
    )
)
def test_krippendorff_matches_an_independent_computation(units: list[dict[str, str]]) -> None:
    ratings = dict(enumerate(units))
    pairable = {k: v for k, v in ratings.items() if len(v) >= 2}
    used = {x for v in pairable.values() for x in v.values()}
    ours = krippendorff_alpha(ratings)
    if len(used) < 2:
        return
    assert ours == pytest.approx(_alpha_by_coincidences(pairable), abs=1e-9)


def test_per_label_kappa_equals_overall_with_two_labels() -> None:
    counts = [{"perf": 2}, {"perf": 1, "non-perf": 1}, {"non-perf": 3}, {"perf": 2, "non-perf": 1}]
    result = fleiss_kappa(counts)
    assert result.per_label["perf"] == pytest.approx(result.kappa)
    assert result.per_label["non-perf"] == pytest.approx(result.kappa)


def test_specific_agreement_for_two_raters() -> None:
    # positive agreement = 2a / (2a + b + c) with a = both perf, b, c = disagreements
    counts = [{"perf": 2}] * 6 + [{"perf": 1, "non-perf": 1}] * 3 + [{"non-perf": 2}] * 5
    found = specific_agreement(counts)
    assert found["perf"] == pytest.approx(2 * 6 / (2 * 6 + 3))
    assert found["non-perf"] == pytest.approx(2 * 5 / (2 * 5 + 3))


@pytest.mark.parametrize(
    ("value", "reading"),
    [
        (-0.1, "poor"),
        (0.1, "slight"),
        (0.3, "fair"),
        (0.5, "moderate"),
        (0.698, "substantial"),
        (0.86, "almost perfect"),
        (None, "undefined"),
    ],
)
def test_landis_koch(value: float | None, reading: str) -> None:
    assert landis_koch(value) == reading


def test_report_counts_items_and_raters_behind_each_figure() -> None:
    ratings = {
        1: {"ann": "perf", "bob": "perf", "cat": "perf"},
        2: {"ann": "perf", "bob": "non-perf"},
        3: {"ann": "non-perf"},
        4: {},
    }
    report = agreement_report(ratings, items_in_set=5)
    assert (report.items, report.items_coded, report.items_multi_coded) == (5, 3, 2)
    assert report.raters == ["ann", "bob", "cat"]
    assert report.fleiss.items == 2
    pairs = {(p.rater_a, p.rater_b): p for p in pairwise_cohen(ratings)}
    assert pairs[("ann", "bob")].items == 2
    assert pairs[("ann", "cat")].items == 1
    data = report.as_json()
    assert {"fleiss_kappa", "krippendorff_alpha", "cohen_kappa"} <= set(data)


def test_nothing_to_compare_gives_undefined_not_an_error() -> None:
    report = agreement_report({1: {"ann": "perf"}, 2: {"ann": "perf"}}, items_in_set=2)
    assert report.fleiss.kappa is None
    assert report.krippendorff_alpha is None
    assert report.pairs == []
