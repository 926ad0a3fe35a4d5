"""Home: every set with its progress, the annotator's own pending items and agreement."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, ProgressBar, Static
from textual.widgets.data_table import ColumnKey
from textual.worker import get_current_worker

from curator.presentation.format import number
from curator.presentation.text import one_line
from curator.tui.render import bar
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.audit import AuditScreen
from curator.tui.screens.base import CuratorScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.prompts import TextPrompt
from curator.tui.screens.review import ReviewScreen
from curator.tui.screens.search import SearchScreen
from curator.tui.screens.train import TrainScreen
from curator.tui.service import SetOverview
from curator.tui.widgets.header import TitleHeader
from store.sets import SetRow

COLUMNS = ("set", "kind", "items", "settled", "to do", "conflicts", "κ", "α")
BATCH_SECONDS = 0.25
"""How often the home screen puts the agreement figures computed so far on screen."""


class HomeScreen(CuratorScreen):
    help_title = "home"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,l", "label", "Label"),
        Binding("r", "review", "Review"),
        Binding("a", "agreement", "Agreement"),
        Binding("t", "audit", "Audit"),
        Binding("g", "goto", "Go to item"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("c", "charts", "Charts"),
        Binding("m", "train", "Train"),
        Binding("f5,ctrl+r", "refresh", "Refresh"),
        Binding("q", "app.quit", "Quit"),
    ]

    HELP_TEXT: ClassVar[dict[str, str]] = {
        "label": "label the highlighted set (resumes where you stopped)",
        "review": "review the set's conflicts and settle them as adjudicator",
        "agreement": "agreement of the set: Cohen per pair, Fleiss, Krippendorff",
        "audit": "running precision of an audit set with its Wilson interval",
        "goto": "open any item by #id, sha or key",
        "search": "search the whole store (or the highlighted set) by text; open a hit",
        "charts": "charts of the highlighted set: labels, agreement per week, audit, threshold",
        "train": "retrain the student, compare it with the previous one, promote it",
        "refresh": "reload progress and agreement",
        "app.quit": "quit Curator",
    }

    def __init__(self, open_set: str | None = None) -> None:
        super().__init__()
        self.open_set = open_set
        self.sets: list[SetRow] = []
        self.resumed = False

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static("", id="status", classes="status")
        yield ProgressBar(id="loading", show_eta=False)
        yield DataTable(id="sets", cursor_type="row", zebra_stripes=True)
        yield Static(
            Text(
                "enter label · r review · a agreement · t audit · g go to item · / search"
                " · c charts · m train · ? all keys"
            ),
            classes="hint",
        )
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self.load()

    def on_screen_resume(self) -> None:
        # The first resume comes with mounting, which loads already.
        if self.resumed:
            self.load()
        self.resumed = True

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="home")
    def load(self) -> None:
        service = self.curation
        worker = get_current_worker()
        sets = service.sets()
        self.from_worker(self._show_sets, sets)
        # Counts first (counters: milliseconds at any size), in one update of the table,
        # then agreement per set, in an update every BATCH_SECONDS: an update per set
        # re-measured the whole table each time (324 sets took 17 s to count, 45 s to
        # fill in). A refresh started meanwhile (f5, back from a set) takes over.
        counts = [service.counts(s) for s in sets]
        if worker.is_cancelled or not sets:
            return
        self.from_worker(self._show_overviews, counts, 0, len(sets))
        batch: list[SetOverview] = []
        flushed = time.monotonic()
        for i, s in enumerate(sets, start=1):
            if worker.is_cancelled:
                return
            batch.append(service.overview(s))
            if i == len(sets) or time.monotonic() - flushed >= BATCH_SECONDS:
                self.from_worker(self._show_overviews, batch, i, len(sets))
                batch, flushed = [], time.monotonic()

    def _show_sets(self, sets: list[SetRow]) -> None:
        same = [s.id for s in sets] == [s.id for s in self.sets]
        self.sets = sets
        table = self.query_one(DataTable)
        if not same:  # the same sets keep their figures until the new ones arrive
            selected = table.cursor_row
            table.clear()
            for s in sets:
                table.add_row(one_line(s.name, 24), s.kind, "…", "", "", "", "", "", key=str(s.id))
            if sets:
                table.move_cursor(row=min(selected, len(sets) - 1))
        progress = self.query_one(ProgressBar)
        progress.update(total=max(len(sets), 1), progress=0)
        progress.display = bool(sets)
        status = self.query_one("#status", Static)
        if not sets:
            status.update(
                Text(
                    "No sets yet. Create one with `curator set create` or"
                    " `curator import items FILE --set NAME`."
                )
            )
        else:
            status.update(Text(f"{len(sets)} sets · loading progress and agreement…"))
        if self.open_set:
            wanted, self.open_set = self.open_set, None
            match = next((s for s in sets if s.name == wanted), None)
            if match is None:
                self.curator_app.say(f"no set named {wanted!r}", error=True)
            else:
                self._open_label(match)

    def _show_overviews(self, overviews: list[SetOverview], done: int, total: int) -> None:
        """Put the sets' figures in the table (``done`` 0: counts only, agreement to
        follow) and how many sets have their agreement in the progress bar."""
        table = self.query_one(DataTable)
        updates = [u for o in overviews for u in self._cells(table, o, done)]
        # A column only widens, by its widest new cell: Textual re-measures every cell
        # of a column for each updated cell narrower than the column's widest one, which
        # over hundreds of sets took seconds on the event loop.
        widest: dict[str, tuple[int, int]] = {}
        for i, (_, column, value) in enumerate(updates):
            width = value.cell_len if isinstance(value, Text) else cell_len(value)
            if width > widest.get(column, (table.columns[ColumnKey(column)].content_width,))[0]:
                widest[column] = (width, i)
        wider = {i for _, i in widest.values()}
        for i, (key, column, value) in enumerate(updates):
            table.update_cell(key, column, value, update_width=i in wider)
        progress = self.query_one(ProgressBar)
        progress.update(progress=done)
        if done == total:
            progress.display = False
            self.query_one("#status", Static).update(
                one_line(f"{total} sets · annotator {self.curation.annotator}")
            )

    def _cells(
        self, table: DataTable[str], o: SetOverview, done: int
    ) -> list[tuple[str, str, str | Text]]:
        """(row, column, value) of one set's figures."""
        key = str(o.set_row.id)
        if key not in table.rows:
            return []
        cells: dict[str, str | Text] = {
            "items": str(o.items),
            "settled": bar(o.done, 8),
            "to do": str(o.pending_mine),
            "conflicts": str(o.conflicts),
            "κ": number(o.kappa, 2),
            "α": number(o.alpha, 2),
        }
        if done == 0:  # counts only: agreement follows ("…" until the first figures come)
            for column in ("κ", "α"):
                if str(table.get_cell(key, column)):
                    del cells[column]
                else:
                    cells[column] = "…"
        return [(key, column, value) for column, value in cells.items()]

    def _selected(self) -> SetRow | None:
        table = self.query_one(DataTable)
        if not self.sets or table.cursor_row is None or table.cursor_row >= len(self.sets):
            return None
        return self.sets[table.cursor_row]

    def _chosen(self) -> SetRow | None:
        """The highlighted set; with none (no sets yet, or still loading) say so."""
        s = self._selected()
        if s is None:
            self.curator_app.say(
                "no set to open yet: create one with `curator set create` or"
                " `curator import items FILE --set NAME`"
                if self.sets == []
                else "the sets are still loading"
            )
        return s

    def _open_label(self, s: SetRow) -> None:
        self.app.push_screen(LabelScreen(s))

    def action_label(self) -> None:
        s = self._chosen()
        if s is not None:
            self._open_label(s)

    def on_key(self, event: events.Key) -> None:
        """Enter opens the highlighted set here, as it reaches the screen. Through the
        table's own enter (a RowSelected message, one hop later) an esc typed right
        after it reached this screen first and did nothing, and the set opened anyway;
        with no row the table's enter would do nothing unsaid."""
        if event.key == "enter" and self.is_active:
            event.stop()
            event.prevent_default()
            self.action_label()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.is_active:  # enter twice opened the set twice
            self.action_label()

    def action_review(self) -> None:
        s = self._chosen()
        if s is not None:
            self.app.push_screen(ReviewScreen(s))

    def action_agreement(self) -> None:
        s = self._chosen()
        if s is not None:
            self.app.push_screen(AgreementScreen(s))

    def action_audit(self) -> None:
        s = self._chosen()
        if s is None:
            return
        if s.purpose != "audit":
            self.curator_app.say(f"{s.name} is not an audit set (curator audit draw makes one)")
            return
        self.app.push_screen(AuditScreen(s))

    def action_goto(self) -> None:
        def go(ref: str | None) -> None:
            if ref:
                self.open_item(ref)

        self.app.push_screen(TextPrompt("Go to item (#id, sha or key)"), go)

    @work(thread=True, group="goto")
    def open_item(self, ref: str) -> None:
        try:
            item_id = self.curation.resolve(ref)
        except LookupError as exc:
            self.from_worker(self.curator_app.say, str(exc), error=True)
            return
        self.from_worker(self._push_detail, item_id)

    def _push_detail(self, item_id: int) -> None:
        self.app.push_screen(ItemDetailScreen(item_id))

    def action_search(self) -> None:
        self.app.push_screen(SearchScreen(self._selected()))

    def action_charts(self) -> None:
        selected = self._selected()
        if selected is None:
            self.curator_app.say("no set to chart yet")
            return
        from curator.tui.screens.charts import ChartsScreen  # loads plotext on first use

        self.app.push_screen(ChartsScreen(selected))

    def action_train(self) -> None:
        self.app.push_screen(TrainScreen())
