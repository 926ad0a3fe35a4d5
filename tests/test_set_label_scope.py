"""A live vote counts toward a set only when its label is one of the set's labels or skip:
an item in two sets with other labels is settled, counted, queued, exported and
adjudicated in each by that set's votes alone; sets with the same labels share votes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.adjudication import conflicts_for_set, decisions_for_set, summary
from annotation.queue import next_items, visible_votes
from annotation.routing import ItemTaken, serve_next, submit
from annotation.sets import SetEdit, SetError, edit_set
from annotation.votes import undo
from curator.releases.labels import LabelConflictError, adjudicated_labels
from store import Store, open_store
from store.item_views import annotator_votes_in_set
from store.reranking import annotator_labels_in_set, unvoted_after
from store.routing import annotator_count, member_state, put_claim, rebuild_set, set_counters
from store.sets import NewSet, SetRow, add_set_labels, create_set, get_set, set_progress
from store.votes import ADJUDICATOR, live_votes_for_items, live_votes_in_set
from tests import raw_sql
from tests.annotation_data import Spec, add_items, vote
from tests.conftest import ROOT

T0 = datetime(2030, 1, 1, tzinfo=UTC)
PERF = ["perf", "non-perf"]
QUALITY = ["good", "bad"]


def items(store: Store, n: int) -> list[int]:
    return list(add_items(store, [Spec(f"k{i:03d}") for i in range(n)]).values())


def make(
    store: Store,
    name: str,
    labels: list[str],
    ids: list[int],
    votes_per_item: int = 2,
    overlap: str = "routed",
    blind: bool = True,
) -> SetRow:
    spec = NewSet(
        name, "commit", labels, votes_per_item=votes_per_item, overlap=overlap, blind=blind
    )
    return create_set(store, spec, ids)


def routing_state(store: Store, set_id: int) -> tuple[object, dict[str, int], dict[int, tuple]]:
    """The set's counters, annotator counts (zeros aside) and member states as stored."""
    counts = {
        r[0]: r[1]
        for r in raw_sql.query(
            store,
            "SELECT annotator, votes FROM set_annotator_counts WHERE set_id = ? AND votes <> 0",
            (set_id,),
        )
    }
    members = {
        r[0]: (r[1], r[2])
        for r in raw_sql.query(
            store, "SELECT item_id, votes, status FROM set_items WHERE set_id = ?", (set_id,)
        )
    }
    return set_counters(store, set_id), counts, members


def recount(store: Store, set_row: SetRow) -> tuple[dict[str, int], dict[int, int]]:
    """Annotator counts and votes per member, counted here from the live votes."""
    allowed = {*set_row.labels, "skip"}
    members = {
        r[0]
        for r in raw_sql.query(
            store, "SELECT item_id FROM set_items WHERE set_id = ?", (set_row.id,)
        )
    }
    per_annotator: dict[str, int] = {}
    per_item = dict.fromkeys(members, 0)
    for item_id, annotator, label in raw_sql.query(
        store, "SELECT item_id, annotator, label FROM live_votes WHERE role = 'annotator'"
    ):
        if item_id in members and label in allowed:
            per_annotator[annotator] = per_annotator.get(annotator, 0) + 1
            per_item[item_id] += 1
    return per_annotator, per_item


def assert_incremental_equals_rebuild(store: Store, set_row: SetRow) -> None:
    incremental = routing_state(store, set_row.id)
    annotators, per_item = recount(store, set_row)
    assert incremental[1] == annotators
    assert {i: v for i, (v, _) in incremental[2].items()} == per_item
    assert incremental[0].states() == summary(decisions_for_set(store, set_row))  # type: ignore[attr-defined]
    rebuild_set(store, set_row.id)
    assert routing_state(store, set_row.id) == incremental


# Settling and counting ------------------------------------------------------------------


def test_a_vote_in_one_set_does_not_settle_an_item_of_a_set_with_other_labels(
    store: Store,
) -> None:
    ids = items(store, 3)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    assert member_state(store, a.id, ids[0]) == (1, "unanimous")
    assert member_state(store, b.id, ids[0]) == (0, "pending")
    assert annotator_count(store, a.id, "alice") == 1
    assert annotator_count(store, b.id, "alice") == 0
    counters = set_counters(store, b.id)
    assert counters is not None
    assert (counters.votes, counters.voted_items, counters.pending) == (0, 0, 3)
    assert summary(decisions_for_set(store, b))["pending"] == 3


