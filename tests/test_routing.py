"""Routing: each item reaches exactly ``votes_per_item`` annotators, across connections
and processes, with leases that expire and are reclaimed; counters stay equal to a full
recount; gold items stay out of votes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.adjudication import decisions_for_set, summary
from annotation.routing import ItemTaken, serve_next, submit
from annotation.votes import VoteError, undo
from store import Store, open_store
from store.routing import rebuild_set, set_counters
from store.sets import NewSet, SetRow, create_set, get_set, update_set
from tests import raw_sql
from tests.annotation_data import Spec, add_items, vote
from tests.tui_store import ROOT

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def make_set(store: Store, n: int, votes_per_item: int = 2, overlap: str = "routed") -> SetRow:
    ids = add_items(store, [Spec(f"k{i:05d}") for i in range(n)])
    return create_set(
        store,
        NewSet(
            "team",
            "commit",
            ["perf", "non-perf"],
            votes_per_item=votes_per_item,
            overlap=overlap,
        ),
        list(ids.values()),
    )


def votes_per_item(store: Store) -> Counter[int]:
    return Counter(
        r[0]
        for r in raw_sql.query(store, "SELECT item_id FROM live_votes WHERE role = 'annotator'")
    )


def assert_counters_match_a_recount(store: Store, set_row: SetRow) -> None:
    counters = set_counters(store, set_row.id)
    assert counters is not None
    states = summary(decisions_for_set(store, set_row))
    assert counters.states() == states
    live = votes_per_item(store)
    members = raw_sql.query(
        store, "SELECT item_id, votes FROM set_items WHERE set_id = ?", (set_row.id,)
    )
    assert {r[0]: r[1] for r in members} == {r[0]: live.get(r[0], 0) for r in members}
    assert counters.votes == sum(live.get(r[0], 0) for r in members)
    assert counters.items == len(members)


# The model: three annotators on three connections, steps in any order ---------------------

STEP = st.tuples(st.integers(0, 2), st.sampled_from(["serve", "vote", "vote", "drop", "tick"]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=60))
def test_any_interleaving_ends_with_every_item_at_exactly_n_votes(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, str]]
) -> None:
    db = tmp_path_factory.mktemp("route") / "r.db"
    with open_store(db) as setup:
        set_row = make_set(setup, 8)
    stores = [open_store(db) for _ in range(3)]
    names = ["ann", "ben", "cat"]
    served: list[int | None] = [None, None, None]
    clock = T0
    try:
        for who, action in steps:
            store = stores[who]
            if action == "serve":
                got = serve_next(store, set_row, names[who], lease_minutes=1, now=clock)
                served[who] = got.entry.item_id if got else None
            elif action == "vote" and served[who] is not None:
                # refused when it is late: the lease ran out and the item filled up
                with contextlib.suppress(VoteError):
                    submit(store, set_row, served[who], names[who], "perf", now=clock)
                served[who] = None
            elif action == "drop":
                served[who] = None  # walked away: the claim stays until the lease ends
            elif action == "tick":
                clock += timedelta(seconds=45)
            assert max(votes_per_item(store).values(), default=0) <= 2
        clock += timedelta(minutes=5)  # every lease still held has run out
        for _ in range(40):
            progressed = False
            for who in range(3):
                got = serve_next(stores[who], set_row, names[who], lease_minutes=1, now=clock)
                if got is not None:
                    submit(stores[who], set_row, got.entry.item_id, names[who], "perf", now=clock)
                    progressed = True
            if not progressed:
                break
        counts = votes_per_item(stores[0])
        assert sorted(counts.values()) == [2] * 8
        assert_counters_match_a_recount(stores[0], set_row)
    finally:
        for s in stores:
            s.close()


def test_a_claim_holds_the_last_slot_until_its_lease_ends(store: Store) -> None:
    set_row = make_set(store, 1)
    first = serve_next(store, set_row, "ann", lease_minutes=10, now=T0)
    second = serve_next(store, set_row, "ben", lease_minutes=10, now=T0)
    assert first is not None and second is not None
    assert first.entry.item_id == second.entry.item_id  # two slots, two claims
    assert serve_next(store, set_row, "cat", lease_minutes=10, now=T0) is None
    # ann's lease ends without a vote: the slot is free again for cat
    later = T0 + timedelta(minutes=11)
    submit(store, set_row, second.entry.item_id, "ben", "perf", now=T0 + timedelta(minutes=1))
    reclaimed = serve_next(store, set_row, "cat", lease_minutes=10, now=later)
    assert reclaimed is not None and reclaimed.entry.item_id == first.entry.item_id
    submit(store, set_row, first.entry.item_id, "cat", "perf", now=later)
    # ann comes back after her lease: the item is full, her late vote is refused
    with pytest.raises(ItemTaken, match="already has the 2 annotators"):
        submit(store, set_row, first.entry.item_id, "ann", "perf", now=later)
    assert serve_next(store, set_row, "ann", lease_minutes=10, now=later) is None


def test_items_reach_n_votes_before_any_gets_n_plus_one(store: Store) -> None:
    set_row = make_set(store, 4, votes_per_item=1)
    ids = []
    for _ in range(2):
        got = serve_next(store, set_row, "ann", now=T0)
        assert got is not None
        ids.append(got)
        submit(store, set_row, got.entry.item_id, "ann", "perf", now=T0)
    # raising the votes per item reopens settled items, least-voted first
    update_set(store, set_row.id, votes_per_item=2)
    rebuild_set(store, set_row.id)
    set_row = get_set(store, "team")
    assert set_row is not None
    order = []
    for _ in range(4):
        got = serve_next(store, set_row, "ben", now=T0)
        assert got is not None
        order.append(got.entry.item_id)
        submit(store, set_row, got.entry.item_id, "ben", "non-perf", now=T0)
    voted_by_ann = {g.entry.item_id for g in ids}
    assert set(order[:2]).isdisjoint(voted_by_ann)  # the items with no vote come first
    assert set(order[2:]) == voted_by_ann


def test_settled_items_and_conflicts_leave_the_queue(store: Store) -> None:
    set_row = make_set(store, 2)
    a, b = (r[0] for r in raw_sql.query(store, "SELECT item_id FROM set_items ORDER BY position"))
    vote(store, a, "x", "perf", set_id=set_row.id)
    vote(store, a, "y", "perf", set_id=set_row.id)  # settled
    vote(store, b, "x", "perf", set_id=set_row.id)
    vote(store, b, "y", "non-perf", set_id=set_row.id)  # a tie: review
    assert serve_next(store, set_row, "z", now=T0) is None
    counters = set_counters(store, set_row.id)
    assert counters is not None and (counters.unanimous, counters.conflict) == (1, 1)
    undo(store, "y", in_set=set_row)  # b is pending again and back in queues
    got = serve_next(store, set_row, "z", now=T0)
    assert got is not None and got.entry.item_id == b
    assert_counters_match_a_recount(store, set_row)


def test_overlap_all_serves_every_item_to_every_annotator(store: Store) -> None:
    set_row = make_set(store, 3, votes_per_item=1, overlap="all")
    for who in ("ann", "ben", "cat"):
        for _ in range(3):
            got = serve_next(store, set_row, who, now=T0)
            assert got is not None
            submit(store, set_row, got.entry.item_id, who, "perf", now=T0)
        assert serve_next(store, set_row, who, now=T0) is None
    assert sorted(votes_per_item(store).values()) == [3, 3, 3]


def test_a_set_made_before_routing_is_rebuilt_once_from_its_votes(store: Store) -> None:
    set_row = make_set(store, 3)
    first = raw_sql.scalar(store, "SELECT MIN(item_id) FROM set_items")
    vote(store, int(first), "ann", "perf")  # type: ignore[arg-type]
    raw_sql.connection(store).execute("DELETE FROM set_counters")
    raw_sql.connection(store).execute("UPDATE set_items SET votes = 0")
    got = serve_next(store, set_row, "ann", now=T0)  # rebuilds, then routes
    assert got is not None and got.entry.item_id != first
    assert_counters_match_a_recount(store, set_row)


def test_three_annotator_processes_on_1000_items_cast_exactly_2000_votes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "team.db"
    with open_store(db) as store:
        make_set(store, 1000)
    run = [sys.executable, "-m", "tests.routing_worker", str(db), "team"]
    crashed = subprocess.run([*run, "ghost", "--crash", "5"], cwd=ROOT, check=True)
    assert crashed.returncode == 0
    procs = [
        subprocess.Popen([*run, who], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        for who in ("ann", "ben", "cat")
    ]
    voted = {}
    for who, proc in zip(("ann", "ben", "cat"), procs, strict=True):
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        voted[who] = [int(x) for x in out.split()]
    with open_store(db) as store:
        counts = votes_per_item(store)
        assert sum(counts.values()) == 2000
        assert len(counts) == 1000 and set(counts.values()) == {2}  # none over, none under
        for who, ids in voted.items():
            assert len(ids) == len(set(ids))  # nobody served the same item twice
            stored = raw_sql.query(
                store, "SELECT COUNT(*) FROM live_votes WHERE annotator = ?", (who,)
            )[0][0]
            assert stored == len(ids)  # every vote a worker made is there: none lost
        set_row = get_set(store, "team")
        assert set_row is not None
        assert_counters_match_a_recount(store, set_row)
        # the ghost's five leases expired and its items were served to others
        ghost = "SELECT COUNT(*) FROM votes WHERE annotator LIKE 'ghost%'"
        assert raw_sql.scalar(store, ghost) == 0


def test_the_team_benchmark_runs_short_and_its_counters_match_the_old_figures(
    tmp_path: Path,
) -> None:
    from tests.benchmarks import bench_team

    db = bench_team.build(tmp_path / "team.db", 600)
    figures = bench_team.measure(db, rounds=1, nexts=3)  # asserts counts == old figures
    assert figures["home_speedup"] > 0  # type: ignore[operator]
    with open_store(db) as store:
        set_row = get_set(store, "big")
        assert set_row is not None
        counters = set_counters(store, set_row.id)
        assert counters is not None and counters.conflict == 18  # one pair in ten of 180
        assert_counters_match_a_recount(store, set_row)


def test_two_apps_share_a_routed_set_through_the_service(tmp_path: Path) -> None:
    from curator.tui.service import CurationService

    db = tmp_path / "app.db"
    with open_store(db) as store:
        set_row = make_set(store, 4, votes_per_item=1)
    ann, ben = CurationService(db, "ann"), CurationService(db, "ben")
    try:
        cursor_a, first_a = ann.open_queue(set_row)
        cursor_b, first_b = ben.open_queue(set_row)
        assert first_a is not None and first_b is not None
        assert first_a.item_id != first_b.item_id  # ann's claim holds the one slot
        seen = {first_a.item_id, first_b.item_id}
        for service, cursor in ((ann, cursor_a), (ben, cursor_b)):
            assert cursor.current is not None
            service.vote(set_row, cursor.current.item_id, "perf")
            entry = service.advance(cursor)
            assert entry is not None and entry.item_id not in seen
            seen.add(entry.item_id)
        assert len(seen) == 4
        assert ann.counts(set_row).voted_items == 2
        assert ann.queue_state(set_row).mine == 1
    finally:
        ann.close()
        ben.close()


def test_the_store_settles_items_by_the_same_skip_label_as_annotation() -> None:
    from annotation.labels import SKIP
    from store import decisions

    assert decisions.SKIP == SKIP


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_label_screen_moves_on_when_a_lapsed_item_was_taken(
    tmp_path: Path, anyio_backend: str
) -> None:
    from curator.tui.app import CuratorApp
    from curator.tui.screens.label import LabelScreen
    from tests.tui_helpers import until

    db = tmp_path / "lapsed.db"
    with open_store(db) as store:
        set_row = make_set(store, 2, votes_per_item=1)
    # A lease of 0 minutes lapses at once: the item on screen is free for others.
    app = CuratorApp(db, "dave", open_set="team", lease_minutes=0)
    async with app.run_test() as pilot:

        def shown() -> int | None:
            s = app.screen
            return s.view.item_id if isinstance(s, LabelScreen) and s.view and not s.busy else None

        await until(pilot, lambda: shown() is not None, "first item")
        first = shown()
        with open_store(db) as store:
            taken = serve_next(store, set_row, "ben")
            assert taken is not None and taken.entry.item_id == first
            submit(store, set_row, taken.entry.item_id, "ben", "perf")
        await pilot.press("1")
        await until(pilot, lambda: shown() not in (None, first), "the next item")
    with open_store(db) as store:
        assert votes_per_item(store) == Counter({first: 1})  # ben's vote only


def test_the_review_queue_from_item_states_equals_the_full_decisions(store: Store) -> None:
    from annotation.adjudication import conflicts_for_set

    set_row = make_set(store, 6)
    ids = [r[0] for r in raw_sql.query(store, "SELECT item_id FROM set_items ORDER BY position")]
    for i, item in enumerate(ids):
        vote(store, item, "x", "perf", note="sure" if i == 0 else None)
        vote(store, item, "y", "perf" if i % 2 else "non-perf")
    vote(store, ids[2], "boss", "perf", role="adjudicator")  # settles one conflict
    full = [d for d in decisions_for_set(store, set_row) if d.status == "conflict"]
    assert conflicts_for_set(store, set_row) == full and len(full) == 2
