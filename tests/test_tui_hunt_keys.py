"""A key with a binding (``d``, ``c``, ``/``, ``?``) then esc, typed fast on the label or
review screen: esc closes what the first key opened, the screen stays.

The label keys and esc act as they reach the screen, a binding only once its key has
bubbled up to the app, after the keys queued behind it: ``d`` then esc in one read left
the label screen before ``d`` ran, and ``c`` then esc opened the home screen's charts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.screen import Screen

from curator.tui.app import CuratorApp
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.audit import AuditScreen
from curator.tui.screens.charts import ChartsScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.help import HelpScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.prompts import ChoicePrompt
from curator.tui.screens.review import ReviewScreen
from curator.tui.screens.search import SearchScreen
from curator.tui.screens.train import TrainScreen
from store import open_store
from store.sets import get_set
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    open_review,
    screen_text,
    store_copy,
    store_template,
    until,
)

pytestmark = pytest.mark.anyio


template = store_template("hunt-keys", with_engines=False)


async def post_at_once(pilot, app: CuratorApp, *keys: str) -> None:  # type: ignore[no-untyped-def]
    """Every key in the app's queue before it handles the first (one terminal read)."""
    chars = {"escape": "\x1b", "slash": "/", "question_mark": "?", "ctrl+o": "\x0f"}
    for key in keys:
        event = events.Key(key, chars.get(key, key if len(key) == 1 else None))
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
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        review = await open_review(pilot, app, db)
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


SUB_SCREENS = {
    "label": (["enter"], LabelScreen),
    "review": (["r"], ReviewScreen),
    "agreement": (["a"], AgreementScreen),
    "audit": (["t"], AuditScreen),
    "train": (["m"], TrainScreen),
    "charts": (["c"], ChartsScreen),
    "help": (["question_mark"], HelpScreen),
    "detail": (["g", *"#1", "enter"], ItemDetailScreen),
}


@pytest.mark.parametrize("name", list(SUB_SCREENS))
@pytest.mark.parametrize("keys", [("q", "q"), ("escape", "q")])
async def test_q_typed_fast_behind_a_leave_key_never_quits(
    db: Path, name: str, keys: tuple[str, str]
) -> None:
    # Both keys were typed on the sub-screen: the first goes back, the second was for
    # the sub-screen too and does nothing (it used to quit from the home screen). A q
    # typed once home is shown quits, as two deliberate presses do.
    opener, cls = SUB_SCREENS[name]
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.sets, "sets")
        home = app.screen
        await pilot.press(*opener)
        await until(pilot, lambda: isinstance(app.screen, cls), name)
        await post_at_once(pilot, app, *keys)
        await until(pilot, lambda: app.screen is home, "back home")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.screen is home
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, "quit")


async def test_q_q_typed_fast_on_a_detail_over_the_label_screen_goes_back_once(
    db: Path,
) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.view, "label")
        label = app.screen
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ItemDetailScreen), "detail")
        await post_at_once(pilot, app, "q", "q")
        await until(pilot, lambda: app.screen is label, "back on the label screen")
        await pilot.pause(0.3)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is label


def screens_to_open(db: Path) -> dict[str, tuple[Screen[Any], str]]:
    with open_store(db) as s:
        sample = get_set(s, "gt-sample")
    assert sample is not None
    return {
        "search": (SearchScreen(sample), "scope"),
        "search query": (SearchScreen(sample), "focus_query"),
        "choice list": (ChoicePrompt("pick", ["a", "b"]), "move(1)"),
        "train": (TrainScreen(), "curve"),
        "charts": (ChartsScreen(sample), "step(1)"),
        "detail": (ItemDetailScreen(1), "toggle_side"),
        "review": (ReviewScreen(sample), "refresh"),
    }


@pytest.mark.parametrize(
    "name", ["search", "search query", "choice list", "train", "charts", "detail", "review"]
)
async def test_a_key_typed_right_behind_the_one_that_opens_a_screen(db: Path, name: str) -> None:
    # Found by random keys on a mined store (/ then ctrl+o): the key that opened a
    # screen ran on the screen it was typed on, and the key behind it reached the app
    # while the new screen had not composed its widgets; its action raised NoMatches,
    # which closed the app. Its binding now does nothing until the screen is mounted.
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.sets, "sets")
        screen, action = screens_to_open(db)[name]
        app.push_screen(screen)
        assert not screen.is_mounted
        assert await app.run_action(action, screen) is False  # no widgets yet: not run
        await until(pilot, lambda: screen.is_mounted, "mounted")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app._exception is None, app._exception
        assert app.screen is screen
