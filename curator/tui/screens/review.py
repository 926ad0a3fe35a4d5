"""Review: a set's conflicts side by side; the adjudicator settles each with one key."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, ProgressBar, Static

from annotation.adjudication import Decision
from curator.presentation.text import flat, one_line
from curator.tui import STYLES, render
from curator.tui.item_view import ItemView
from curator.tui.keys import LEAVE_KEYS
from curator.tui.screens.base import LabelKeysScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.service import ItemGone
from curator.tui.widgets.header import TitleHeader
from curator.tui.widgets.item_panel import ItemPanel
from store.sets import SetRow


class ReviewScreen(LabelKeysScreen):
    help_title = "review conflicts"
    CSS_PATH = STYLES / "review.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "undo", "Undo"),
        Binding("enter,d", "detail", "Detail"),
        Binding("f", "show_all", "Show all"),
        Binding("f5,ctrl+r", "refresh", "Refresh"),
        # Shown in the footer and help; the keys are handled in LabelKeysScreen.on_key.
        Binding(",".join(LEAVE_KEYS), "leave", "Back"),
    ]

    HELP_TEXT: ClassVar[dict[str, str]] = {
        "undo": "undo your last adjudication in this set",
        "detail": "item detail of the highlighted conflict",
        "show_all": "show every line of the item; esc returns",
        "refresh": "reload the conflicts",
        "leave": "back to the home screen",
    }

    label_verb = "settle as"
    keys_lead = "settle: "
    takes_skip = False

    def __init__(self, set_row: SetRow) -> None:
        super().__init__(set_row)
        self.conflicts: list[Decision] = []
        self.busy = False

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static("", id="status", classes="status")
        yield ProgressBar(id="loading", total=None, show_eta=False, show_percentage=False)
        yield DataTable(id="conflicts", cursor_type="row", zebra_stripes=True)
        yield ItemPanel(id="panel")
        yield Static("", id="votes", classes="hint")
        yield Static(self.keys_hint(self.keys_lead), id="keys", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.title = flat(f"Review {self.set_row.name}")
        self.query_one("#status", Static).update(
            one_line(f"{self.set_row.name} · loading conflicts…")
        )
        self.load()

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="review")
    def load(self) -> None:
        fresh = self.curation.fresh_set(self.set_row)
        self.from_worker(self.adopt_set, fresh)
        conflicts = self.curation.conflicts(fresh)
        self.from_worker(self._show_conflicts, conflicts)

    def _show_conflicts(self, conflicts: list[Decision]) -> None:
        self.query_one("#loading", ProgressBar).display = False
        self.conflicts = conflicts
        self.busy = False
        table = self.query_one(DataTable)
        row = table.cursor_row or 0
        table.clear(columns=True)
        annotators = sorted({a for d in conflicts for a in d.votes})
        table.add_column("#", key="id")
        table.add_column("why", key="why")
        for a in annotators:
            table.add_column(one_line(a, 12), key=f"a:{a}")
        for d in conflicts:
            cells: list[str | Text] = [str(d.item_id), d.reason or ""]
            for a in annotators:
                label = d.votes.get(a, "")
                cell = one_line(label, 40)
                if d.notes.get(a):
                    cell.append(" ✎", "yellow")
                cells.append(cell)
            table.add_row(*cells, key=str(d.item_id))
        status = self.query_one("#status", Static)
        if conflicts:
            status.update(
                one_line(
                    f"{self.set_row.name} · {len(conflicts)}"
                    f" {'conflict' if len(conflicts) == 1 else 'conflicts'} ·"
                    f" you settle them as adjudicator {self.curation.annotator}"
                )
            )
            table.move_cursor(row=min(row, len(conflicts) - 1))
            self._load_item()
        else:
            status.update(one_line(f"{self.set_row.name} · no conflicts left"))
            self.query_one(ItemPanel).show(
                None,
                empty=(
                    "No conflicts: no item waits for an adjudicator (items still short of"
                    " their votes are not conflicts). esc returns home."
                ),
            )
            self.query_one("#votes", Static).update("")

    def _current(self) -> Decision | None:
        table = self.query_one(DataTable)
        if not self.conflicts or table.cursor_row is None:
            return None
        if table.cursor_row >= len(self.conflicts):
            return None
        return self.conflicts[table.cursor_row]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._load_item()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if self.is_active:  # enter twice opened the item twice
            self.action_detail()

    def _load_item(self) -> None:
        d = self._current()
        if d is not None:
            self._fetch(d.item_id)

    @work(thread=True, exclusive=True, group="review-item")
    def _fetch(self, item_id: int) -> None:
        view = self.curation.item(None, item_id, reveal=True)
        self.from_worker(self._show_item, view)

    def _show_item(self, view: ItemView | None) -> None:
        d = self._current()
        if view is None or d is None or d.item_id != view.item_id:
            return
        self.query_one(ItemPanel).show(view, highlight=False)
        out = Text.assemble((f"#{view.item_id} ", "bold"), one_line(view.title, 60), "\n")
        out.append_text(render.votes_line(view.votes, self.curation.annotator))
        self.query_one("#votes", Static).update(out)

    def on_label(self, label: str) -> None:
        d = self._current()
        if d is None or self.busy:
            self.app.bell()
            return
        self.busy = True
        self._settle(d.item_id, label)

    @work(thread=True, group="review")
    def _settle(self, item_id: int, label: str) -> None:
        service = self.curation
        try:
            service.vote(self.set_row, item_id, label, adjudicate=True)
        except ItemGone as exc:  # deleted by another process: it leaves the list
            self.from_worker(self.curator_app.say, str(exc), error=True)
            self.from_worker(self._show_conflicts, service.conflicts(self.set_row))
            return
        except (ValueError, LookupError) as exc:
            self.from_worker(self._failed, str(exc))
            return
        self.from_worker(self.curator_app.say, f"#{item_id} settled as {label}")
        self.from_worker(self._show_conflicts, service.conflicts(self.set_row))

    def _failed(self, message: str) -> None:
        self.busy = False
        self.curator_app.say(message, error=True)

    def action_undo(self) -> None:
        if self.busy:
            self.app.bell()
            return
        self.busy = True
        self._undo()

    @work(thread=True, group="review")
    def _undo(self) -> None:
        service = self.curation
        result = service.undo(self.set_row, adjudicate=True)
        if result is None:
            self.from_worker(self._failed, "no adjudication of yours to undo here")
            return
        self.from_worker(self.curator_app.say, f"undid your adjudication of #{result.item_id}")
        self.from_worker(self._show_conflicts, service.conflicts(self.set_row))

    def action_detail(self) -> None:
        d = self._current()
        if d is not None:
            self.app.push_screen(ItemDetailScreen(d.item_id, reveal=True))
