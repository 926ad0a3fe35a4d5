"""Sets, the labeling queue, items, votes and search: what the home and label screens
ask of the service."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from annotation.labels import DEFAULT_LABELS, SKIP, taxonomy_slugs
from annotation.queue import QueueEntry, visible_votes
from annotation.routing import current_set, ensure_tracked, gold_rate, is_gold, submit, to_do
from annotation.set_reports import agreement_for_set
from annotation.sets import require_set
from annotation.votes import (
    Displaced,
    VoteError,
    cast_vote,
    prepare_vote,
    resolve_item,
    undo,
)
from curator.presentation.search import snippet_spans
from curator.presentation.text import shorten
from curator.search import SearchError
from curator.tui.item_view import ItemView, build_item_view
from curator.tui.queue_cursor import QueueCursor
from curator.tui.service.lanes import ServiceBase
from curator.tui.service.search import find_text
from store import Store
from store.item_views import change_mark, search_set, set_position
from store.items import find_by_id
from store.routing import annotator_count, gold_item, set_counters
from store.sets import SetRow, all_sets, set_size, sets_of_item
from store.votes import UndoResult, counts_toward, live_votes_for_items


@dataclass(frozen=True)
class SetOverview:
    """One row of the home screen."""

    set_row: SetRow
    items: int
    voted_items: int
    settled: int
    mine: int
    pending_mine: int
    conflicts: int
    kappa: float | None
    alpha: float | None

    @property
    def done(self) -> float:
        return self.settled / self.items if self.items else 0.0


class ItemGone(LookupError):
    """The item was deleted (by another process) while the app showed it."""


@dataclass(frozen=True)
class QueueState:
    """What the label screen shows above the item: how far the annotator got."""

    size: int
    mine: int
    to_do: int


class QueueService(ServiceBase):
    """Sets, queues, items and votes for one annotator."""

    @cached_property
    def _overviews(self) -> dict[int, tuple[tuple[int, int], SetOverview]]:
        """Each set's overview, kept with the change mark it was computed at."""
        return {}

    # Sets -----------------------------------------------------------------------------

    def sets(self) -> list[SetRow]:
        return self._quick(all_sets)

    def set_row(self, name: str) -> SetRow:
        return self._quick(lambda s: require_set(s, name))

    def fresh_set(self, set_row: SetRow) -> SetRow:
        """The set as stored now: another process may have changed its labels,
        blindness, overlap or votes per item (``curator set edit``) since it was read."""
        return self._quick(lambda s: current_set(s, set_row))

    def counts(self, set_row: SetRow) -> SetOverview:
        """Progress and the annotator's own count from the per-set counters (kept with
        every vote, so this reads a few rows however big the set); kappa and alpha as
        last computed at the same change mark, else missing (:meth:`overview` fills them)."""

        def work(store: Store) -> SetOverview:
            ensure_tracked(store, set_row)
            counters = set_counters(store, set_row.id)
            assert counters is not None
            mine = annotator_count(store, set_row.id, self.annotator)
            cached = self._overviews.get(set_row.id)
            fresh = cached is not None and cached[0] == change_mark(store)
            return SetOverview(
                set_row=set_row,
                items=counters.items,
                voted_items=counters.voted_items,
                settled=counters.settled,
                mine=mine,
                pending_mine=to_do(store, set_row, self.annotator, mine, counters.items),
                conflicts=counters.conflict,
                kappa=cached[1].kappa if fresh and cached else None,
                alpha=cached[1].alpha if fresh and cached else None,
            )

        return self._quick(work)

    def overview(self, set_row: SetRow) -> SetOverview:
        """:meth:`counts` with live agreement (kappa, alpha: a scan of the set's votes,
        seconds on a big set); kept until a vote or a new set member changes the store."""

        def work(store: Store) -> SetOverview:
            mark = change_mark(store)
            cached = self._overviews.get(set_row.id)
            if cached is not None and cached[0] == mark:
                return cached[1]
            report = agreement_for_set(store, set_row)
            fresh = replace(
                self.counts(set_row),
                kappa=report.fleiss.kappa,
                alpha=report.krippendorff_alpha,
            )
            self._overviews[set_row.id] = (mark, fresh)
            return fresh

        return self._slow(work)

    # Labeling -------------------------------------------------------------------------

    def open_queue(self, set_row: SetRow) -> tuple[QueueCursor, QueueEntry | None]:
        cursor = QueueCursor(set_row, self.annotator, lease_minutes=self.lease_minutes)
        entry = self._quick(cursor.start)
        return cursor, entry

    def advance(self, cursor: QueueCursor) -> QueueEntry | None:
        return self._quick(cursor.advance)

    def my_votes(self, set_row: SetRow) -> int:
        """The annotator's votes counting toward the set, as stored now (one lookup in
        the set's counters, which :meth:`queue_state` makes for an old set): the same
        annotator may be labeling from another process too."""
        return self._quick(lambda s: annotator_count(s, set_row.id, self.annotator))

    def queue_state(self, set_row: SetRow) -> QueueState:
        def work(store: Store) -> QueueState:
            ensure_tracked(store, set_row)
            size = set_size(store, set_row.id)
            mine = annotator_count(store, set_row.id, self.annotator)
            return QueueState(
                size=size, mine=mine, to_do=to_do(store, set_row, self.annotator, mine, size)
            )

        return self._slow(work)

    def item(self, set_row: SetRow | None, item_id: int, reveal: bool = False) -> ItemView | None:
        """The item (commit, kernel or IR module, with its kind's detail) as this
        annotator may see it. In a blind set (the one given, or with no set given, any
        blind set holding the item) machine predictions are left out and other people's
        votes too until adjudication settles the item; ``reveal`` (the adjudicator's
        review) shows everything. With a set given, only votes counting toward it show."""

        def work(store: Store) -> ItemView | None:
            blind: SetRow | None = None
            if not reveal:
                if set_row is not None:
                    blind = set_row if set_row.blind else None
                else:
                    blind = next((s for s in sets_of_item(store, item_id) if s.blind), None)
            gold = set_row is not None and not reveal and is_gold(store, set_row, item_id)
            view = build_item_view(store, item_id, with_predictions=blind is None and not gold)
            if view is None:
                return None
            if gold:
                # A hidden gold item looks like any other: no one's votes on it show.
                return replace(view, votes=[], blind=blind is not None)
            if blind is not None:
                votes = visible_votes(store, blind, item_id, self.annotator)
            else:
                in_set = set_row.id if set_row is not None else None
                votes = live_votes_for_items(store, [item_id], set_id=in_set)
            return replace(view, votes=votes, blind=blind is not None)

        return self._quick(work)

    def vote(
        self,
        set_row: SetRow,
        item_id: int,
        label: str,
        category: str | None = None,
        note: str | None = None,
        adjudicate: bool = False,
    ) -> str | None:
        """Record the vote; returns a line to show when it replaced this annotator's
        vote that counted in other sets (their labels differ), else None."""

        def work(store: Store) -> str | None:
            item = find_by_id(store, item_id)
            if item is None:
                raise ItemGone(f"item #{item_id} no longer exists")
            if not adjudicate:
                done = submit(
                    store, set_row, item_id, self.annotator, label, category, note, origin="tui"
                )
                if done.displaced is None:
                    return None
                return displaced_notice(item_id, item.key, done.displaced, label)
            row = prepare_vote(
                store,
                item,
                label,
                self.annotator,
                category=category,
                note=note,
                adjudicate=adjudicate,
                in_set=set_row,
                origin="tui",
            )
            cast_vote(store, row)
            return None

        return self._quick(work)

    def undo(self, set_row: SetRow, adjudicate: bool = False) -> UndoResult | None:
        return self._quick(lambda s: undo(s, self.annotator, adjudicate, set_row))

    def position_of(self, set_row: SetRow, item_id: int) -> QueueEntry | None:
        position = self._quick(lambda s: set_position(s, set_row.id, item_id))
        return None if position is None else QueueEntry(position, item_id)

    def undone_entry(self, set_row: SetRow, undone: UndoResult) -> QueueEntry | None:
        """The queue entry of the item an undo took back, to show it again: its place in
        the set, or, for an answer on a hidden gold item (not a member), the entry
        routing serves that gold item as (a negative position, as
        ``annotation.routing`` gives it)."""

        def work(store: Store) -> QueueEntry | None:
            position = set_position(store, set_row.id, undone.item_id)
            if position is not None:
                return QueueEntry(position, undone.item_id)
            gold = gold_item(store, set_row.id, undone.item_id) if undone.gold else None
            return None if gold is None else QueueEntry(-1 - gold.position, gold.item_id)

        return self._quick(work)

    @staticmethod
    def mixes_gold(set_row: SetRow) -> bool:
        """Whether the set's queues mix in hidden gold items (``curator set gold``)."""
        return gold_rate(set_row) > 0

    def resolve(self, ref: str) -> int:
        """An item id from ``#N``, a sha or another external key; LookupError if none."""

        def work(store: Store) -> int:
            try:
                return resolve_item(store, ref).id
            except VoteError as exc:
                raise LookupError(str(exc)) from None

        return self._quick(work)

    def search(self, set_row: SetRow, text: str, limit: int = 50) -> list[dict[str, object]]:
        """Members of a set matching ``text`` in the search index (best first), else those
        whose key starts with it or whose path or message holds it: the label screen's
        jump list."""

        def work(store: Store) -> list[dict[str, object]]:
            try:
                hits = find_text(store, text, set_row.name, limit, self.annotator)
            except SearchError:  # no word to search for ("#", "@"): the key and text only
                hits = []
            found = [
                {
                    "position": pos,
                    "item_id": h.item_id,
                    "title": snippet_spans(h.snippet)[0] or h.key,
                }
                for h in hits
                if (pos := set_position(store, set_row.id, h.item_id)) is not None
            ]
            return found or search_set(store, set_row.id, text, limit)

        return self._slow(work)