def test_a_set_made_after_the_votes_starts_with_none_of_another_sets_labels(
    store: Store,
) -> None:
    ids = items(store, 2)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    vote(store, ids[1], "bob", "skip", set_id=a.id)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    assert member_state(store, b.id, ids[0]) == (0, "pending")
    assert member_state(store, b.id, ids[1]) == (1, "conflict")  # skip counts everywhere
    assert annotator_count(store, b.id, "alice") == 0
    assert annotator_count(store, b.id, "bob") == 1
    assert_incremental_equals_rebuild(store, b)


def test_sets_with_the_same_labels_share_votes(store: Store) -> None:
    ids = items(store, 2)
    audit = make(store, "audit", PERF, ids)
    truth = make(store, "truth", list(reversed(PERF)), ids)
    vote(store, ids[0], "alice", "perf", set_id=audit.id)
    vote(store, ids[0], "bob", "perf", set_id=audit.id)
    assert member_state(store, truth.id, ids[0]) == (2, "unanimous")
    assert annotator_count(store, truth.id, "alice") == 1
    assert {v.annotator for v in live_votes_in_set(store, truth.id)} == {"alice", "bob"}


def test_a_vote_moved_to_a_label_outside_the_set_leaves_its_count_and_state(
    store: Store,
) -> None:
    ids = items(store, 1)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    vote(store, ids[0], "alice", "good", set_id=b.id)  # replaces her perf (one live vote)
    assert member_state(store, a.id, ids[0]) == (0, "pending")
    assert annotator_count(store, a.id, "alice") == 0
    assert member_state(store, b.id, ids[0]) == (1, "unanimous")
    assert annotator_count(store, b.id, "alice") == 1
    undo(store, "alice", in_set=b)  # back to perf
    assert member_state(store, a.id, ids[0]) == (1, "unanimous")
    assert (annotator_count(store, a.id, "alice"), annotator_count(store, b.id, "alice")) == (1, 0)
    for set_row in (a, b):
        assert_incremental_equals_rebuild(store, set_row)


def test_an_adjudication_with_another_sets_label_settles_nothing(store: Store) -> None:
    ids = items(store, 1)
    a = make(store, "a", PERF, ids)
    b = make(store, "b", QUALITY, ids)
    for who, label in (("x", "good"), ("y", "bad")):
        vote(store, ids[0], who, label, set_id=b.id)
    vote(store, ids[0], "judge", "perf", role=ADJUDICATOR, set_id=a.id)
    assert member_state(store, b.id, ids[0]) == (2, "conflict")
    assert [d.item_id for d in conflicts_for_set(store, b)] == ids
    assert conflicts_for_set(store, b)[0].adjudicated_by is None
    vote(store, ids[0], "judge", "good", role=ADJUDICATOR, set_id=b.id)
    assert member_state(store, b.id, ids[0]) == (2, "adjudicated")


# Incremental counters equal a rebuild ---------------------------------------------------


def test_counters_after_votes_relabels_undos_and_a_labels_edit_equal_a_rebuild(
    store: Store,
) -> None:
    ids = items(store, 5)
    a = make(store, "a", PERF, ids[:4])
    b = make(store, "b", QUALITY, ids[1:])
    vote(store, ids[0], "ann", "perf", set_id=a.id)
    vote(store, ids[1], "ann", "perf", set_id=a.id)
    vote(store, ids[1], "ben", "good", set_id=b.id)
    vote(store, ids[2], "ben", "skip", set_id=b.id)
    vote(store, ids[2], "cat", "non-perf", set_id=a.id)
    vote(store, ids[1], "ann", "bad", set_id=b.id)  # in a -> in b
    vote(store, ids[3], "cat", "good", set_id=b.id)
    vote(store, ids[3], "cat", "perf", set_id=a.id)  # in b -> in a
    undo(store, "cat")  # back to good
    vote(store, ids[4], "ann", "good", set_id=b.id)
    undo(store, "ann", in_set=b)  # no vote on ids[4] again
    vote(store, ids[2], "judge", "good", role=ADJUDICATOR, set_id=b.id)
    for set_row in (a, b):
        assert_incremental_equals_rebuild(store, set_row)
    assert annotator_count(store, a.id, "ann") == 1
    assert annotator_count(store, b.id, "ann") == 1
    assert (annotator_count(store, b.id, "cat"), member_state(store, b.id, ids[2])) == (
        1,
        (1, "adjudicated"),  # ben's skip and the judge; cat's non-perf is not a b label
    )
    grown = edit_set(store, "b", SetEdit(labels=[*QUALITY, "non-perf"]))
    assert annotator_count(store, b.id, "cat") == 2
    assert member_state(store, b.id, ids[2]) == (2, "adjudicated")
    vote(store, ids[2], "cat", "perf", set_id=a.id)  # leaves b
    vote(store, ids[1], "ben", "non-perf", set_id=a.id)  # now in both sets
    for set_row in (a, grown):
        assert_incremental_equals_rebuild(store, set_row)


