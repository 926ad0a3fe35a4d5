"""Helpers for driving the app in Pilot tests: wait for a condition, read what is shown."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from rich.text import Text
from textual.app import App
from textual.widgets import Static


async def until(pilot, check: Callable[[], object], what: str, tries: int = 1000) -> None:  # type: ignore[no-untyped-def]
    """Let the app run until ``check()`` holds (workers finish on their own threads)."""
    for _ in range(tries):
        await pilot.pause(0.02)
        if check():
            return
    raise AssertionError(f"the app never got to: {what}")


def text_of(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


def screen_text(app: App[None]) -> str:
    """What the terminal shows, as plain text (the SVG screenshot without its markup)."""
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")
