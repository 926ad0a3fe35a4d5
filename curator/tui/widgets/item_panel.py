"""The scrolling panel that shows one item: metadata, message and its code panes.

Code is highlighted and clipped (see ``curator.tui.render``); ``show_all`` swaps the
clipped view for a read-only text area holding every line, which stays fast on a
50,000-line diff because it only draws what is on screen (and wraps long lines only in
texts under ``WRAP_LINES`` lines).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Container, Vertical, VerticalScroll
from textual.widgets import Static, TextArea

from curator.tui import render
from curator.tui.item_view import ItemView

WRAP_LINES = 5_000
"""The show-all view wraps long lines only in texts shorter than this many lines."""


class ItemPanel(Vertical):
    """One item's message and code panes; its stylesheet is the app's
    ``styles/item_panel.tcss`` (a widget has no ``CSS_PATH`` of its own)."""

    def __init__(self, side_by_side: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_side_by_side(side_by_side)
        self.view: ItemView | None = None
        self.clipped = False
        self.highlight = True

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="item-scroll"):
            yield Static("", id="item-message")
            with Container(id="panes"):
                for i in range(2):
                    with Vertical(id=f"pane-{i}"):
                        yield Static("", classes="pane-title", id=f"pane-title-{i}")
                        yield Static("", classes="code", id=f"pane-code-{i}")
        yield TextArea("", id="item-full", read_only=True, show_line_numbers=True)

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        if self.view is not None and not self.showing_all:
            self.show(self.view, self.highlight)

    @property
    def side_by_side(self) -> bool:
        return self.has_class("side-by-side")

    def set_side_by_side(self, side_by_side: bool) -> None:
        """The two code panes beside each other, else one above the other (the screen
        says which as the terminal is resized)."""
        self.set_class(side_by_side, "side-by-side")

    @property
    def showing_all(self) -> bool:
        return self.has_class("full")

    def show(self, view: ItemView | None, highlight: bool = True, empty: str = "") -> None:
        """Show ``view`` (clipped); with ``view`` None show the ``empty`` note instead."""
        self.view = view
        self.highlight = highlight
        self.remove_class("full")
        message = self.query_one("#item-message", Static)
        dark = self.app.current_theme.dark if self.app.current_theme else True
        self.clipped = False
        if view is None:
            message.update(Text(empty))
            message.display = True
            for i in range(2):
                self.query_one(f"#pane-{i}").display = False
            return
        if view.message:
            spans = view.keyword_spans() if highlight else []
            message.update(render.message(view.message, spans))
            message.display = True
            self.clipped |= len(view.message) > render.MAX_MESSAGE_CHARS
        else:
            message.display = False
        for i in range(2):
            pane = view.panes[i] if i < len(view.panes) else None
            box = self.query_one(f"#pane-{i}")
            box.display = pane is not None
            if pane is None:
                continue
            syntax, clipped = render.code(pane.text, pane.lexer, dark)
            self.clipped |= clipped.clipped
            title = f"{pane.title} · {clipped.lines} lines"
            if clipped.clipped:
                title += " · clipped, f shows all"
            self.query_one(f"#pane-title-{i}", Static).update(Text(title))
            self.query_one(f"#pane-code-{i}", Static).update(syntax)
        self.query_one("#item-scroll", VerticalScroll).scroll_home(animate=False)

    def toggle_all(self) -> bool:
        """Switch between the clipped view and every line as plain text."""
        if self.view is None:
            return False
        if self.showing_all:
            self.remove_class("full")
            return False
        parts = []
        if self.view.message:
            parts.append(self.view.message)
        for pane in self.view.panes:
            parts.append(f"── {pane.title} ──\n{pane.text}")
        area = self.query_one("#item-full", TextArea)
        text = render.full_text("\n\n".join(parts))
        # Soft wrapping measures every line each time the area is sized: on the event
        # loop, a second or more for a diff of tens of thousands of lines. Past
        # WRAP_LINES the lines (at most render.FULL_LINE_CHARS) scroll sideways instead.
        area.soft_wrap = text.count("\n") < WRAP_LINES
        area.load_text(text)
        self.add_class("full")
        area.focus()
        return True
