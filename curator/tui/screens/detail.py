"""Item detail: everything stored about one commit, kernel or IR module, and its actions.

Kernels show their original and normalized source side by side (stacked on narrow
terminals) with features and verdict; IR modules show their text, counts, opcode
histogram and provenance. The action bar lists what engines contributed for the kind
(the app's ``ActionRegistry``, ``curator.tui.actions``); an action runs in a worker
with a progress bar.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, ProgressBar, Static

from curator.presentation.text import one_line
from curator.tui import STYLES, render
from curator.tui.actions import ActionContext, ItemAction
from curator.tui.item_view import ItemView
from curator.tui.screens.base import CuratorScreen
from curator.tui.widgets.header import TitleHeader
from curator.tui.widgets.item_panel import ItemPanel
from store.sets import SetRow

WIDE = 110


def facts_table(facts: list[tuple[str, str]]) -> Table:
    """Key and value rows; a key ending in ``:`` starts a titled group."""
    table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
    table.add_column(style="dim", no_wrap=True, width=13, overflow="ellipsis")
    table.add_column(overflow="fold", ratio=1)
    for key, value in facts:
        if key.endswith(":") and not value:
            table.add_row(Text(key.rstrip(":"), style="bold"), "")
            continue
        if not value:
            continue
        table.add_row(one_line(key, 30), one_line(value, 200))
    return table


def histogram(counts: dict[str, int], width: int = 14, top: int = 12) -> Table:
    """The most frequent opcodes as a bar chart."""
    table = Table(box=None, show_header=False, padding=(0, 1), expand=True)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(justify="right", no_wrap=True)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    most = ranked[0][1] if ranked else 1
    for name, n in ranked:
        table.add_row(
            one_line(name, 16), Text("█" * max(1, round(width * n / most)), "cyan"), str(n)
        )
    return table


class ItemDetailScreen(CuratorScreen):
    help_title = "item detail"
    CSS_PATH = STYLES / "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "show_all", "Show all"),
        Binding("i", "toggle_side", "Facts & votes"),
        Binding("escape,q", "leave", "Back"),
    ]

    def __init__(self, item_id: int, set_row: SetRow | None = None, reveal: bool = False) -> None:
        super().__init__()
        self.item_id = item_id
        self.set_row = set_row
        self.reveal = reveal
        self.view: ItemView | None = None
        self.running: ActionContext | None = None

    def _actions(self, kind: str) -> list[ItemAction]:
        return self.curator_app.item_actions.for_kind(kind)

    def help_rows(self) -> list[tuple[str, str]]:
        kind = self.view.kind if self.view else ""
        return [(a.key, a.label) for a in self._actions(kind)]

    def compose(self) -> ComposeResult:
        wide = self.app.size.width >= WIDE
        self.set_class(not wide, "narrow")
        yield TitleHeader()
        yield Static(Text(f"item #{self.item_id} · loading…"), id="status", classes="status")
        yield Static("", id="meta", classes="meta")
        with Horizontal(id="detail-body"):
            yield ItemPanel(side_by_side=wide, id="panel")
            with VerticalScroll(id="side"):
                yield Static("", id="facts", classes="box")
                yield Static("", id="histogram", classes="box")
                yield Static("", id="predictions", classes="box")
                yield Static("", id="votes", classes="box")
        yield ProgressBar(id="action-progress", show_eta=False)
        yield Static("", id="actions", classes="hint")
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        """Side by side from ``WIDE`` columns up, stacked below, as the terminal changes."""
        wide = event.size.width >= WIDE
        self.set_class(not wide, "narrow")
        if (panel := self.item_panel()) is not None:
            panel.set_side_by_side(wide)

    def on_mount(self) -> None:
        self.title = f"Item #{self.item_id}"
        self.query_one(ProgressBar).display = False
        self.load()

    @work(thread=True, exclusive=True, group="detail")
    def load(self) -> None:
        view = self.curation.item(self.set_row, self.item_id, self.reveal)
        self.from_worker(self._show, view)

    def _show(self, view: ItemView | None) -> None:
        self.view = view
        status = self.query_one("#status", Static)
        if view is None:
            status.update(Text(f"item #{self.item_id} does not exist"))
            return
        status.update(Text.assemble(f"{view.kind} #{view.item_id} · ", one_line(view.title, 100)))
        self.query_one("#meta", Static).update(render.pairs(view.meta, 60))
        blind = view.blind
        self.query_one(ItemPanel).show(view, highlight=not blind)
        self.query_one("#facts", Static).update(facts_table(view.facts) if view.facts else Text(""))
        hist = self.query_one("#histogram", Static)
        if view.histogram:
            hist.update(Group(Text("opcodes", style="bold"), histogram(view.histogram)))
        else:
            hist.display = False
        preds = self.query_one("#predictions", Static)
        if blind:
            preds.update(Text("machine predictions hidden (blind set)", style="dim"))
        elif view.predictions:
            preds.update(
                Text.assemble(("machines\n", "bold"), render.predictions_line(view.predictions))
            )
        else:
            preds.update(Text("no machine predictions", style="dim"))
        votes = self.query_one("#votes", Static)
        votes.update(
            Text.assemble(
                ("votes\n", "bold"), render.votes_line(view.votes, self.curation.annotator)
            )
            if view.votes
            else Text("no votes", style="dim")
        )
        self._show_actions()

    def _show_actions(self) -> None:
        out = Text()
        kind = self.view.kind if self.view else ""
        for i, a in enumerate(self._actions(kind)):
            if i:
                out.append("  ")
            out.append(a.key, "bold")
            out.append(" " + a.label)
        if self.running is not None:
            out.append("   running… esc cancels", "dim")
        self.query_one("#actions", Static).update(out)

    def on_key(self, event: events.Key) -> None:
        if self.view is None or not self.is_active:  # typed for this screen, now left
            return
        action = next(
            (a for a in self._actions(self.view.kind) if a.key == event.character),
            None,
        )
        if action is None:
            return
        event.stop()
        event.prevent_default()
        if self.running is not None:
            self.app.bell()
            return
        self.start(action)

    def start(self, action: ItemAction) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=100, progress=0)
        bar.display = True

        def progress(fraction: float, text: str) -> None:
            self.from_worker(self._progress, fraction, text)

        def copy(text: str) -> None:
            self.from_worker(self.app.copy_to_clipboard, text)

        self.running = ActionContext(self.curation, self.item_id, progress, copy)
        self._show_actions()
        self._run(action, self.running)

    def _progress(self, fraction: float, text: str) -> None:
        self.query_one(ProgressBar).update(progress=round(100 * fraction))
        self.query_one("#status", Static).update(one_line(text, 120))

    @work(thread=True, group="action")
    def _run(self, action: ItemAction, ctx: ActionContext) -> None:
        try:
            result = action.run(ctx)
        except Exception as exc:  # an action's failure is reported, never fatal to the app
            result = f"{action.label} failed: {exc}"
        self.from_worker(self._finished, action, result)

    def _finished(self, action: ItemAction, result: str) -> None:
        self.running = None
        self.query_one(ProgressBar).display = False
        self.curator_app.say(one_line(result, 200).plain)
        self._show_actions()
        if action.changes_item:
            self.load()

    def on_unmount(self) -> None:
        if self.running is not None:  # quitting mid-action: stop it, do not wait for it
            self.running.cancelled.set()

    def action_show_all(self) -> None:
        if (panel := self.item_panel()) is not None:
            panel.toggle_all()

    def action_toggle_side(self) -> None:
        # Narrow: the facts take the panel's place and back; wide: they hide and return.
        self.toggle_class("side-open" if self.has_class("narrow") else "side-hidden")

    def action_leave(self) -> None:
        if self.running is not None:
            self.running.cancelled.set()
            self.curator_app.say("cancelling…")
            return
        panel = self.item_panel()
        if panel is not None and panel.showing_all:
            panel.toggle_all()
            return
        self.app.pop_screen()