ACTIONS = ["perf", "non-perf", "good", "bad", "skip", "undo", "undo-a", "undo-b", "judge"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.sampled_from(ACTIONS))))
def test_any_sequence_keeps_the_counters_of_both_sets_equal_to_a_rebuild(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, int, str]]
) -> None:
    with open_store(tmp_path_factory.mktemp("scope") / "s.db") as store:
        ids = items(store, 4)
        a = make(store, "a", PERF, ids[:3])
        b = make(store, "b", QUALITY, ids[1:])
        for who, item, action in steps:
            name = "xyz"[who]
            if action == "undo":
                undo(store, name)
            elif action in ("undo-a", "undo-b"):
                undo(store, name, in_set=a if action == "undo-a" else b)
            elif action == "judge":
                vote(store, ids[item], "judge", PERF[who % 2] if who else "good", role=ADJUDICATOR)
            else:
                vote(store, ids[item], name, action)
        for set_row in (a, b):
            assert_incremental_equals_rebuild(store, set_row)


# Readers of a set's votes ---------------------------------------------------------------


def test_the_set_readers_see_only_votes_of_the_set(store: Store) -> None:
    ids = items(store, 2)
    a = make(store, "a", PERF, ids)
    b = make(store, "b", QUALITY, ids)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    vote(store, ids[0], "bob", "good", set_id=b.id)
    vote(store, ids[0], "carol", "skip", set_id=b.id)
    in_b = {(v.annotator, v.label) for v in live_votes_in_set(store, b.id)}
    assert in_b == {("bob", "good"), ("carol", "skip")}
    in_a = {(v.annotator, v.label) for v in live_votes_in_set(store, a.id, "annotator")}
    assert in_a == {("alice", "perf"), ("carol", "skip")}
    on_item = live_votes_for_items(store, [ids[0]], set_id=b.id)
    assert {v.annotator for v in on_item} == {"bob", "carol"}
    assert len(live_votes_for_items(store, [ids[0]])) == 3  # the item in general: all
    assert set_progress(store, b.id) == {"items": 2, "voted_items": 1, "votes": 2}
    assert annotator_votes_in_set(store, b.id, "alice") == 0
    assert annotator_votes_in_set(store, a.id, "alice") == 1
    assert sorted(annotator_labels_in_set(store, b.id)) == [(ids[0], "good"), (ids[0], "skip")]
    open_b = make(store, "open-b", QUALITY, ids, blind=False)
    assert {v.annotator for v in visible_votes(store, open_b, ids[0], "dana")} == {"bob", "carol"}


def test_the_queue_of_a_set_with_other_labels_offers_the_item(store: Store) -> None:
    ids = items(store, 2)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    c = make(store, "c", QUALITY, ids, votes_per_item=1, overlap="all")
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    assert [e.item_id for e in next_items(store, a, "alice")] == [ids[1]]
    assert [e.item_id for e in next_items(store, c, "alice")] == ids
    assert [i for _, i in unvoted_after(store, b.id, -1, 10)] == ids
    own = serve_next(store, b, "alice", now=T0)  # her perf is no vote of b
    assert own is not None and own.entry.item_id == ids[0]
    other = serve_next(store, b, "bob", now=T0)  # alice holds the one slot of ids[0]
    assert other is not None and other.entry.item_id == ids[1]


def test_a_vote_from_another_set_does_not_get_past_a_full_item(store: Store) -> None:
    ids = items(store, 1)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    stamp = T0.isoformat(timespec="microseconds")
    put_claim(store, b.id, ids[0], "bob", stamp, "2030-01-01T00:10:00.000000+00:00")
    with pytest.raises(ItemTaken):
        submit(store, b, ids[0], "alice", "good", now=T0)


# Editing a set's labels -----------------------------------------------------------------


