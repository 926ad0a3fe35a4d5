"""Helpers for driving the app in Pilot tests: wait for a condition, read what is shown,
and the fixtures every app test module shares.

A test module takes the fixtures by importing them (pytest finds fixtures among a
module's names) and names its own store template::

    from tests.tui_helpers import asyncio_backend, store_copy  # noqa: F401 - fixtures

    template = store_template("label", with_engines=False)

``asyncio_backend`` is the ``anyio_backend`` fixture (asyncio only: the app runs on
asyncio), ``store_copy`` the ``db`` fixture (a private copy of the module's
``template``); their Python names differ from the fixture names so that a test's
``db`` argument does not shadow an import.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.widgets import Static

from tests.tui_store import build, copy_of


@pytest.fixture(name="anyio_backend")
def asyncio_backend() -> str:
    return "asyncio"


@pytest.fixture(name="db")
def store_copy(template: Path, tmp_path: Path) -> Path:
    """A private copy of the module's template store, for one test."""
    return copy_of(template, tmp_path / "t.db")


def store_template(
    name: str, with_engines: bool = True, then: Callable[[Path], object] | None = None
) -> Callable[..., Path]:
    """A module-scoped ``template`` fixture: the test store (:func:`tests.tui_store.build`)
    built once per module under a temporary directory called ``name``, then ``then(db)``
    for what the module adds (a split, more sets)."""

    @pytest.fixture(scope="module", name="template")
    def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
        db = build(tmp_path_factory.mktemp(name) / "template.db", with_engines=with_engines)
        if then is not None:
            then(db)
        return db

    return template


async def until(pilot, check: Callable[[], object], what: str, tries: int = 1000) -> None:  # type: ignore[no-untyped-def]
    """Let the app run until ``check()`` holds (workers finish on their own threads)."""
    for _ in range(tries):
        await pilot.pause(0.02)
        if check():
            return
    raise AssertionError(f"the app never got to: {what}")


async def open_review(pilot, app: App[None], db: Path, set_name: str = "gt-sample"):  # type: ignore[no-untyped-def]
    """From home, the review screen of ``set_name``, once its conflicts are listed."""
    from curator.tui.screens.home import HomeScreen
    from curator.tui.screens.review import ReviewScreen
    from store import open_store
    from store.sets import get_set

    with open_store(db) as s:
        set_row = get_set(s, set_name)
    assert set_row is not None
    await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
    app.push_screen(ReviewScreen(set_row))
    await until(
        pilot,
        lambda: isinstance(app.screen, ReviewScreen) and app.screen.conflicts,
        "conflicts",
    )
    return app.screen


def text_of(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


def screen_text(app: App[None]) -> str:
    """What the terminal shows, as plain text (the SVG screenshot without its markup)."""
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")
