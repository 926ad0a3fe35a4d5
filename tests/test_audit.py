"""Audit sample sizes, Wilson intervals, stratified draws and the precision report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from annotation.audit import audit_report, cochran_size, draw_audit, wilson_interval
from annotation.sampling import SamplingError
from annotation.sets import SetError
from store import Store
from store.sets import set_item_ids
from tests.annotation_data import Spec, add_items, many, vote


def test_cochran_large_population_is_384() -> None:
    assert cochran_size(None) == 384
    assert cochran_size(10_000_000) == 384


@pytest.mark.parametrize(
    # Krejcie and Morgan's (1970) table, the same formula with the correction
    ("population", "size"),
    [(100, 80), (500, 217), (1000, 278), (10_000, 370), (10, 10), (1, 1)],
)
def test_cochran_finite_population_correction(population: int, size: int) -> None:
    assert cochran_size(population) == size


def test_cochran_other_levels() -> None:
    assert cochran_size(None, confidence=0.99, margin=0.05) == 663
    assert cochran_size(None, confidence=0.95, margin=0.03) == 1067


def test_wilson_known_values() -> None:
    low, high = wilson_interval(0, 10)
    assert (low, high) == (pytest.approx(0.0, abs=1e-12), pytest.approx(0.2775, abs=1e-4))
    low, high = wilson_interval(10, 10)
    assert (low, high) == (pytest.approx(0.7225, abs=1e-4), pytest.approx(1.0, abs=1e-12))
    low, high = wilson_interval(346, 384)  # about the papers' 0.90 audit
    assert low == pytest.approx(0.8671, abs=5e-4)
    assert high == pytest.approx(0.9271, abs=5e-4)


@given(
    st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.9, 0.95, 0.99]),
)
def test_wilson_matches_statsmodels(counts: tuple[int, int], confidence: float) -> None:
    successes, n = counts
    if n == 0:
        assert wilson_interval(0, 0) == (0.0, 1.0)
        return
    low, high = wilson_interval(successes, n, confidence)
    theirs = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
    assert low == pytest.approx(theirs[0], abs=1e-9)
    assert high == pytest.approx(theirs[1], abs=1e-9)


def test_draw_uses_cochran_size_and_stratifies(store: Store) -> None:
    ids = add_items(store, many(2000, positive_every=2))  # 1000 positives
    result = draw_audit(store, "audit", "keyword@1", stratify=["language"], seed=3)
    assert result.population == 1000
    assert result.size == 278
    members = set_item_ids(store, result.set_row.id)
    assert len(members) == 278
    positives = {i for k, i in ids.items() if int(k[1:]) % 2 == 0}
    assert set(members) <= positives
    # proportional allocation over the three languages of the positives
    assert sum(result.allocation.values()) == 278
    assert max(result.allocation.values()) - min(result.allocation.values()) <= 1
    assert result.set_row.purpose == "audit"
    assert result.set_row.params["audit"]["population"] == 1000


def test_draw_resolves_latest_labeler_version(store: Store) -> None:
    add_items(store, many(50), labeler="student@1")
    add_items(store, [Spec("x1", prediction="perf")], labeler="student@2")
    result = draw_audit(store, "audit", "student@latest")
    assert result.set_row.params["audit"]["labeler"] == "student@2"
    assert result.population == 1


def test_draw_refuses_when_nothing_to_audit(store: Store) -> None:
    add_items(store, [Spec("a", prediction="non-perf")])
    with pytest.raises(SamplingError, match="is labeled 'perf' by keyword@1; nothing to audit"):
        draw_audit(store, "audit", "keyword@1")
    with pytest.raises(SamplingError, match=r"tfidf-lr@9 has labeled no commit item .*predict"):
        draw_audit(store, "audit", "tfidf-lr@9")
    with pytest.raises(SetError, match="no predictions"):
        draw_audit(store, "audit", "ghost@latest")


def test_draw_from_one_set_or_from_the_items_no_one_voted_on(store: Store) -> None:
    from annotation.sets import DrawSpec, create_sampled_set

    ids = add_items(store, many(40, positive_every=1))  # every item a positive
    subset = create_sampled_set(store, "subset", DrawSpec(kind="commit", sample=10, seed=2))[0]
    in_subset = set(set_item_ids(store, subset.id))
    from_subset = draw_audit(store, "a1", "keyword@1", from_set="subset")
    assert from_subset.population == 10
    assert set(set_item_ids(store, from_subset.set_row.id)) <= in_subset
    assert from_subset.set_row.params["audit"]["from_set"] == "subset"

    voted = sorted(ids.values())[:25]  # labeled training data the labeler learned from
    for item in voted:
        vote(store, item, "gold", "perf")
    fresh = draw_audit(store, "a2", "keyword@1", unlabeled=True)
    assert fresh.population == 15
    assert not set(set_item_ids(store, fresh.set_row.id)) & set(voted)
    assert fresh.set_row.params["audit"]["unlabeled"] is True
    for item in sorted(ids.values())[25:]:
        vote(store, item, "gold", "perf")
    with pytest.raises(SamplingError, match="no one has voted on"):
        draw_audit(store, "a3", "keyword@1", unlabeled=True)
    with pytest.raises(SetError, match="no set named"):
        draw_audit(store, "a4", "keyword@1", from_set="ghost")


def test_report_precision_and_strata(store: Store) -> None:
    add_items(store, many(40, positive_every=1))
    draw = draw_audit(store, "audit", "keyword@1", stratify=["language"], size=12, seed=1)
    members = set_item_ids(store, draw.set_row.id)
    for n, item in enumerate(members[:10]):
        vote(store, item, "ann", "perf" if n < 8 else "non-perf")
    report = audit_report(store, "audit")
    assert report.overall.judged == 10
    assert report.overall.correct == 8
    assert report.overall.value == pytest.approx(0.8)
    assert (report.overall.low, report.overall.high) == pytest.approx(wilson_interval(8, 10))
    assert report.pending == 2
    assert sum(p.judged for p in report.strata.values()) == 10
    assert set(report.strata) <= {"python", "java", "cpp"}


def test_report_refuses_a_set_that_is_not_an_audit(store: Store) -> None:
    from annotation.sets import DrawSpec, create_sampled_set

    add_items(store, many(10))
    create_sampled_set(store, "gt", DrawSpec(kind="commit"))
    with pytest.raises(SetError, match="not an audit"):
        audit_report(store, "gt")


def test_audit_draw_unlabeled_through_the_cli(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from store import open_store

    with open_store(tmp_path / "cli.db") as s:
        ids = add_items(s, many(30, positive_every=1))
        for item in sorted(ids.values())[:20]:
            vote(s, item, "gold", "perf")
    drawn = cli("audit", "draw", "fresh", "--from-labeler", "keyword@1", "--unlabeled", "--json")
    assert drawn.exit_code == 0, drawn.output
    assert json.loads(drawn.stdout)["population"] == 10
    missing = cli("audit", "draw", "x", "--from-labeler", "keyword@1", "--from-set", "ghost")
    assert missing.exit_code == 1 and "no set named 'ghost'" in missing.stderr


def test_a_given_size_reports_the_margin_it_buys(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``--size 30`` of 1,000 said "+/-5%", the margin asked for, not the one drawn."""
    import json

    from annotation.audit import cochran_margin
    from store import open_store

    with open_store(tmp_path / "cli.db") as s:
        add_items(s, many(2000, positive_every=2))  # 1000 positives
    assert cochran_margin(cochran_size(1000), 1000) == pytest.approx(0.05, abs=0.001)
    assert cochran_margin(1000, 1000) == 0.0
    small = cli("audit", "draw", "a30", "--from-labeler", "keyword@1", "--size", "30")
    assert small.exit_code == 0, small.output
    bought = cochran_margin(30, 1000)
    assert 0.17 < bought < 0.18
    assert f"(--size 30: 95% confidence, +/-{100 * bought:.3g}%)" in " ".join(small.stdout.split())
    drawn = json.loads(
        cli("audit", "draw", "a", "--from-labeler", "keyword@1", "--json", "--margin", "0.1").stdout
    )
    assert (drawn["items"], drawn["margin"]) == (cochran_size(1000, margin=0.1), 0.1)
