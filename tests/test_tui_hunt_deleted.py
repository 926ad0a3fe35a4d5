"""An item deleted by another process while the label or review screen is open: the
label screen moves on to the next item instead of sticking on the deleted one (every
vote on it refused) or reading the deletion as the end of the queue; the review screen
drops it from its conflicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.tui.app import CuratorApp
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen
from store import open_store
from tests import raw_sql
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    open_review,
    store_copy,
    store_template,
    until,
)

pytestmark = pytest.mark.anyio


template = store_template("hunt-deleted", with_engines=False)


def delete_items(db: Path, *item_ids: int) -> None:
    """What another process does: its own connection, its own transaction."""
    with open_store(db) as s, s.transaction() as conn:
        for item_id in item_ids:
            conn.execute("DELETE FROM items WHERE id = ?", (item_id,))


def voted_items(db: Path, annotator: str) -> list[int]:
    with open_store(db) as s:
        rows = raw_sql.query(
            s, "SELECT item_id FROM live_votes WHERE annotator = ? ORDER BY item_id", (annotator,)
        )
    return [r[0] for r in rows]


async def test_a_vote_on_a_deleted_item_moves_on_past_deleted_items(db: Path) -> None:
    app = CuratorApp(db, "zoe", open_set="inbox")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.view, "label")
        screen = app.screen
        assert isinstance(screen, LabelScreen) and screen.view is not None
        shown = screen.view.item_id
        with open_store(db) as s:
            members = [
                r[0]
                for r in raw_sql.query(
                    s,
                    "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY position",
                    (screen.set_row.id,),
                )
            ]
        # The item on screen and the one after it in the set go.
        gone = {shown, members[members.index(shown) + 1]}
        delete_items(db, *gone)
        await pilot.press("1")
        await until(pilot, lambda: not screen.busy, "the vote refused")
        await pilot.pause()
        # Not stuck on the deleted item, not "All done": an item still there.
        assert screen.view is not None
        now = screen.view.item_id
        assert now not in gone and now in members
        await pilot.press("1")
        await until(pilot, lambda: not screen.busy and screen.view is not None, "next")
        await app.workers.wait_for_complete()
    assert voted_items(db, "zoe") == [now]


async def test_settling_a_deleted_conflict_drops_it_from_the_review_list(db: Path) -> None:
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        review = await open_review(pilot, app, db)
        assert isinstance(review, ReviewScreen)
        gone = review.conflicts[0].item_id
        before = len(review.conflicts)
        delete_items(db, gone)
        await pilot.press("1")
        await until(pilot, lambda: len(review.conflicts) < before, "the list reloaded")
        await app.workers.wait_for_complete()
        assert gone not in [d.item_id for d in review.conflicts]
        assert not review.busy
