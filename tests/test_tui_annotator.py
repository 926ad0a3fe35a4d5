"""The label, review and home screens driven from the keyboard the way an annotator
uses them: undo after a vote that replaced another set's, going back after an undo, a
set edited by another process while it is open, keys that vote nothing, an empty store.
Every test checks what reached the store or what the screen says."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.notifications import Notification
from textual.widgets import Static

from curator.tui.app import CuratorApp
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.prompts import ChoicePrompt
from curator.tui.service import CurationService
from store import open_store
from tests import raw_sql
from tests.tui_helpers import asyncio_backend, store_copy, store_template, text_of, until  # noqa: F401 - fixtures
from tests.tui_store import curator as curator_cli

pytestmark = pytest.mark.anyio


template = store_template("tui-annotator", with_engines=False)


def live_label(db: Path, annotator: str, item_id: int) -> str | None:
    with open_store(db) as s:
        rows = raw_sql.query(
            s,
            "SELECT label FROM live_votes WHERE annotator = ? AND item_id = ?",
            (annotator, item_id),
        )
    return rows[0][0] if rows else None


def notes(app: CuratorApp) -> list[Notification]:
    return list(app._notifications)


def said(app: CuratorApp, part: str) -> Notification | None:
    return next((n for n in notes(app) if part in n.message), None)


async def open_label(pilot, app: CuratorApp) -> LabelScreen:  # type: ignore[no-untyped-def]
    await until(
        pilot,
        lambda: isinstance(app.screen, LabelScreen) and app.screen.view and app.screen.state,
        "the label screen with an item and its count",
    )
    screen = app.screen
    assert isinstance(screen, LabelScreen)
    return screen


def shown(screen: LabelScreen) -> int | None:
    return screen.view.item_id if screen.view is not None else None


async def vote_and_wait(pilot, screen: LabelScreen, key: str) -> None:  # type: ignore[no-untyped-def]
    before = shown(screen)
    await pilot.press(key)
    await until(pilot, lambda: not screen.busy and shown(screen) != before, f"vote {key}")


async def test_the_notice_of_a_replaced_vote_names_the_set_and_stays_to_be_read(
    db: Path,
) -> None:
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        item = shown(screen)
        assert item is not None
        old = live_label(db, "alice", item)
        await pilot.press("1")
        await until(pilot, lambda: said(app, "no longer counts"), "the notice")
        note = said(app, "no longer counts")
        assert note is not None
        assert note.message.startswith(f"your {old!r} on #{item} (")
        assert "is now 'good', so it no longer counts in set" in note.message
        assert "gt-sample" in note.message and "need your vote on it again" in note.message
        # Read after the next item is already on screen: more than a passing notice.
        assert note.severity == "warning" and note.timeout >= 10
    assert live_label(db, "alice", item) == "good"


async def test_undo_of_a_vote_that_replaced_another_sets_vote_counts_it_out(db: Path) -> None:
    """alice's perf on an item counts in gt-sample, not in a good/bad set; voting good
    there and undoing restores perf, which leaves her with no vote in the good/bad set."""
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        assert screen.state is not None and screen.state.mine == 0
        first = shown(screen)
        await vote_and_wait(pilot, screen, "1")
        assert screen.state.mine == 1
        await pilot.press("u")
        await until(pilot, lambda: not screen.busy and shown(screen) == first, "undone")
        assert screen.state.mine == 0
        assert "you: 0 labeled" in text_of(screen.query_one("#status", Static))
        note = said(app, "undid good")
        assert note is not None and "which does not count in quality" in note.message


async def test_back_after_an_undo_goes_to_the_item_before_the_undone_one(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = shown(screen)
        await vote_and_wait(pilot, screen, "1")
        second = shown(screen)
        await vote_and_wait(pilot, screen, "2")
        await pilot.press("u")
        await until(pilot, lambda: not screen.busy and shown(screen) == second, "undone")
        await pilot.press("b")
        await until(pilot, lambda: not screen.busy and shown(screen) == first, "back to the first")


async def test_label_keys_follow_a_set_edited_elsewhere(db: Path) -> None:
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        curator_cli(db, "set", "edit", "quality", "--labels", "good,bad,meh")
        await vote_and_wait(pilot, screen, "1")
        note = said(app, "quality was changed elsewhere")
        assert note is not None and "labels good, bad, meh, skip" in note.message
        assert "3 meh" in text_of(screen.query_one("#keys", Static))
        item = shown(screen)
        assert item is not None
        await vote_and_wait(pilot, screen, "3")
    assert live_label(db, "alice", item) == "meh"


async def test_a_set_made_blind_elsewhere_hides_the_others_votes_at_the_next_item(
    db: Path,
) -> None:
    app = CuratorApp(db, "dave", open_set="open-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        assert screen.view is not None and any(v.annotator != "dave" for v in screen.view.votes)
        curator_cli(db, "set", "edit", "open-sample", "--blind")
        await vote_and_wait(pilot, screen, "1")
        assert screen.view is not None and screen.view.blind
        assert all(v.annotator == "dave" for v in screen.view.votes)
        assert text_of(screen.query_one("#machine", Static)).startswith("blind set")
        assert said(app, "now blind") is not None


async def test_a_key_that_votes_nothing_says_which_keys_do(db: Path) -> None:
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        item = shown(screen)
        assert item is not None
        before = live_label(db, "alice", item)
        for key in ("3", "g"):
            await pilot.press(key)
            await until(pilot, lambda key=key: said(app, f"{key} is not a label key"), key)
        note = said(app, "3 is not a label key in quality")
        assert note is not None and note.message.endswith(": 1 good · 2 bad · s 0 skip")
        assert shown(screen) == item and live_label(db, "alice", item) == before


async def test_b_in_a_good_bad_set_goes_back_and_says_once_which_key_votes_bad(
    db: Path,
) -> None:
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = shown(screen)
        await vote_and_wait(pilot, screen, "1")
        await pilot.press("b")
        await until(pilot, lambda: not screen.busy and shown(screen) == first, "back")
        assert first is not None and live_label(db, "alice", first) == "good"
        note = said(app, "b goes back to the previous item")
        assert note is not None and note.message.endswith("2 votes bad")
        await vote_and_wait(pilot, screen, "1")
        await pilot.press("b")
        await until(pilot, lambda: not screen.busy and shown(screen) == first, "back again")
        assert len([n for n in notes(app) if "b goes back" in n.message]) == 1


async def test_b_in_a_perf_set_goes_back_without_a_word(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = shown(screen)
        await vote_and_wait(pilot, screen, "1")
        await pilot.press("b")
        await until(pilot, lambda: not screen.busy and shown(screen) == first, "back")
        assert said(app, "b goes back") is None


async def test_a_search_with_one_hit_says_one_match(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        await pilot.press("slash", *f"#{shown(screen)}", "enter")
        await until(pilot, lambda: isinstance(app.screen, ChoicePrompt), "the hits")
        assert isinstance(app.screen, ChoicePrompt) and app.screen.title_text == "1 match"


async def test_set_keys_on_an_empty_store_say_why_nothing_opens(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    open_store(db).close()
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        home = app.screen
        assert isinstance(home, HomeScreen)
        status = home.query_one("#status", Static)
        await until(pilot, lambda: text_of(status).startswith("No sets yet"), "loaded")
        for key in ("enter", "r", "a", "t"):
            app.clear_notifications()
            await pilot.press(key)
            await until(pilot, lambda: said(app, "no set to open yet"), key)
            assert app.screen is home


async def test_a_note_left_behind_without_a_vote_is_named_and_one_voted_with_is_not(
    db: Path,
) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = screen.view.item_id if screen.view else None
        await pilot.press("n", *"hot loop", "enter")
        await pilot.press("p")  # the note goes with this vote
        await until(pilot, lambda: screen.view and screen.view.item_id != first, "next item")
        second = screen.view.item_id if screen.view else None
        await pilot.press("n", *"unsure", "enter")
        await pilot.press("b")  # back to the first item: the second's note is dropped
        await until(pilot, lambda: screen.view and screen.view.item_id == first, "back")
        await until(pilot, lambda: said(app, "not saved"), "a warning")
        warning = said(app, "not saved")
        assert warning is not None and warning.severity == "warning"
        assert warning.message == (
            f"the note typed for #{second} was not saved: a category or note is saved with a vote"
        )
        assert said(app, f"#{first}") is None  # its note was saved with the vote
    with open_store(db) as s:
        rows = raw_sql.query(
            s, "SELECT note FROM live_votes WHERE annotator = 'dave' AND item_id = ?", (first,)
        )
    assert [r[0] for r in rows] == ["hot loop"]


async def test_the_count_follows_votes_the_same_annotator_casts_from_another_process(
    db: Path,
) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        status = screen.query_one("#status", Static)
        assert "you: 0 labeled, 40 to do" in text_of(status)
        # dave, in a second app on the same store, votes on another item of the set
        elsewhere = CurationService(db, "dave")
        try:
            with open_store(db) as s:
                members = raw_sql.query(
                    s,
                    "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY item_id DESC",
                    (screen.set_row.id,),
                )
            other = next(i for (i,) in members if i != shown(screen))
            elsewhere.vote(screen.set_row, other, "perf")
        finally:
            elsewhere.close()
        await vote_and_wait(pilot, screen, "1")
        await until(pilot, lambda: "you: 2 labeled" in text_of(status), "the count re-read")
        assert "you: 2 labeled, 38 to do" in text_of(status)
