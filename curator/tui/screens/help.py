"""The ``?`` screen: every key of the screen underneath, with what it does."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from curator.tui import STYLES
from curator.tui.screens.ordered import keys_in_order, ready

_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "escape": "esc",
    "enter": "enter",
    "ctrl+q": "ctrl+q",
}


def key_name(key: str) -> str:
    return ",".join(_NAMES.get(k.strip(), k.strip()) for k in key.split(","))


def screen_bindings(screen: Screen) -> list[BindingType]:
    """The keys a Curator screen declares, its base classes' first (the audit screen
    inherits refresh and back from the report screen): what its footer shows."""
    found: list[BindingType] = []
    for cls in reversed(type(screen).__mro__):
        if cls.__module__.startswith("curator.") and "BINDINGS" in vars(cls):
            found.extend(vars(cls)["BINDINGS"])
    return found


class HelpScreen(ModalScreen[None]):
    """Lists the keys of the screen it was opened over; any key closes it."""

    CSS_PATH = STYLES / "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark,q", "close", "Close")]

    def __init__(self, under: Screen) -> None:
        super().__init__()
        self.under = under

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        extra = getattr(self.under, "help_rows", None)
        rows: list[tuple[str, str]] = list(extra()) if callable(extra) else []
        long = getattr(self.under, "HELP_TEXT", {})
        for binding in screen_bindings(self.under):
            if isinstance(binding, Binding):
                what = long.get(binding.action, binding.description or binding.action)
                rows.append((key_name(binding.key), what))
        rows.append(("?", "this list of keys"))
        rows.append(("ctrl+t", "switch between the light and the dark theme"))
        rows.append(("ctrl+q", "quit Curator"))
        seen: set[tuple[str, str]] = set()
        for key, what in rows:
            if (key, what) not in seen:
                seen.add((key, what))
                table.add_row(Text(key), Text(what))
        title = getattr(self.under, "help_title", type(self.under).__name__)
        with VerticalScroll():
            yield Static(Text(f"Keys: {title}", style="bold"))
            yield Static(table)
            yield Static(Text("any of esc ? q closes this", style="dim"))

    async def on_key(self, event: events.Key) -> None:
        await keys_in_order(self, event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return ready(self)

    def action_close(self) -> None:
        if self.is_active:  # q q typed fast: the second q was for this screen too
            self.dismiss(None)
