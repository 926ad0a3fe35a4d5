"""The scrolling panel that shows one item: metadata, message and its code panes.

Code is highlighted and clipped (see ``curator.tui.render``); ``show_all`` swaps the
clipped view for a read-only text area holding every line, which stays fast on a
50,000-line diff because it holds one page of ``PAGE_LINES`` lines at a time (``]`` and
``[`` turn the pages; a text area sums the heights of all its lines for every row it
draws, so 40,000 lines in one took a tenth of a second a frame and half a second to
open) and wraps long lines only in texts under ``WRAP_LINES`` lines.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical, VerticalScroll
from textual.widgets import Static, TextArea

from curator.tui import render
from curator.tui.item_view import ItemView

WRAP_LINES = 5_000
"""The show-all view wraps long lines only in texts shorter than this many lines."""

PAGE_LINES = 2_000
"""The most lines the show-all view holds at once: a longer text is shown a page at a time."""


class ItemPanel(Vertical):
    """One item's message and code panes; its stylesheet is the app's
    ``styles/item_panel.tcss`` (a widget has no ``CSS_PATH`` of its own)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket", "page(1)", "Next page", show=False),
        Binding("left_square_bracket", "page(-1)", "Previous page", show=False),
    ]

    def __init__(self, side_by_side: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_side_by_side(side_by_side)
        self.view: ItemView | None = None
        self.clipped = False
        self.highlight = True
        self.pages: list[str] = []
        """The show-all text cut into pages of at most ``PAGE_LINES`` lines."""
        self.page = 0
        self.total_lines = 0
        """How many lines the show-all text has, over all its pages."""

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
        lines = render.full_text("\n\n".join(parts)).split("\n")
        self.total_lines = len(lines)
        self.pages = [
            "\n".join(lines[i : i + PAGE_LINES]) for i in range(0, len(lines), PAGE_LINES)
        ]
        # Soft wrapping measures every line each time the area is sized: on the event
        # loop, a second or more for a diff of tens of thousands of lines. Past
        # WRAP_LINES the lines (at most render.FULL_LINE_CHARS) scroll sideways instead.
        area.soft_wrap = len(lines) <= WRAP_LINES
        self._turn_to(0)
        self.add_class("full")
        area.focus()
        return True

    def _turn_to(self, page: int) -> None:
        self.page = page
        area = self.query_one("#item-full", TextArea)
        area.load_text(self.pages[page])
        if len(self.pages) > 1:
            first = page * PAGE_LINES + 1
            last = min(first + PAGE_LINES - 1, self.total_lines)
            area.border_title = (
                f"lines {first:,}-{last:,} of {self.total_lines:,} · page {page + 1} of"
                f" {len(self.pages)} · ] next page · [ previous page"
            )
        else:
            area.border_title = None

    def action_page(self, step: int) -> None:
        """Turn the show-all view's page (a bell at either end)."""
        page = self.page + step
        if not self.showing_all or not 0 <= page < len(self.pages):
            self.app.bell()
            return
        self._turn_to(page)
