"""Active learning that keeps learning: the in-loop model, re-ranking the queue after
the annotator's item (only unvoted items move, positions stay unique), the label
screen's background re-rank every K votes, and the simulation benchmark's short form."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.active_learning import rerank_queue, reranks, training_labels
from engines.labelers.inloop import fit_inloop
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items
from store.predictions import add_predictions
from store.records import PredictionRow
from store.reranking import reorder, unvoted_after
from store.sets import NewSet, SetRow, create_set, get_set, set_item_ids
from store.votes import VoteRow, append_votes
from tests import raw_sql

PERF = "speed up the cache lookup, faster hot loop"
OTHER = "fix typo in the readme docs"
MIXED = "speed up docs typo cache readme"  # the in-loop model cannot tell


def texts() -> list[str]:
    # 12 clear items first, 3 ambiguous ones last in the queue
    return [PERF if i % 2 == 0 else OTHER for i in range(12)] + [MIXED + f" {i}" for i in range(3)]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "r.db")
    stored = insert_imported_items(
        s,
        [
            ImportedItem(
                "commit", f"k{i}", "repo", None, None, {"message": t, "model_input": t}, {}
            )
            for i, t in enumerate(texts())
        ],
    )
    ids = [item_id for _, item_id in stored]
    create_set(
        s,
        NewSet(name="al", kind="commit", labels=["perf", "non-perf"], params={"rerank_every": 2}),
        ids,
    )
    return s


def members(store: Store) -> list[int]:
    row = get_set(store, "al")
    assert row is not None
    return set_item_ids(store, row.id)


def al(store: Store) -> SetRow:
    row = get_set(store, "al")
    assert row is not None
    return row


def test_the_in_loop_model_needs_two_labels_and_is_unsure_between_them() -> None:
    assert fit_inloop([PERF, PERF], ["perf", "perf"], "perf") is None
    model = fit_inloop([PERF, OTHER] * 3, ["perf", "non-perf"] * 3, "perf")
    assert model is not None and model.trained_on == 6
    clear, unclear = model.uncertainty([PERF, MIXED])
    assert unclear > clear


def test_reorder_permutes_only_the_given_items_positions(store: Store) -> None:
    before = members(store)
    moved = reorder(store, al(store).id, [before[5], before[3], before[4]])
    after = members(store)
    assert moved == 3 and after[3:6] == [before[5], before[3], before[4]]
    assert after[:3] == before[:3] and after[6:] == before[6:]
    positions = [int(r[0]) for r in raw_sql.query(store, "SELECT position FROM set_items")]
    assert sorted(positions) == list(range(len(before)))


def test_rerank_puts_the_uncertain_items_next_and_leaves_the_rest(store: Store) -> None:
    ids = members(store)
    row = al(store)
    append_votes(store, [VoteRow(ids[0], "ann", "perf", set_id=row.id)])
    assert rerank_queue(store, row, 0) is None  # one label seen: nothing learnt yet
    append_votes(
        store,
        [
            VoteRow(ids[i], "ann", "perf" if i % 2 == 0 else "non-perf", set_id=row.id)
            for i in (1, 2, 3)
        ]
        + [VoteRow(ids[1], "bob", "perf", set_id=row.id)],  # a tie: left out of training
    )
    assert training_labels(store, row) == {ids[0]: "perf", ids[2]: "perf", ids[3]: "non-perf"}
    result = rerank_queue(store, row, after_position=4)  # item 4 is on screen
    assert result is not None and result.trained_on == 3 and result.scored == 10
    after = members(store)
    assert after[:5] == ids[:5]  # voted and on-screen items keep their places
    assert set(after[5:8]) == set(ids[12:])  # the three ambiguous items come next
    assert [p for p, _ in unvoted_after(store, row.id, 4, 3)] == [5, 6, 7]


def test_rerank_by_a_labelers_stored_predictions(store: Store) -> None:
    ids = members(store)
    add_predictions(
        store,
        [(i, PredictionRow("student@1", "perf", 0.5 if i == ids[9] else 0.99)) for i in ids],
    )
    result = rerank_queue(store, al(store), after_position=-1, labeler="student@latest")
    assert result is not None and result.model == "student@1"
    assert members(store)[0] == ids[9]


def test_which_sets_rerank() -> None:
    base = dict(
        id=1,
        name="s",
        kind="commit",
        labels=[],
        categories=[],
        blind=True,
        purpose="ground-truth",
        votes_per_item=2,
        description="",
        created_at="",
    )
    drawn = SetRow(**base, params={"draw": {"prefer": "uncertain"}})  # type: ignore[arg-type]
    assert reranks(drawn) == 20
    assert reranks(SetRow(**base, params={"draw": {}})) == 0  # type: ignore[arg-type]
    assert reranks(SetRow(**base, params={"rerank_every": 5})) == 5  # type: ignore[arg-type]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_label_screen_reranks_in_the_background_every_k_votes(store: Store) -> None:
    from curator.tui.app import CuratorApp
    from curator.tui.screens.label import LabelScreen
    from tests.tui_helpers import until

    ids = members(store)
    db = store.path
    store.close()
    app = CuratorApp(db, "ann", open_set="al")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, LabelScreen), "the label screen")
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        await until(pilot, lambda: screen.view is not None and not screen.busy, "the first item")
        assert screen.view is not None and screen.view.item_id == ids[0]
        for key in ("1", "2"):
            await pilot.press(key)
            await until(pilot, lambda: not screen.busy, "the vote")
        await until(pilot, lambda: screen.last_rerank is not None, "the re-rank")
        assert screen.last_rerank is not None and screen.last_rerank.trained_on == 2
        # the next vote drops the page read ahead: an ambiguous item comes next
        await pilot.press("1")
        await until(pilot, lambda: not screen.busy and screen.view is not None, "the next item")
        assert screen.view is not None and screen.view.item_id in ids[12:]


def test_simulation_benchmark_short_form(tmp_path: Path) -> None:
    """The benchmark's runs (``curator.al_simulation``), each order once, in short."""
    from curator.al_simulation import STRATEGIES, SimulationRequest, run_strategy

    pool = [(t, "perf" if t == PERF else "non-perf") for t in texts() * 4]
    test = [(PERF, "perf"), (OTHER, "non-perf")]
    request = SimulationRequest(pool, test, "perf", votes=30, every=10, seeds=1)
    runs = {s: run_strategy(s, request, 1, tmp_path) for s in STRATEGIES}
    for s, (curve, _) in runs.items():
        assert [n for n, _ in curve] == [10, 20, 30], s
    assert runs["rerank"][1] and not runs["random"][1]