def test_votes_of_other_sets_do_not_block_a_labels_edit(store: Store) -> None:
    ids = items(store, 1)
    a = make(store, "a", PERF, ids)
    make(store, "b", QUALITY, ids)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    edited = edit_set(store, "b", SetEdit(labels=["good", "poor"]))
    assert edited.labels == ["good", "poor"]
    vote(store, ids[0], "bob", "good", set_id=edited.id)
    with pytest.raises(SetError, match="good"):
        edit_set(store, "b", SetEdit(labels=["fine", "poor"]))
    with pytest.raises(SetError, match="perf"):
        edit_set(store, "a", SetEdit(labels=["non-perf", "other"]))


def test_growing_a_sets_labels_counts_the_votes_that_now_belong(store: Store) -> None:
    ids = items(store, 2)
    a = make(store, "a", PERF, ids, votes_per_item=1)
    b = make(store, "b", QUALITY, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    vote(store, ids[1], "bob", "non-perf", set_id=a.id)
    grown = edit_set(store, "b", SetEdit(labels=[*QUALITY, "perf"]))
    assert member_state(store, b.id, ids[0]) == (1, "unanimous")
    assert annotator_count(store, b.id, "alice") == 1
    assert member_state(store, b.id, ids[1]) == (0, "pending")
    assert_incremental_equals_rebuild(store, grown)
    assert add_set_labels(store, b.id, ["non-perf"]) == [*QUALITY, "perf", "non-perf"]
    assert member_state(store, b.id, ids[1]) == (1, "unanimous")
    widened = get_set(store, "b")
    assert widened is not None
    assert_incremental_equals_rebuild(store, widened)


# Releases and the command line ----------------------------------------------------------


def test_a_released_label_keeps_only_the_votes_of_the_set_that_settled_it(store: Store) -> None:
    ids = items(store, 1)
    a = make(store, "a-perf", PERF, ids, votes_per_item=1)
    b = make(store, "b-quality", QUALITY, ids, votes_per_item=1)
    vote(store, ids[0], "alice", "perf", set_id=a.id)
    vote(store, ids[0], "bob", "bad", set_id=b.id)
    # One set's labels: that set's votes only.
    info = adjudicated_labels(store, "commit", [a.id])[ids[0]]
    assert info.label == "perf"
    assert [v["annotator"] for v in info.votes] == ["alice"]
    assert info.confidence == 1.0
    # Both sets: a record holds one label, so two different settled labels are refused.
    with pytest.raises(LabelConflictError, match="a-perf: perf, b-quality: bad"):
        adjudicated_labels(store, "commit")


def test_agreement_and_export_of_a_set_leave_out_another_sets_votes(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    sample = ROOT / "sample_data" / "annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    made = cli("set", "create", "quality", "--from-set", "gt", "--labels", "good,bad", "--open")
    assert made.exit_code == 0, made.output
    voted = cli("vote", "ex-001", "good", "--annotator", "dana", "--set", "quality")
    assert voted.exit_code == 0, voted.output
    agree = json.loads(cli("agree", "quality", "--json").output)
    assert agree["raters"] == ["dana"]
    assert set(agree["per_label"]) <= {"good", "bad"}
    assert json.loads(cli("agree", "gt", "--json").output)["raters"] == ["alice", "bob", "carol"]
    out = tmp_path / "quality.jsonl"
    exported = cli("export", "prodigy", "quality", "--out", str(out))
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    answers = sorted(
        (r["_annotator_id"], r["answer"], *r.get("accept", [])) for r in rows if "answer" in r
    )
    # dana's vote, and carol's one skip in the sample (a skip belongs to every set)
    assert answers == [("quality-carol", "ignore"), ("quality-dana", "accept", "good")]


def test_migration_recounts_sets_that_counted_other_sets_votes(tmp_path: Path) -> None:
    """A database written before votes were scoped by label: migration 10 restates every
    routed set, so a set that had counted another set's vote no longer does."""
    path = tmp_path / "old.db"
    with open_store(path) as s:
        ids = items(s, 2)
        perf = make(s, "perf-set", PERF, ids, votes_per_item=1)
        quality = make(s, "quality-set", QUALITY, ids, votes_per_item=1)
        vote(s, ids[0], "ann", "perf")
        right = routing_state(s, quality.id)
        conn = raw_sql.connection(s)
        # What the old routing wrote: the perf vote settled the item in the quality set.
        conn.execute(
            "UPDATE set_items SET votes = 1, status = 'unanimous' WHERE set_id = ? AND item_id = ?",
            (quality.id, ids[0]),
        )
        conn.execute(
            "UPDATE set_counters SET voted_items = 1, votes = 1, unanimous = 1, pending = 1"
            " WHERE set_id = ?",
            (quality.id,),
        )
        conn.execute(
            "INSERT INTO set_annotator_counts (set_id, annotator, votes) VALUES (?, 'ann', 1)",
            (quality.id,),
        )
        conn.execute("DELETE FROM schema_version WHERE version >= 10")
        assert routing_state(s, quality.id) != right
    seen: list[tuple[str, int, int]] = []
    with open_store(path, progress=lambda *a: seen.append(a)) as s:
        assert s.schema_version() >= 10
        assert routing_state(s, quality.id) == right
        assert member_state(s, quality.id, ids[0]) == (0, "pending")
        assert member_state(s, perf.id, ids[0]) == (1, "unanimous")
    assert ("recounting sets", 2, 2) in seen


def test_undo_in_a_set_skips_a_later_vote_that_does_not_count_there(store: Store) -> None:
    ids = items(store, 2)
    make(store, "perf-set", PERF, ids)
    quality = make(store, "quality-set", QUALITY, ids)
    vote(store, ids[1], "ann", "good")
    vote(store, ids[0], "ann", "perf")  # later, on a shared item, with the other set's label
    undone = undo(store, "ann", in_set=quality)
    assert undone is not None
    assert (undone.item_id, undone.undone_label) == (ids[1], "good")
    assert {(v.item_id, v.label) for v in live_votes_for_items(store, ids)} == {(ids[0], "perf")}


def test_vote_histories_of_a_set_leave_out_other_sets_labels(store: Store) -> None:
    from store.routing import timed_votes
    from store.trends import set_vote_history

    ids = items(store, 2)
    make(store, "perf-set", PERF, ids)
    quality = make(store, "quality-set", QUALITY, ids)
    vote(store, ids[0], "ann", "perf")
    vote(store, ids[1], "ann", "good")
    vote(store, ids[1], "bob", "skip")
    assert [(v.item_id, v.label) for v in timed_votes(store, quality.id)["ann"]] == [
        (ids[1], "good")
    ]
    # ann's perf on the first item takes her vote there away from the quality set
    assert [(v.item_id, v.annotator, v.label) for v in set_vote_history(store, quality.id)] == [
        (ids[0], "ann", None),
        (ids[1], "ann", "good"),
        (ids[1], "bob", "skip"),
    ]


def test_a_vote_that_takes_an_annotators_vote_from_another_set_says_so(
    cli,  # type: ignore[no-untyped-def]
) -> None:
    sample = ROOT / "sample_data" / "annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    made = cli("set", "create", "quality", "--from-set", "gt", "--labels", "good,bad", "--open")
    assert made.exit_code == 0, made.output
    replaced = cli("vote", "ex-001", "good", "--annotator", "alice", "--set", "quality")
    assert replaced.exit_code == 0, replaced.output
    assert "warning: this replaces alice's 'perf' on ex-001, which counted in set gt" in (
        replaced.output
    )
    again = cli("vote", "ex-001", "bad", "--annotator", "alice", "--set", "quality")
    assert again.exit_code == 0 and "warning" not in again.output  # nothing left to take
    fresh = cli("vote", "ex-002", "good", "--annotator", "dana", "--set", "quality")
    assert fresh.exit_code == 0 and "warning" not in fresh.output  # dana had no vote there


def test_the_weekly_agreement_replay_drops_a_vote_another_sets_label_replaced(
    store: Store,
) -> None:
    from annotation.set_reports import agreement_for_set
    from annotation.trends import agreement_by_week

    ids = items(store, 3)
    perf = make(store, "perf-set", PERF, ids)
    make(store, "quality-set", QUALITY, ids)
    pairs = [("perf", "perf"), ("non-perf", "perf"), ("perf", "non-perf")]
    for item, (ann, bob) in zip(ids, pairs, strict=True):
        vote(store, item, "ann", ann)
        vote(store, item, "bob", bob)
    vote(store, ids[0], "ann", "good")  # ann's perf on the first item leaves perf-set
    last = agreement_by_week(store, perf)[-1]
    live = agreement_for_set(store, perf)
    assert (last.votes, last.items) == (5, 3)
    assert last.kappa == live.fleiss.kappa
