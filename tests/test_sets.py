"""Sampled sets: seeded and re-derivable, stratified, balanced, repository-disjoint."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.sampling import SamplingError, allocate, group_strata, sample_strata
from annotation.sets import DrawSpec, SetError, create_sampled_set, create_split, draw, redraw
from annotation.splits import SplitError, parse_parts, split_by_source
from store import Store
from store.commits import insert_predictions
from store.records import PredictionRow
from store.sets import Candidate, NewSet, candidates, create_set, set_item_ids, sources_in_sets
from tests.annotation_data import Spec, add_items, many


def test_same_seed_same_set_and_redraw_matches(store: Store) -> None:
    add_items(store, many(300))
    spec = DrawSpec(kind="commit", sample=40, stratify=["language", "keyword"], seed=7)
    row, allocation = create_sampled_set(store, "a", spec)
    again, _ = create_sampled_set(store, "b", spec)
    assert set_item_ids(store, row.id) == set_item_ids(store, again.id)
    assert redraw(store, "a") == set_item_ids(store, row.id)
    other, _ = create_sampled_set(store, "c", DrawSpec(kind="commit", sample=40, seed=8))
    assert set_item_ids(store, other.id) != set_item_ids(store, row.id)
    assert row.params["draw"]["seed"] == 7
    assert row.params["draw"]["stratify"] == ["language", "keyword"]
    assert sum(allocation.values()) == 40


@pytest.mark.parametrize("stratum", ["keyword", "pred:keyword@latest"])
def test_a_redraw_reads_the_labeler_versions_the_draw_read(store: Store, stratum: str) -> None:
    ids = add_items(store, many(120, positive_every=4))
    spec = DrawSpec(kind="commit", sample=30, stratify=[stratum], seed=3)
    row, allocation = create_sampled_set(store, "a", spec)
    assert row.params["draw"]["strata_labelers"] == {"keyword@latest": "keyword@1"}
    for item_id in ids.values():  # a newer keyword version calls every item perf
        insert_predictions(store, item_id, [PredictionRow("keyword@3", "perf", 1.0)])
    assert redraw(store, "a") == set_item_ids(store, row.id)
    unpinned = DrawSpec.from_params({**row.params["draw"], "strata_labelers": {}})
    assert draw(store, unpinned)[1] == {"perf": 30}  # what a draw made now reads
    assert set(allocation) == {"perf", "non-perf"}


def test_keyword_and_its_pred_form_are_one_stratum(store: Store) -> None:
    add_items(store, many(60, positive_every=3))
    both = DrawSpec(kind="commit", sample=12, stratify=["keyword", "pred:keyword@latest"])
    one = DrawSpec(kind="commit", sample=12, stratify=["keyword"])
    a, alloc_a = create_sampled_set(store, "a", both)
    b, alloc_b = create_sampled_set(store, "b", one)
    assert alloc_a == alloc_b and "|" not in "".join(alloc_a)
    assert set_item_ids(store, a.id) == set_item_ids(store, b.id)


def test_stratified_draw_is_proportional(store: Store) -> None:
    specs = [Spec(f"p{i}", language="python") for i in range(60)]
    specs += [Spec(f"j{i}", language="java") for i in range(30)]
    specs += [Spec(f"c{i}", language="cpp") for i in range(10)]
    add_items(store, specs)
    row, allocation = create_sampled_set(
        store, "s", DrawSpec(kind="commit", sample=20, stratify=["language"], seed=1)
    )
    assert allocation == {"cpp": 2, "java": 6, "python": 12}
    langs = Counter(c.language for c in candidates(store, "commit", within_set=row.id))
    assert langs == Counter({"python": 12, "java": 6, "cpp": 2})


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3), st.integers(1, 50), min_size=1, max_size=8
    ),
    st.integers(0, 400),
)
def test_allocation_sums_and_respects_sizes(sizes: dict[str, int], n: int) -> None:
    quota = allocate(sizes, n)
    assert sum(quota.values()) == min(n, sum(sizes.values()))
    assert all(0 <= quota[k] <= sizes[k] for k in sizes)


def test_balanced_draw_takes_half_from_each_side(store: Store) -> None:
    add_items(store, many(200, positive_every=5))  # 40 positives, 160 negatives
    row, _ = create_sampled_set(
        store, "bal", DrawSpec(kind="commit", sample=30, balanced="keyword@1", seed=2)
    )
    predicted = Counter(
        c.predictions["keyword@1"]
        for c in candidates(store, "commit", ["keyword@1"], within_set=row.id)
    )
    assert predicted == Counter({"perf": 15, "non-perf": 15})
    with pytest.raises(SamplingError, match="balanced draw"):
        create_sampled_set(
            store, "too-big", DrawSpec(kind="commit", sample=100, balanced="keyword@1")
        )


def test_exclude_repos_of_keeps_sets_repository_disjoint(store: Store) -> None:
    add_items(store, many(200, sources=10))
    dev, _ = create_sampled_set(store, "dev", DrawSpec(kind="commit", sample=10, seed=1))
    ev, _ = create_sampled_set(
        store, "eval", DrawSpec(kind="commit", sample=60, seed=1, exclude_repos_of=["dev"])
    )
    assert sources_in_sets(store, [dev.id]).isdisjoint(sources_in_sets(store, [ev.id]))
    with pytest.raises(SetError, match="no set named"):
        create_sampled_set(store, "x", DrawSpec(kind="commit", sample=1, exclude_repos_of=["nope"]))


def test_a_set_name_is_used_once(store: Store) -> None:
    add_items(store, many(10))
    create_sampled_set(store, "gt", DrawSpec(kind="commit", sample=3))
    with pytest.raises(SetError, match="already exists"):
        create_sampled_set(store, "gt", DrawSpec(kind="commit", sample=3))


def test_asking_for_more_than_the_pool_is_an_error(store: Store) -> None:
    add_items(store, many(5))
    with pytest.raises(SamplingError, match="only 5 qualify"):
        create_sampled_set(store, "gt", DrawSpec(kind="commit", sample=6))


def test_split_creates_disjoint_sets_covering_everything(store: Store) -> None:
    add_items(store, many(300, sources=12))
    parts = parse_parts("dev:10,eval:10,train:80")
    created = create_split(store, "commit", parts, seed=4)
    members = [set(set_item_ids(store, s.id)) for s in created]
    assert sum(len(m) for m in members) == 300
    assert set.union(*members) == {c.item_id for c in candidates(store, "commit")}
    sources = [sources_in_sets(store, [s.id]) for s in created]
    for i in range(3):
        for j in range(i + 1, 3):
            assert sources[i].isdisjoint(sources[j])
    assert len(members[2]) > len(members[0])


def test_split_parts_take_the_split_sets_labels_and_votes_per_item(store: Store) -> None:
    """Splitting a one-vote set made parts that waited for a second vote on every item."""
    ids = list(add_items(store, many(40, sources=8)).values())
    create_set(store, NewSet("whole", "commit", ["fast", "slow"], votes_per_item=1), ids)
    parts = parse_parts("a:50,b:50")
    inherited = create_split(store, "commit", parts, seed=1, within="whole")
    assert [(s.labels, s.votes_per_item) for s in inherited] == [(["fast", "slow"], 1)] * 2
    given = create_split(store, "commit", parse_parts("c:50,d:50"), 1, "whole", ["x", "y"], True, 3)
    assert [(s.labels, s.votes_per_item) for s in given] == [(["x", "y"], 3)] * 2
    plain = create_split(store, "commit", parse_parts("e:50,f:50"), seed=1)
    assert [(s.labels, s.votes_per_item) for s in plain] == [(["perf", "non-perf"], 2)] * 2


def test_parse_parts_rejects_bad_specs() -> None:
    assert parse_parts("a:1,b:3") == [("a", 0.25), ("b", 0.75)]
    for bad in ("a", "a:x", "a:0", "a:1,a:2", ":3,b:1", "a:1"):
        with pytest.raises(SplitError):
            parse_parts(bad)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 15), min_size=1, max_size=120),
    st.lists(st.integers(1, 10), min_size=2, max_size=4),
    st.integers(0, 1000),
)
def test_split_never_shares_a_repository(sources: list[int], weights: list[int], seed: int) -> None:
    cands = [Candidate(i, f"k{i}", f"repo-{s}", None, None, {}) for i, s in enumerate(sources)]
    total = sum(weights)
    parts = [(f"p{i}", w / total) for i, w in enumerate(weights)]
    assigned = split_by_source(cands, parts, seed)
    seen: dict[str, str] = {}
    for name, ids in assigned.items():
        for item_id in ids:
            repo = cands[item_id].source
            assert seen.setdefault(repo, name) == name
    assert sorted(i for ids in assigned.values() for i in ids) == list(range(len(sources)))
    assert split_by_source(cands, parts, seed) == assigned


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.sampled_from(["py", "java"])), min_size=1, max_size=80
    ),
    st.integers(0, 100),
    st.integers(1, 60),
)
def test_stratified_sample_is_seeded_and_has_no_repeats(
    rows: list[tuple[int, str]], seed: int, n: int
) -> None:
    by_language: dict[str, list[int]] = {}
    for i, (_, lang) in enumerate(rows):
        by_language.setdefault(lang, []).append(i)
    groups = [((lang,), ids) for lang, ids in by_language.items()]
    n = min(n, len(rows))
    first, _ = sample_strata(group_strata(groups, ["language"]), n, random.Random(seed))
    second, _ = sample_strata(
        group_strata(list(reversed(groups)), ["language"]), n, random.Random(seed)
    )
    assert first == second
    assert len(set(first)) == n


def test_unknown_stratum_is_a_clear_error(store: Store) -> None:
    add_items(store, many(10))
    with pytest.raises(SamplingError, match="unknown stratum 'colour'"):
        create_sampled_set(store, "x", DrawSpec(kind="commit", sample=2, stratify=["colour"]))
