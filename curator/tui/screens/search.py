"""Search: the whole store (or one set) by its text, ranked by bm25; enter opens a hit in
the item detail screen. The query runs in a worker through the service, so typing never
waits on the database; snippets are untrusted text, drawn as styled segments."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Input, Static

from curator.presentation.search import highlighted, hit_title
from curator.presentation.text import one_line
from curator.tui.screens.base import CuratorScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.widgets.header import TitleHeader
from store.search import Hit
from store.sets import SetRow

COLUMNS = ("item", "key", "in", "snippet")


class SearchScreen(CuratorScreen):
    help_title = "search"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+o", "scope", "Store / set"),
        Binding("slash", "focus_query", "New search", key_display="/"),
        Binding("escape", "leave", "Back"),
    ]
    HELP_TEXT: ClassVar[dict[str, str]] = {
        "scope": "search the whole store, or only the set highlighted on the home screen",
        "focus_query": 'type a new query: words, "a phrase", prefix*, message: or diff:',
        "leave": "back to where you came from",
    }

    def __init__(self, set_row: SetRow | None = None, query: str = "") -> None:
        super().__init__()
        self.set_row = set_row
        self.in_set = False
        self.query_text = query
        self.hits: list[Hit] = []
        # The set the hits were searched in (None: the whole store). A hit opens as an
        # item of that set, else as any item: blind wherever a blind set holds it, never
        # under the rules of a set that was only highlighted on the home screen.
        self.hits_set: SetRow | None = None

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static("", id="status", classes="status")
        yield Input(value=self.query_text, placeholder='cache, "speed up", diff: malloc', id="q")
        yield DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        yield Static(
            Text("enter search/open · / new query · ctrl+o store or set · esc back"),
            classes="hint",
        )
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self._status("type a query and press enter")
        if self.query_text:
            self.find(self.query_text)

    def _scope_name(self) -> str:
        return f"set {self.set_row.name}" if self.in_set and self.set_row else "the whole store"

    def _status(self, text: str, width: int = 100) -> None:
        self.query_one("#status", Static).update(
            Text.assemble(one_line(self._scope_name(), 40), " · ", one_line(text, width))
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.query_text = text
            self.find(text)

    def action_focus_query(self) -> None:
        query = self.query_one(Input)
        query.value = ""
        query.focus()

    def action_scope(self) -> None:
        if self.set_row is None:
            self.curator_app.say("open search from a highlighted set to search only it")
            return
        self.in_set = not self.in_set
        if self.query_text:
            self.find(self.query_text)
        else:
            self._status("type a query and press enter")

    def action_leave(self) -> None:
        self.app.pop_screen()

    def find(self, text: str) -> None:
        self._status(f"searching for {text!r}…")
        self._find(text, self.set_row if self.in_set else None)

    @work(thread=True, exclusive=True, group="search")
    def _find(self, text: str, set_row: SetRow | None) -> None:
        try:
            hits = self.curation.find(text, set_row)
        except ValueError as exc:
            self.from_worker(self._refused, str(exc))
            return
        self.from_worker(self._show, text, hits, set_row)

    def _refused(self, reason: str) -> None:
        """A query that cannot run: the last query's hits go, so enter cannot open one
        of them under the new query's error."""
        self.hits = []
        self.query_one(DataTable).clear()
        self._status(reason, 300)

    def _show(self, text: str, hits: list[Hit], set_row: SetRow | None) -> None:
        self.hits, self.hits_set = hits, set_row
        table = self.query_one(DataTable)
        table.clear()
        for h in hits:
            table.add_row(
                f"#{h.item_id}",
                hit_title(h),
                h.field,
                highlighted(h.snippet, 200),
                key=str(h.item_id),
            )
        found = (
            f"{len(hits)} {'match' if len(hits) == 1 else 'matches'}" if hits else "no item matches"
        )
        self._status(f"{found} for {text!r}")
        if hits:
            table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is None or not self.is_active:
            return
        self.app.push_screen(ItemDetailScreen(int(event.row_key.value), self.hits_set))