def labels_of(set_row: SetRow) -> list[str]:
    """The labels a set's items take, skip last."""
    labels = [x for x in (set_row.labels or DEFAULT_LABELS[set_row.kind]) if x != SKIP]
    return [*labels, SKIP]


def categories_of(set_row: SetRow) -> list[str]:
    """The categories an annotator may pick on a set (the taxonomy for commit sets)."""
    if set_row.categories:
        return list(set_row.categories)
    return taxonomy_slugs() if set_row.kind == "commit" else []


def displaced_notice(item_id: int, key: str, displaced: Displaced, label: str) -> str:
    """The notice for an annotator whose vote replaced their own vote counted in other
    sets (one vote per item): which item, which vote, and which sets lost it."""
    names = displaced.sets
    where = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return (
        f"your {displaced.label!r} on #{item_id} ({shorten(key, 40)}) is now {label!r}, so"
        f" it no longer counts in set{'s' if len(names) > 1 else ''} {where}:"
        f" {'those sets need' if len(names) > 1 else 'that set needs'} your vote on it"
        " again (an annotator has one vote per item)"
    )


def counts_in(set_row: SetRow, label: str | None) -> bool:
    """Whether an annotator's vote labelled ``label`` (None: no vote) counts in the set."""
    return counts_toward(label, labels_of(set_row))
