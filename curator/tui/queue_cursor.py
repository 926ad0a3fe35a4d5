"""An annotator's walk through a set: a small page of unlabeled items at a time.

The cursor keeps at most one page (keyset pagination on the set's positions), so
opening a set of a million items costs the same as opening one of forty. On a routed set
(or one with gold items) each step asks routing for the next item instead, which claims
it for the annotator (``annotation.routing``), the same as ``curator next`` does.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from annotation.queue import QueueEntry, next_items
from annotation.routing import DEFAULT_LEASE_MINUTES, gold_rate, serve_next
from store import Store
from store.item_views import resume_position
from store.sets import SetRow

PAGE = 50


@dataclass
class QueueCursor:
    set_row: SetRow
    annotator: str
    current: QueueEntry | None = None
    _ahead: deque[QueueEntry] | None = None
    _last_position: int = -1
    _wrapped: bool = False
    lease_minutes: float = DEFAULT_LEASE_MINUTES

    @property
    def routed(self) -> bool:
        return self.set_row.overlap == "routed" or gold_rate(self.set_row) > 0

    def start(self, store: Store) -> QueueEntry | None:
        """Move to the annotator's next unlabeled item, starting after the item they voted
        on last (annotators work in order; anything left behind is found on the wrap)."""
        self._ahead = deque()
        last = resume_position(store, self.set_row.id, self.annotator)
        self._last_position = -1 if last is None else last
        self._wrapped = last is None
        return self.advance(store)

    def advance(self, store: Store) -> QueueEntry | None:
        """Move to the next unlabeled item; None when the set is done for this annotator."""
        if self.routed:
            return self._serve(store)
        if self._ahead is None:
            self._ahead = deque()
        while True:
            while self._ahead:
                entry = self._ahead.popleft()
                if self.current is None or entry.item_id != self.current.item_id:
                    self.current = entry
                    return entry
            page = next_items(store, self.set_row, self.annotator, self._last_position, PAGE)
            if page:
                self._last_position = page[-1].position
                self._ahead.extend(page)
                continue
            if self._wrapped:
                self.current = None
                return None
            # Items skipped over by a jump (search) or left behind by an undo elsewhere.
            self._wrapped = True
            self._last_position = -1

    def forget_ahead(self) -> None:
        """Drop the page read ahead (the queue was re-ranked): the walk reads on from the
        item on screen in the new order."""
        self._ahead = deque()
        if self.current is not None:
            self._last_position = self.current.position

    def _serve(self, store: Store) -> QueueEntry | None:
        while self._ahead:
            entry = self._ahead.popleft()
            if self.current is None or entry.item_id != self.current.item_id:
                self.current = entry
                return entry
        served = serve_next(
            store,
            self.set_row,
            self.annotator,
            lease_minutes=self.lease_minutes,
            after_position=self._last_position,
        )
        self.current = None if served is None else served.entry
        if self.current is not None and self.current.position >= 0:
            self._last_position = self.current.position
        return self.current

    def jump(self, entry: QueueEntry) -> None:
        """Show ``entry`` now; the walk goes on after it (and wraps to the start)."""
        self.current = entry
        self._ahead = deque()
        self._last_position = entry.position
        self._wrapped = False

    def put_back(self, entry: QueueEntry) -> None:
        """Show ``entry`` now (after an undo) and come back to the current one next."""
        if self._ahead is None:
            self._ahead = deque()
        if self.current is not None:
            self._ahead.appendleft(self.current)
        self.current = entry
