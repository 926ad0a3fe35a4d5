"""A key with a binding (``d``, ``c``, ``/``, ``?``) then esc, typed fast on the label or
review screen: esc closes what the first key opened, the screen stays.

The label keys and esc act as they reach the screen, a binding only once its key has
bubbled up to the app, after the keys queued behind it: ``d`` then esc in one read left
the label screen before ``d`` ran, and ``c`` then esc opened the home screen's charts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from curator.tui.app import CuratorApp
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen
from store import open_store
from store.sets import get_set
from tests.tui_helpers import screen_text, until
from tests.tui_store import build, copy_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("hunt-keys") / "template.db", with_engines=False)


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    return copy_of(template, tmp_path / "t.db")


async def post_at_once(pilot, app: CuratorApp, *keys: str) -> None:  # type: ignore[no-untyped-def]
    """Every key in the app's queue before it handles the first (one terminal read)."""
    chars = {"escape": "\x1b", "slash": "/", "question_mark": "?"}
    for key in keys:
        event = events.Key(key, chars.get(key, key))
        event.set_sender(app)
        app.post_message(event)
    await pilot.pause()


@pytest.mark.parametrize("key", ["d", "c", "slash", "question_mark"])
async def test_a_key_then_esc_typed_fast_stays_on_the_label_screen(db: Path, key: str) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.view, "label")
        screen = app.screen
        await post_at_once(pilot, app, key, "escape")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        stack = [type(s) for s in app.screen_stack]
        assert stack[1:] == [HomeScreen, LabelScreen]
        assert app.screen is screen


async def test_d_then_esc_typed_fast_stays_on_the_review_screen(db: Path) -> None:
    with open_store(db) as s:
        set_row = get_set(s, "gt-sample")
    assert set_row is not None
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(ReviewScreen(set_row))
        await until(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and app.screen.conflicts,
            "conflicts",
        )
        review = app.screen
        await post_at_once(pilot, app, "d", "escape")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is review


async def test_enter_then_esc_typed_fast_on_home_opens_and_leaves_the_set(db: Path) -> None:
    # The table's enter reached the home screen as a RowSelected message after the esc
    # typed behind it, which did nothing there: the set opened and stayed open.
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.sets, "sets")
        home = app.screen
        await post_at_once(pilot, app, "enter", "escape")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is home
        await post_at_once(pilot, app, "enter", "enter")
        await until(pilot, lambda: isinstance(app.screen, LabelScreen), "label")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [type(s) for s in app.screen_stack][1:] == [HomeScreen, LabelScreen]


async def test_review_without_conflicts_does_not_call_unvoted_items_settled(db: Path) -> None:
    # inbox: no votes at all, so nothing is settled and nothing is a conflict.
    with open_store(db) as s:
        set_row = get_set(s, "inbox")
    assert set_row is not None
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(ReviewScreen(set_row))
        await until(pilot, lambda: "no conflicts" in screen_text(app), "no conflicts")
        shown = screen_text(app)
        assert "settled" not in shown
        assert "no item waits for an adjudicator" in shown


@pytest.mark.parametrize("action", ["action_leave", "action_show_all"])
async def test_a_key_reaching_the_detail_screen_before_it_is_composed(
    db: Path, action: str
) -> None:
    # `d` then esc typed fast: esc reached the detail screen before its item panel was
    # mounted, and the app died of NoMatches (found by the random-keys test).
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.sets, "sets")
        detail = ItemDetailScreen(1)
        app.push_screen(detail)
        getattr(detail, action)()
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.is_running and app._exception is None
