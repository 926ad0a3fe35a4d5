"""Small modal dialogs: a one-line text prompt and a filterable list of choices."""

from __future__ import annotations

import contextlib
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from curator.tui import STYLES
from curator.tui.screens.ordered import keys_in_order, ready


class ChoiceList(OptionList):
    """The choices, whose page keys do nothing until a refilled list is laid out:
    between a refill (a letter typed in the filter) and the next layout, Textual's
    OptionList raised KeyError on pageup/pagedown, which closed the app."""

    def action_page_up(self) -> None:
        with contextlib.suppress(KeyError):
            super().action_page_up()

    def action_page_down(self) -> None:
        with contextlib.suppress(KeyError):
            super().action_page_down()


class Prompt(ModalScreen[str | None]):
    """A modal answered once: an answer or a cancel that arrives after the first one
    (enter pressed twice before the prompt closed) is dropped. Dismissing a screen pops
    whatever is on top, so the second one used to pop the screen under the prompt
    (home, leaving an empty app) and answer the prompt's callback twice."""

    def answer(self, value: str | None) -> None:
        if self.is_active:
            self.dismiss(value)

    async def on_key(self, event: events.Key) -> None:
        await keys_in_order(self, event)  # esc esc: the second esc was for the prompt

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return ready(self)


class TextPrompt(Prompt):
    """Asks for one line of text; enter answers, esc cancels."""

    CSS_PATH = STYLES / "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            yield Input(value=self.value, placeholder=self.placeholder)
            yield Static(Text("enter to confirm · esc to cancel", style="dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.answer(event.value)

    def action_cancel(self) -> None:
        self.answer(None)


class ChoicePrompt(Prompt):
    """Picks one of many choices; typing filters the list, enter picks."""

    CSS_PATH = STYLES / "modals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
    ]

    def __init__(self, title: str, choices: list[str], current: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            yield Input(placeholder="type to filter")
            yield ChoiceList(*self._options(""))
            yield Static(Text("↑↓ move · enter pick · esc cancel", style="dim"))

    def _options(self, needle: str) -> list[Option]:
        words = needle.lower().split()
        return [Option(Text(c), id=c) for c in self.choices if all(w in c.lower() for w in words)]

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.current in self.choices:
            options.highlighted = self.choices.index(self.current)
        elif self.choices:
            options.highlighted = 0

    def on_input_changed(self, event: Input.Changed) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options(event.value))
        if options.option_count:
            options.highlighted = 0

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            current = options.highlighted or 0
            options.highlighted = (current + step) % options.option_count

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one(OptionList)
        if options.highlighted is not None and options.option_count:
            self.answer(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.answer(event.option.id)

    def action_cancel(self) -> None:
        self.answer(None)
