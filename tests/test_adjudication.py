"""Final labels: unanimous, majority, conflicts (tie, skipped), adjudication, drift."""

from __future__ import annotations

import pytest

from annotation.adjudication import (
    annotator_drift,
    decide,
    decisions_for_set,
    final_labels,
    summary,
)
from annotation.sets import DrawSpec, create_sampled_set
from store import Store
from store.sets import set_item_ids
from store.votes import ADJUDICATOR
from tests.annotation_data import add_items, many, vote


@pytest.mark.parametrize(
    ("votes", "required", "rule", "status", "label", "reason"),
    [
        ({"a": "perf", "b": "perf"}, 2, "majority", "unanimous", "perf", None),
        ({"a": "perf", "b": "perf", "c": "non-perf"}, 2, "majority", "majority", "perf", None),
        ({"a": "perf", "b": "non-perf"}, 2, "majority", "conflict", None, "tie"),
        ({"a": "perf", "b": "skip"}, 2, "majority", "conflict", None, "skipped"),
        ({"a": "skip", "b": "skip"}, 2, "majority", "conflict", None, "skipped"),
        ({"a": "perf"}, 2, "majority", "pending", None, None),
        ({}, 1, "majority", "pending", None, None),
        ({"a": "perf"}, 1, "majority", "unanimous", "perf", None),
        ({"a": "perf", "b": "perf", "c": "skip"}, 2, "majority", "unanimous", "perf", None),
        (
            {"a": "perf", "b": "perf", "c": "non-perf"},
            2,
            "unanimous",
            "conflict",
            None,
            "disagreement",
        ),
        ({"a": "perf", "b": "perf", "c": "skip"}, 2, "unanimous", "conflict", None, "skipped"),
    ],
)
def test_decide(
    votes: dict[str, str],
    required: int,
    rule: str,
    status: str,
    label: str | None,
    reason: str | None,
) -> None:
    d = decide(1, votes, required, rule)
    assert (d.status, d.label, d.reason) == (status, label, reason)


def test_adjudicator_settles_and_skip_does_not() -> None:
    d = decide(1, {"a": "perf", "b": "non-perf"}, 2, adjudication=("judge", "non-perf"))
    assert (d.status, d.label, d.adjudicated_by) == ("adjudicated", "non-perf", "judge")
    d = decide(1, {"a": "perf", "b": "non-perf"}, 2, adjudication=("judge", "skip"))
    assert d.status == "conflict"


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown rule"):
        decide(1, {}, 1, "coin-flip")


def test_set_decisions_from_stored_votes(store: Store) -> None:
    add_items(store, many(10))
    s, _ = create_sampled_set(store, "gt", DrawSpec(kind="commit", sample=4, seed=1))
    a, b, c, d = set_item_ids(store, s.id)
    for item in (a, b, c):
        vote(store, item, "ann", "perf")
    vote(store, a, "bob", "perf")
    vote(store, b, "bob", "non-perf")
    vote(store, c, "bob", "skip")
    decisions = {x.item_id: x for x in decisions_for_set(store, s)}
    assert decisions[a].status == "unanimous"
    assert (decisions[b].status, decisions[b].reason) == ("conflict", "tie")
    assert (decisions[c].status, decisions[c].reason) == ("conflict", "skipped")
    assert decisions[d].status == "pending"
    vote(store, b, "judge", "non-perf", role=ADJUDICATOR)
    assert final_labels(store, s) == {a: "perf", b: "non-perf"}
    assert summary(decisions_for_set(store, s)) == {
        "unanimous": 1,
        "majority": 0,
        "adjudicated": 1,
        "conflict": 1,
        "pending": 1,
    }
    drift = {x.annotator: x for x in annotator_drift(decisions_for_set(store, s))}
    assert (drift["ann"].items, drift["ann"].agreeing) == (2, 1)
    assert (drift["bob"].items, drift["bob"].agreeing) == (2, 2)
