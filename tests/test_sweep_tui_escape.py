"""Esc (or q) then a vote key typed fast on the label (or review) screen leaves without
a vote.

Keys are fed as a terminal sends them: raw bytes through Textual's own xterm parser,
every key posted to the app before it handles the first (one read from the terminal,
or keys queued while the app was busy). ``pilot.press`` waits for the app to go idle
between keys, so it never showed the vote cast on the item still shown.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from curator.tui.app import CuratorApp
from curator.tui.keys import is_modified
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.widgets.item_panel import ItemPanel
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


template = store_template("esc", with_engines=False)


def votes_of(db: Path, annotator: str) -> list[tuple[int, str]]:
    with open_store(db) as s:
        rows = raw_sql.query(
            s,
            "SELECT item_id, label FROM live_votes WHERE annotator = ? ORDER BY item_id",
            (annotator,),
        )
    return [(r[0], r[1]) for r in rows]


def parsed(raw: str) -> list[events.Key]:
    """What Textual's parser makes of bytes read from the terminal in one go (the end of
    input flushes a sequence it still holds, as its ESCDELAY timeout would)."""
    parser = XTermParser()
    tokens = [*parser.feed(raw), *parser.feed("")]
    assert all(isinstance(t, events.Key) for t in tokens)
    return tokens  # type: ignore[return-value]


def typed(*keys: str) -> list[events.Key]:
    return [events.Key(k, "\x1b" if k == "escape" else k) for k in keys]


async def open_label(pilot, app: CuratorApp) -> LabelScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.view, "label")
    screen = app.screen
    assert isinstance(screen, LabelScreen)
    return screen


async def post_at_once(pilot, app: CuratorApp, keys: list[events.Key]) -> None:  # type: ignore[no-untyped-def]
    """Every key in the app's queue before it handles the first, as the driver posts the
    keys of one read."""
    for key in keys:
        key.set_sender(app)
        app.post_message(key)
    await pilot.pause()


# Esc then 1 in one read from a terminal speaking the kitty keyboard protocol (Textual
# turns it on): the parser gives escape then 1, in order, nothing held back.
KITTY_ESC_1 = "\x1b[27u1"
KITTY_ESC_1_ALL_KEYS = "\x1b[27u\x1b[49u"


def test_the_parser_keeps_esc_then_1_in_order() -> None:
    for raw in (KITTY_ESC_1, KITTY_ESC_1_ALL_KEYS):
        assert [(k.key, k.character) for k in parsed(raw)] == [("escape", None), ("1", "1")]
    # A legacy terminal: esc then a key within ESCDELAY is one sequence, no escape key.
    assert [(k.key, k.character) for k in parsed("\x1bs")] == [("alt+s", "s")]
    assert [k.key for k in parsed("\x1b1")] == ["inverted_exclamation_mark"]  # Option+1


@pytest.mark.parametrize(
    "keys",
    [
        pytest.param(parsed(KITTY_ESC_1), id="kitty-esc-1"),
        pytest.param(parsed(KITTY_ESC_1_ALL_KEYS), id="kitty-all-keys-esc-1"),
        pytest.param(typed("escape", "1"), id="esc-1-queued"),
        pytest.param(typed("q", "2"), id="q-2-queued"),
        pytest.param(typed("escape", "s"), id="esc-skip-queued"),
    ],
)
async def test_esc_then_a_vote_key_leaves_without_a_vote(db: Path, keys: list[events.Key]) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        await post_at_once(pilot, app, keys)
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await app.workers.wait_for_complete()
        assert not screen.busy  # no vote was ever started
    assert votes_of(db, "dave") == []


@pytest.mark.parametrize(
    "raw", ["\x1bs", "\x1b1", "\x1b[115;3u"], ids=["alt-s", "opt-1", "kitty-alt-s"]
)
async def test_alt_with_a_label_key_does_not_vote(db: Path, raw: str) -> None:
    # Esc then s within ESCDELAY on a legacy terminal is Alt+s carrying the character s:
    # it voted skip on the item shown. Now it does nothing (the esc is lost in Textual).
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        shown = screen.view.item_id if screen.view else None
        await post_at_once(pilot, app, parsed(raw))
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.screen is screen and not screen.busy
        assert screen.view is not None and screen.view.item_id == shown
    assert votes_of(db, "dave") == []


async def test_a_vote_then_esc_typed_fast_keeps_the_vote(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = screen.view.item_id if screen.view else None
        await post_at_once(pilot, app, typed("1", "escape"))
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await app.workers.wait_for_complete()
    assert votes_of(db, "dave") == [(first, "perf")]


async def test_esc_that_closes_show_all_does_not_leave_and_1_then_votes(db: Path) -> None:
    # Esc first closes "show all": the user has not asked to leave, so the 1 after it votes.
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = screen.view.item_id if screen.view else None
        await pilot.press("f")
        assert screen.query_one(ItemPanel).showing_all
        await post_at_once(pilot, app, typed("escape", "1"))
        await until(pilot, lambda: screen.view and screen.view.item_id != first, "next item")
        assert app.screen is screen and not screen.query_one(ItemPanel).showing_all
    assert votes_of(db, "dave") == [(first, "perf")]


def test_modified_keys_are_told_apart() -> None:
    assert [is_modified(k) for k in ("alt+s", "ctrl+1", "alt+plus", "super+p")] == [True] * 4
    assert [is_modified(k) for k in ("s", "1", "plus", "escape", "shift+tab")] == [False] * 5


async def test_esc_then_a_settling_key_leaves_the_review_screen_without_settling(
    db: Path,
) -> None:
    # The review screen shares the label keys' handler: esc then 1 queued together left
    # only after settling the conflict shown with perf.
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await open_review(pilot, app, db)
        await post_at_once(pilot, app, typed("escape", "1"))
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await app.workers.wait_for_complete()
    assert votes_of(db, "erin") == []
