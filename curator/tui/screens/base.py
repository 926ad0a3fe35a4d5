"""What several screens share: the typed way to the app and its service, voting by
label keys over an item panel, and reports that refresh themselves in a worker."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, ProgressBar, Static

from curator.presentation.text import flat, one_line
from curator.tui.keys import (
    LEAVE_KEYS,
    LabelKey,
    describe,
    is_modified,
    key_for,
    label_keys,
    settling_keys,
)
from curator.tui.screens.ordered import closed, keys_in_order, ready, run_binding_now
from curator.tui.service import CurationService, labels_of
from curator.tui.widgets.header import TitleHeader
from curator.tui.widgets.item_panel import ItemPanel
from store.sets import SetRow

if TYPE_CHECKING:
    from curator.tui.app import CuratorApp


class CuratorScreen(Screen[None]):
    """A screen of the Curator app: :attr:`curator_app` is the app, typed, and
    :attr:`curation` its service, the only way a screen reaches the data.

    A key is delivered to the widget that had focus when it arrived: of keys typed
    fast (enter enter), the second is handled after the first has left the screen.
    Message handlers that open or close screens act only while :attr:`is_active`, and
    keys run their bindings in the order typed, each on the screen it was typed on
    (:mod:`.ordered`)."""

    async def on_key(self, event: events.Key) -> None:
        await keys_in_order(self, event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return ready(self)

    @property
    def curator_app(self) -> CuratorApp:
        return cast("CuratorApp", self.app)

    @property
    def curation(self) -> CurationService:
        return self.curator_app.service

    def item_panel(self) -> ItemPanel | None:
        """The screen's item panel; None before the screen has composed it (a key typed
        right behind the one that opened the screen reaches it first) or once removed."""
        return next(iter(self.query(ItemPanel)), None)

    def from_worker(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> None:
        """Run ``callback(*args, **kwargs)`` on the event loop, called from a worker thread.

        A worker can outlive its screen: the user pops it, or quits, while a query or a
        check is still running. A result for the screen is then dropped instead of
        updating widgets that are being removed (which raised NoMatches and failed the
        worker); a callback of the app itself (a message to the user) still runs."""
        app = self.app

        def deliver() -> None:
            if getattr(callback, "__self__", None) is app:
                if app.is_running:
                    callback(*args, **kwargs)
            elif self.is_attached and not (self._pruning or self._closing or self._closed):
                callback(*args, **kwargs)

        try:
            app.call_from_thread(deliver)
        except RuntimeError:
            if app.is_running:
                raise


class LabelKeysScreen(CuratorScreen):
    """A screen over one set where each label key (``1``, ``p``, ``s``...) acts on the
    item shown: subclasses say what a label key does in :meth:`on_label`."""

    label_verb = "vote"
    keys_lead = ""  # what the line of label keys starts with
    takes_skip = True  # False where a label key settles an item: skip settles nothing

    def __init__(self, set_row: SetRow) -> None:
        super().__init__()
        self.set_row = set_row
        self.keys: list[LabelKey] = self._keys_of(set_row)

    def _keys_of(self, set_row: SetRow) -> list[LabelKey]:
        keys = label_keys(labels_of(set_row))
        return keys if self.takes_skip else settling_keys(keys)

    def help_rows(self) -> list[tuple[str, str]]:
        return [(k, f"{self.label_verb} {w.removeprefix('vote ')}") for k, w in describe(self.keys)]

    def keys_hint(self, lead: str = "") -> Text:
        out = Text(lead)
        for i, (keys, what) in enumerate(describe(self.keys)):
            if i:
                out.append("  ")
            out.append(keys, "bold")
            out.append(" " + what.removeprefix("vote "))
        return out

    async def on_key(self, event: events.Key) -> None:
        """A label key acts on the item shown; the leave keys and the screen's other keys
        (``d``, ``c``, ``?``...) are handled here too, in the order typed with the label
        keys.

        Textual runs a label key on this screen as the key passes it, but a binding only
        once its key has bubbled up to the app, after the keys already queued for the
        screen. Esc then 1 typed fast (one read from a terminal with the kitty keyboard
        protocol, or keys queued while the app was busy) thus acted on the item still
        shown, then left. Here esc leaves first, and a key that reaches the screen after
        it has left does nothing (``q`` ``q`` goes home once, never quits). The other
        bindings run here for the same reason: ``d`` then esc typed fast left the label
        screen before ``d``'s binding ran, and ``c`` then esc opened the home screen's
        charts. A key reaching the screen while one it opened covers it (``d`` then esc)
        goes on to that screen, except a label key (:mod:`.ordered`).

        A key with Alt or Ctrl never acts: a legacy terminal sends Alt+s, or esc then s
        typed within Textual's ESCDELAY, as ``\\x1bs``, which arrives as ``alt+s`` carrying
        the character ``s``. (Esc then a digit that fast arrives as ``¡``, ``™``..., which
        Textual maps from macOS Option+digit: neither a label key nor a way out.)"""
        if not self.is_active:
            event.prevent_default()  # no vote, no "not a label key" note
            if closed(self) or key_for(self.keys, event.character or event.key) is not None:
                event.stop()  # typed for this screen: not for the one now shown
            return
        if event.key in LEAVE_KEYS:
            event.stop()
            event.prevent_default()
            if event.key == "escape":
                self.clear_selection()  # what Textual's own escape handler does
            self.action_leave()
            return
        if is_modified(event.key):
            event.prevent_default()
            return
        label = key_for(self.keys, event.character or event.key)
        if label is None:
            if not await run_binding_now(self, event):
                self._not_a_label_key(event)
                event.prevent_default()  # no binding to run again in CuratorScreen.on_key
            return
        event.stop()
        event.prevent_default()
        panel = self.item_panel()
        if panel is not None and panel.showing_all:
            panel.toggle_all()
        self.on_label(label)

    def _not_a_label_key(self, event: events.Key) -> None:
        """Say which keys vote when the annotator presses a digit no label has, or the
        first letter of a label that is not its key (``g`` for good): otherwise the key
        would do nothing without a word."""
        char = event.character or ""
        if not (char.isascii() and char.isalnum()) or event.key in self.active_bindings:
            return
        firsts = {label[:1].lower() for label in labels_of(self.set_row)}
        if not (char.isdigit() or char.lower() in firsts):
            return
        event.stop()
        self.app.bell()
        shown = " · ".join(f"{k} {w.removeprefix('vote ')}" for k, w in describe(self.keys))
        self.curator_app.say(f"{char} is not a label key in {self.set_row.name}: {shown}")

    def adopt_set(self, fresh: SetRow) -> None:
        """Take the set as stored now (``curator set edit`` in another process may have
        changed it while the screen was open): its label keys follow, and the annotator
        is told what changed."""
        old, self.set_row = self.set_row, fresh
        if fresh == old:
            return
        changes = []
        if labels_of(fresh) != labels_of(old):
            self.keys = self._keys_of(fresh)
            changes.append(f"labels {', '.join(labels_of(fresh))}")
            for hint in self.query("#keys").results(Static):
                hint.update(self.keys_hint(self.keys_lead))
        if fresh.blind != old.blind:
            changes.append("now blind" if fresh.blind else "now open (not blind)")
        if fresh.votes_per_item != old.votes_per_item:
            changes.append(f"{fresh.votes_per_item} votes per item")
        if fresh.overlap != old.overlap:
            changes.append(f"overlap {fresh.overlap}")
        if changes:
            self.curator_app.say(
                f"{fresh.name} was changed elsewhere: {'; '.join(changes)}", warning=True
            )

    def on_label(self, label: str) -> None:
        raise NotImplementedError

    def action_show_all(self) -> None:
        if (panel := self.item_panel()) is not None:
            panel.toggle_all()

    def action_leave(self) -> None:
        panel = self.item_panel()
        if panel is not None and panel.showing_all:
            panel.toggle_all()
            return
        self.app.pop_screen()


class ReportScreen(CuratorScreen):
    """A set's figures in a column of boxes, fetched in a worker and refreshed every
    ``refresh_seconds`` so they follow votes cast anywhere and edits of the set."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f5,ctrl+r", "refresh", "Refresh"),
        Binding("escape,q", "app.pop_screen", "Back"),
    ]
    boxes: ClassVar[tuple[str, ...]] = ()
    refresh_seconds = 3.0
    title_word = ""
    hint = ""

    def __init__(self, set_row: SetRow) -> None:
        super().__init__()
        self.set_row = set_row

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static(one_line(f"{self.set_row.name} · loading…"), id="status", classes="status")
        yield ProgressBar(id="loading", total=None, show_eta=False, show_percentage=False)
        with VerticalScroll():
            for box in self.boxes:
                yield Static("", id=box, classes="box")
        if self.hint:
            yield Static(Text(self.hint), classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.title = flat(f"{self.title_word} {self.set_row.name}")
        self.load()
        self.set_interval(self.refresh_seconds, self.load)

    def action_refresh(self) -> None:
        self.load()

    def fetch(self) -> Any:
        """The report (runs in a worker thread)."""
        raise NotImplementedError

    def present(self, report: Any) -> None:
        """Put the report on screen (runs on the event loop)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="report")
    def load(self) -> None:
        show: Callable[..., None]
        # `curator set edit` in another process (votes per item, labels) changes what
        # the figures count: each refresh reads the set as stored now, as the CLI does.
        self.set_row = self.curation.fresh_set(self.set_row)
        try:
            report, show = self.fetch(), self.present
        except ValueError as exc:
            report, show = str(exc), self._error
        self.from_worker(self._loaded)
        self.from_worker(show, report)

    def _loaded(self) -> None:
        self.query_one("#loading", ProgressBar).display = False

    def _error(self, message: str) -> None:
        self.query_one("#status", Static).update(one_line(message, 200))

    def box(self, name: str) -> Static:
        return self.query_one(f"#{name}", Static)
