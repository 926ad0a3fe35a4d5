"""Routing under a team's real habits: a claim whose item filled up while it was held
(votes cast past routing, a lowered votes per item) is not served again, and the first
claimers of an over-claimed item keep their slots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from annotation.routing import ItemTaken, serve_next, submit
from store import Store
from store.routing import rebuild_set
from store.sets import NewSet, SetRow, create_set, get_set, update_set
from tests import raw_sql
from tests.annotation_data import Spec, add_items, vote

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def make_set(store: Store, n: int, votes_per_item: int) -> SetRow:
    ids = add_items(store, [Spec(f"k{i:03d}") for i in range(n)])
    return create_set(
        store,
        NewSet("team", "commit", ["perf", "non-perf"], votes_per_item=votes_per_item),
        list(ids.values()),
    )


def claims(store: Store) -> set[tuple[int, str]]:
    return {(r[0], r[1]) for r in raw_sql.query(store, "SELECT item_id, annotator FROM claims")}


def test_a_held_item_filled_by_a_vote_past_routing_is_not_served_again(store: Store) -> None:
    set_row = make_set(store, 3, votes_per_item=1)
    held = serve_next(store, set_row, "ann", now=T0)
    assert held is not None
    # ben votes on it without going through the set's routing (`curator vote` without
    # --set, or a set with the same labels): the item is full while ann holds it
    vote(store, held.entry.item_id, "ben", "perf")
    with pytest.raises(ItemTaken, match="filled up while you held it"):
        submit(store, set_row, held.entry.item_id, "ann", "perf", now=T0)
    after = serve_next(store, set_row, "ann", now=T0)
    assert after is not None and after.entry.item_id != held.entry.item_id
    assert (held.entry.item_id, "ann") not in claims(store)
    submit(store, set_row, after.entry.item_id, "ann", "non-perf", now=T0)


def test_the_first_claimers_keep_their_slots_when_votes_per_item_drop(store: Store) -> None:
    set_row = make_set(store, 1, votes_per_item=3)
    served = [
        serve_next(store, set_row, who, now=T0 + timedelta(seconds=i))
        for i, who in enumerate(("ann", "ben", "cat"))
    ]
    assert {s.entry.item_id for s in served if s is not None} == {served[0].entry.item_id}  # type: ignore[union-attr]
    item = served[0].entry.item_id  # type: ignore[union-attr]
    update_set(store, set_row.id, votes_per_item=2)
    rebuild_set(store, set_row.id)
    set_row = get_set(store, "team")  # type: ignore[assignment]
    later = T0 + timedelta(minutes=1)
    # cat claimed last: two slots, two earlier claims; cat moves on, nothing is left
    with pytest.raises(ItemTaken, match="has 0 votes and 2 claims"):
        submit(store, set_row, item, "cat", "perf", now=later)
    assert serve_next(store, set_row, "cat", now=later) is None
    submit(store, set_row, item, "ben", "perf", now=later)
    submit(store, set_row, item, "ann", "perf", now=later)
    assert raw_sql.scalar(store, "SELECT votes FROM set_items WHERE item_id = ?", (item,)) == 2


def test_a_gold_item_answered_twice_counts_once_with_its_latest_answer(store: Store) -> None:
    from annotation.annotator_report import annotator_quality
    from annotation.gold import add_gold

    known_ids = add_items(store, [Spec("g0"), Spec("g1")])
    known = create_set(
        store,
        NewSet("known", "commit", ["perf", "non-perf"], votes_per_item=1),
        [*known_ids.values()],
    )
    for item in known_ids.values():
        vote(store, item, "oracle", "perf", set_id=known.id)
    work = make_set(store, 2, votes_per_item=1)
    add_gold(store, "team", "known", 0.5, 0)
    served = serve_next(store, work, "ann", now=T0)
    assert served is not None and served.gold
    # a slip, corrected by answering again (what `curator vote ITEM LABEL --set` does)
    submit(store, work, served.entry.item_id, "ann", "non-perf", now=T0)
    submit(store, work, served.entry.item_id, "ann", "perf", now=T0 + timedelta(seconds=5))
    (ann,) = annotator_quality(store, work)
    assert (ann.gold_answered, ann.gold_correct) == (1, 1)
    assert sum(w.answers for w in ann.windows) == 1
