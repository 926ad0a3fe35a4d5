"""Label: one set's queue for one annotator, one key per vote.

The screen resumes at the annotator's first unlabeled item. Every store call runs in
a thread worker; while one is in flight further vote keys are refused with a bell,
so a fast typist never votes on an item they have not seen. Keys are handled in the
order typed, leaving included: esc then 1 typed fast leaves without a vote.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from annotation.queue import QueueEntry
from curator.active_learning import Rerank
from curator.presentation.text import flat, one_line
from curator.tui import render
from curator.tui.item_view import ItemView
from curator.tui.keys import LEAVE_KEYS
from curator.tui.queue_cursor import QueueCursor
from curator.tui.screens.base import LabelKeysScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.prompts import ChoicePrompt, TextPrompt
from curator.tui.service import ItemGone, ItemTaken, QueueState, categories_of, counts_in
from curator.tui.widgets.header import TitleHeader
from curator.tui.widgets.item_panel import ItemPanel
from store.sets import SetRow


class LabelScreen(LabelKeysScreen):
    help_title = "label"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("u", "undo", "Undo"),
        Binding("c", "category", "Category"),
        Binding("n", "note", "Note"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("f", "show_all", "Show all"),
        Binding("b", "back_item", "Previous"),
        Binding("d", "detail", "Detail"),
        # Shown in the footer and help; the keys are handled in LabelKeysScreen.on_key.
        Binding(",".join(LEAVE_KEYS), "leave", "Back"),
    ]

    HELP_TEXT: ClassVar[dict[str, str]] = {
        "undo": "undo your last vote in this set and show that item again",
        "category": "pick a category for this item (saved with your vote)",
        "note": "write a note for this item (saved with your vote)",
        "search": "search this set by #id, sha prefix or words; jump to a hit",
        "show_all": "show every line (long diffs and lines are clipped); esc returns",
        "back_item": "go back to the item you voted before (vote again to change it)",
        "detail": "item detail: every field, predictions, vote history",
        "leave": "back to the home screen",
    }

    def __init__(self, set_row: SetRow) -> None:
        super().__init__(set_row)
        self.cursor: QueueCursor | None = None
        self.view: ItemView | None = None
        self.category: str | None = None
        self.note: str | None = None
        self.busy = True
        self.history: list[QueueEntry] = []
        self.entry: QueueEntry | None = None
        self.state: QueueState | None = None
        self._changes = 0  # votes and undos stored since the screen opened
        self._back_explained = False  # b (back) in a set with a label such as bad
        # Active learning: votes since the last re-rank, and whether the queue's order
        # changed under the cursor (it then drops the page it read ahead).
        self.votes_since_rerank = 0
        self.reordered = False
        self.last_rerank: Rerank | None = None

    def compose(self) -> ComposeResult:
        yield TitleHeader()
        yield Static("", id="status", classes="status")
        yield Static("", id="meta", classes="meta")
        yield ItemPanel(id="panel")
        yield Static("", id="machine", classes="hint")
        yield Static("", id="votes", classes="hint")
        yield Static(self.keys_hint(), id="keys", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        self.title = flat(f"Label {self.set_row.name}")
        self.query_one("#status", Static).update(one_line(f"{self.set_row.name} · opening…"))
        self.open_queue()

    @work(thread=True, group="label")
    def open_queue(self) -> None:
        service = self.curation
        self.cursor, entry = service.open_queue(self.set_row)
        self._load_entry(entry)
        self.count_votes()

    def _load_entry(self, entry: QueueEntry | None) -> None:
        """Fetch an entry's view (worker thread) and put it on screen, under the set as
        stored now (another process may have made it blind or changed its labels).

        An item deleted by another process is passed over for the next one: its empty
        view read as the end of the queue ("All done") with items still to label."""
        fresh = self.curation.fresh_set(self.set_row)
        view = None
        gone: list[int] = []
        while entry is not None:
            view = self.curation.item(fresh, entry.item_id)
            if view is not None or self.cursor is None or entry.item_id in gone:
                break  # (served again: a member row left behind without its item)
            gone.append(entry.item_id)
            entry = self.curation.advance(self.cursor)
        if gone:
            ids = ", ".join(f"#{i}" for i in gone[:5]) + (" ..." if len(gone) > 5 else "")
            self.from_worker(
                self.curator_app.say, f"passed over deleted items: {ids}", warning=True
            )
        # Once counted (the set's counters then exist), the count is read again with each
        # item: the annotator may be voting in this set from another process too.
        mine = self.curation.my_votes(fresh) if self.state is not None else None
        self.from_worker(self._show, entry, view, fresh, mine)

    def count_votes(self) -> None:
        """Count the set's size and the annotator's votes (slow lane); votes and undos
        on this screen then keep the count, and each item shown reads the annotator's
        count again (:meth:`_recount`)."""
        self._count(self._changes)

    @work(thread=True, exclusive=True, group="state")
    def _count(self, changes: int) -> None:
        state = self.curation.queue_state(self.set_row)
        self.from_worker(self._set_state, state, changes)

    def _set_state(self, state: QueueState, changes: int) -> None:
        if changes != self._changes:
            # A vote was stored while counting: the count may or may not hold it.
            self.count_votes()
            return
        self.state = state
        self._show_state()

    def _add_mine(self, delta: int) -> None:
        """Called once a vote or undo is stored, never before."""
        self._changes += 1
        if self.state is not None:
            self.state = QueueState(
                self.state.size, self.state.mine + delta, max(self.state.to_do - delta, 0)
            )

    def _recount(self, mine: int) -> None:
        """Take the annotator's vote count as just read from the store; what is left to
        do moves with it."""
        state = self.state
        if state is None or mine == state.mine:
            return
        to_do = (
            max(state.to_do - (mine - state.mine), 0)
            if self.set_row.overlap == "routed"
            else max(state.size - mine, 0)
        )
        self.state = QueueState(state.size, mine, to_do)

    def _show(
        self,
        entry: QueueEntry | None,
        view: ItemView | None,
        fresh: SetRow | None = None,
        mine: int | None = None,
    ) -> None:
        if mine is not None:
            self._recount(mine)
        if fresh is not None:
            self.adopt_set(fresh)
            if self.cursor is not None:
                self.cursor.set_row = fresh
        previous = self.view.item_id if self.view is not None else None
        self.entry = entry
        self.view = view
        if view is None or view.item_id != previous:
            self._drop_unsaved(previous)
        panel = self.query_one(ItemPanel)
        if entry is None or view is None:
            panel.show(
                None,
                empty=(
                    (
                        f"Nothing left for you in {self.set_row.name}: every other item has"
                        " its votes, waits in review, or is held by someone labeling it now."
                        if self.set_row.overlap == "routed"
                        else f"All done: you have labeled every item of {self.set_row.name}."
                    )
                    + " u undoes your last vote, b goes back, esc returns home."
                ),
            )
            self.query_one("#meta", Static).update("")
            self.query_one("#machine", Static).update("")
            self.query_one("#votes", Static).update("")
        else:
            panel.show(view, highlight=not self.set_row.blind)
            self.query_one("#meta", Static).update(
                render.pairs([("#", str(view.item_id)), *view.meta], 48)
            )
            self._show_machine()
            self._show_votes()
        self._show_state()
        self.busy = False

    def _show_machine(self) -> None:
        machine = self.query_one("#machine", Static)
        if self.set_row.blind:
            machine.update(Text("blind set: machine predictions and others' votes hidden"))
        elif self.view and self.view.predictions:
            machine.update(
                Text.assemble(("machines ", "dim"), render.predictions_line(self.view.predictions))
            )
        else:
            machine.update(Text("no machine predictions", style="dim"))

    def _show_votes(self) -> None:
        out = Text()
        if self.view is not None and self.view.votes:
            out.append_text(render.votes_line(self.view.votes, self.curation.annotator))
        else:
            out.append("not voted yet", "dim")
        if self.category:
            out.append("   next vote category: ", "dim")
            out.append(one_line(self.category, 60))
        if self.note:
            out.append("   note: ", "dim")
            out.append(one_line(self.note, 60))
        self.query_one("#votes", Static).update(out)

    def _show_state(self) -> None:
        state = self.state
        if state is None:
            return
        # A hidden gold item sits outside the set's positions: on a set that mixes them
        # in, no item says where it is, so none stands out as gold.
        shown = self.entry is not None and not self.curation.mixes_gold(self.set_row)
        where = f"item {self.entry.position + 1} of {state.size}" if shown and self.entry else ""
        parts = [self.set_row.name, where, f"you: {state.mine} labeled, {state.to_do} to do"]
        if self.set_row.blind:
            parts.append("blind")
        self.query_one("#status", Static).update(one_line(" · ".join(p for p in parts if p), 200))

    # Voting ---------------------------------------------------------------------------

    def on_label(self, label: str) -> None:
        self.vote(label)

    def vote(self, label: str) -> None:
        if not self.is_active:  # left, or a prompt is on top: the key was not for this item
            return
        if self.busy or self.view is None or self.cursor is None:
            self.app.bell()
            return
        self.busy = True
        mine = [v for v in self.view.votes if v.annotator == self.curation.annotator]
        first = not any(v.role == "annotator" for v in mine)
        self._cast(self.view.item_id, label, self.category, self.note, first)

    @work(thread=True, group="label")
    def _cast(
        self, item_id: int, label: str, category: str | None, note: str | None, first: bool
    ) -> None:
        service = self.curation
        try:
            displaced = service.vote(self.set_row, item_id, label, category, note)
        except (ItemTaken, ItemGone) as exc:
            # The lease ran out and others filled the item, or another process deleted
            # it: say so and move on (voting again on it would fail again).
            self.from_worker(self.curator_app.say, str(exc), error=True)
            assert self.cursor is not None
            self._load_entry(service.advance(self.cursor))
            return
        except (ValueError, LookupError) as exc:
            self.from_worker(self._failed, str(exc))
            return
        if displaced is not None:
            self.from_worker(self.curator_app.say, displaced, warning=True)
        self.from_worker(self._saved_with_vote)
        self.from_worker(self._add_mine, 1 if first else 0)
        self.from_worker(self._maybe_rerank)
        assert self.cursor is not None
        if self.cursor.current is not None:
            self.history.append(self.cursor.current)
        if self.reordered:
            self.reordered = False
            self.cursor.forget_ahead()
        self._load_entry(service.advance(self.cursor))

    def _saved_with_vote(self) -> None:
        """The category and note went with the vote just stored."""
        self.category = None
        self.note = None

    def _drop_unsaved(self, item_id: int | None) -> None:
        """Leaving an item (undo, back, a jump) drops a category or note typed for it and
        not yet voted with: say so rather than lose it without a word."""
        typed = (("category", self.category), ("note", self.note))
        unsaved = [what for what, value in typed if value]
        if unsaved and item_id is not None:
            verb = "were" if len(unsaved) > 1 else "was"
            self.curator_app.say(
                f"the {' and '.join(unsaved)} typed for #{item_id} {verb} not saved: a"
                " category or note is saved with a vote",
                warning=True,
            )
        self.category = None
        self.note = None

    # Active learning ----------------------------------------------------------------------

    def _maybe_rerank(self) -> None:
        every = self.curation.rerank_every(self.set_row)
        if every <= 0 or self.cursor is None or self.cursor.current is None:
            return
        self.votes_since_rerank += 1
        if self.votes_since_rerank >= every:
            self.votes_since_rerank = 0
            self._rerank(self.cursor.current.position)

    @work(thread=True, exclusive=True, group="rerank")
    def _rerank(self, position: int) -> None:
        try:
            result = self.curation.rerank(self.set_row, position)
        except Exception as exc:  # the annotator keeps voting; the order just stays
            self.from_worker(self.curator_app.say, f"re-ranking failed: {exc}", True)
            return
        self.from_worker(self._reranked, result)

    def _reranked(self, result: Rerank | None) -> None:
        if result is None or not result.moved:
            return
        self.last_rerank = result
        self.reordered = True
        self.curator_app.say(
            f"re-ranked the next {result.scored} items, most uncertain first"
            f" ({result.model}, {result.trained_on} votes, {result.seconds:.2f} s)"
        )

    def _failed(self, message: str) -> None:
        self.busy = False
        self.count_votes()
        self.curator_app.say(message, error=True)

    def action_undo(self) -> None:
        if self.busy or self.cursor is None:
            self.app.bell()
            return
        self.busy = True
        self._undo()

    @work(thread=True, group="label")
    def _undo(self) -> None:
        service = self.curation
        result = service.undo(self.set_row)
        if result is None:
            self.from_worker(self._failed, "nothing to undo in this set")
            return
        entry = service.undone_entry(self.set_row, result)
        # What counts here: a restored vote with another set's label (one this vote had
        # replaced) is the annotator's again, but not a vote in this set.
        counted = counts_in(self.set_row, result.undone_label)
        counts_now = counts_in(self.set_row, result.restored_label)
        self.from_worker(self._add_mine, int(counts_now) - int(counted))
        restored = result.restored_label or "no vote"
        if result.restored_label is not None and not counts_now:
            restored += f", which does not count in {self.set_row.name}"
        self.from_worker(
            self.curator_app.say,
            f"undid {result.undone_label} on #{result.item_id} (now: {restored})",
        )
        self.from_worker(self._forget_undone, result.item_id)
        assert self.cursor is not None
        if entry is not None:
            self.cursor.put_back(entry)
        self._load_entry(self.cursor.current)

    def _forget_undone(self, item_id: int) -> None:
        """An undone item is shown again: ``b`` then goes to the item before it, not
        back to the one on screen."""
        for i in range(len(self.history) - 1, -1, -1):
            if self.history[i].item_id == item_id:
                del self.history[i]
                break

    def action_back_item(self) -> None:
        self._explain_back_once()
        if self.busy or not self.history or self.cursor is None:
            self.app.bell()
            return
        self.busy = True
        self.cursor.put_back(self.history.pop())
        self._reload()

    def _explain_back_once(self) -> None:
        """``b`` is back, never a vote: in a set with a label starting with b (``bad``)
        the annotator is told once which key votes it."""
        if self._back_explained:
            return
        clashing = [k for k in self.keys if k.label[:1].lower() == "b" and k.key.isdigit()]
        if clashing:
            self._back_explained = True
            self.curator_app.say(
                f"b goes back to the previous item; {clashing[0].key} votes {clashing[0].label}",
                warning=True,
            )

    @work(thread=True, group="label")
    def _reload(self) -> None:
        assert self.cursor is not None
        self._load_entry(self.cursor.current)

    # Category, note, search -------------------------------------------------------------

    def action_category(self) -> None:
        choices = categories_of(self.set_row)
        if not choices:
            self.curator_app.say("this set has no categories")
            return
        if self.view is None:
            return

        def picked(choice: str | None) -> None:
            if choice:
                self.category = choice
                self._show_votes()

        self.app.push_screen(ChoicePrompt("Category for this item", choices, self.category), picked)

    def action_note(self) -> None:
        if self.view is None:
            return

        def written(text: str | None) -> None:
            if text is not None:
                self.note = text.strip() or None
                self._show_votes()

        self.app.push_screen(
            TextPrompt("Note for this item (saved with your vote)", self.note or ""), written
        )

    def action_search(self) -> None:
        def asked(text: str | None) -> None:
            if text and text.strip():
                self._search(text.strip())

        self.app.push_screen(TextPrompt("Search this set (#id, sha prefix or words)"), asked)

    @work(thread=True, exclusive=True, group="search")
    def _search(self, text: str) -> None:
        service = self.curation
        if text.startswith("#") and text[1:].isdecimal():
            entry = service.position_of(self.set_row, int(text[1:]))
            hits = (
                []
                if entry is None
                else [{"item_id": entry.item_id, "position": entry.position, "title": ""}]
            )
        else:
            hits = service.search(self.set_row, text)
        self.from_worker(self._pick_hit, text, hits)

    def _pick_hit(self, text: str, hits: list[dict[str, object]]) -> None:
        if not hits:
            self.curator_app.say(f"nothing in {self.set_row.name} matches {text!r}")
            return
        by_choice = {
            f"#{h['item_id']}  {one_line(str(h['title']), 60)}": QueueEntry(
                int(h["position"]),
                int(h["item_id"]),  # type: ignore[arg-type]
            )
            for h in hits
        }

        def picked(choice: str | None) -> None:
            if choice and self.cursor is not None and not self.busy:
                self.busy = True
                if self.cursor.current is not None:
                    self.history.append(self.cursor.current)
                self.cursor.jump(by_choice[choice])
                self._reload()

        self.app.push_screen(
            ChoicePrompt(
                f"{len(hits)} {'match' if len(hits) == 1 else 'matches'}", list(by_choice)
            ),
            picked,
        )

    # Views ------------------------------------------------------------------------------

    def action_detail(self) -> None:
        if self.view is not None:
            self.app.push_screen(ItemDetailScreen(self.view.item_id, self.set_row))
