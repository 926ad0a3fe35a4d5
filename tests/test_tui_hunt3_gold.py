"""Undo of an answer on a hidden gold item, from the label screen: the item comes back
as an undone vote would (the store takes the answer back, ``UndoResult.gold``), and on
a set that mixes in gold items nothing on screen tells a gold item from a member."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.routing import is_gold
from curator.tui.app import CuratorApp
from curator.tui.screens.label import LabelScreen
from store import open_store
from store.sets import get_set
from tests import raw_sql
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    store_copy,
    store_template,
    text_of,
    until,
)
from tests.tui_store import curator

pytestmark = pytest.mark.anyio


def gold_set(db: Path) -> None:
    """``gw``: the inbox items, with gold items from the settled sample mixed in."""
    curator(db, "set", "create", "gw", "--from-set", "inbox", "--labels", "perf,non-perf")
    curator(db, "set", "gold", "gw", "--from", "gt-sample", "--rate", "0.5", "--seed", "1")


template = store_template("hunt3-gold", with_engines=False, then=gold_set)


def gold_answers(db: Path, annotator: str) -> list[int]:
    with open_store(db) as s:
        rows = raw_sql.query(
            s, "SELECT item_id FROM gold_answers WHERE annotator = ? ORDER BY id", (annotator,)
        )
    return [r[0] for r in rows]


def shown_is_gold(db: Path, screen: LabelScreen) -> bool:
    assert screen.view is not None
    with open_store(db) as s:
        set_row = get_set(s, "gw")
        assert set_row is not None
        return is_gold(s, set_row, screen.view.item_id)


def moved_on(screen: LabelScreen, before: int) -> bool:
    return not screen.busy and screen.view is not None and screen.view.item_id != before


async def test_undoing_a_gold_answer_shows_the_gold_item_again_as_an_undone_vote(
    db: Path,
) -> None:
    app = CuratorApp(db, "erin", open_set="gw")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, LabelScreen)
                and app.screen.view is not None
                and not app.screen.busy
            ),
            "label screen",
        )
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        for _ in range(8):  # at rate 0.5 a gold item comes within the first few
            if shown_is_gold(db, screen):
                break
            assert screen.view is not None
            before = screen.view.item_id
            await pilot.press("2")
            await until(pilot, lambda b=before: moved_on(screen, b), "next item")
        assert shown_is_gold(db, screen)
        assert screen.view is not None
        gold = screen.view.item_id
        status = text_of(screen.query_one("#status"))
        # A gold item sits outside the set's positions: it showed as "item 0 of 8".
        assert "item " not in status, status

        await pilot.press("1")
        await until(
            pilot,
            lambda: not screen.busy and screen.view is not None and screen.view.item_id != gold,
            "the item after the gold one",
        )
        assert gold_answers(db, "erin") == [gold]
        member = screen.view.item_id
        assert "item " not in text_of(screen.query_one("#status"))

        await pilot.press("u")
        await until(pilot, lambda: not screen.busy, "undone")
        # The gold item is shown again, unvoted, as an undone vote's item would be: it
        # stayed on the item after it.
        assert screen.view is not None and screen.view.item_id == gold
        assert gold_answers(db, "erin") == []
        assert "not voted yet" in text_of(screen.query_one("#votes"))
        assert "gold" not in text_of(screen.query_one("#status")).lower()

        await pilot.press("1")  # answered again, then on to the item it had moved on to
        await until(
            pilot,
            lambda: not screen.busy and screen.view is not None and screen.view.item_id != gold,
            "on again",
        )
        assert screen.view.item_id == member
        await app.workers.wait_for_complete()
    assert gold_answers(db, "erin") == [gold]
