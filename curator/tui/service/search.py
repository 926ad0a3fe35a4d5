"""Search for the app: the store's full-text search (``curator.search``) on the slow lane.

Text typed in the app is tried as an FTS5 query first; when FTS5 refuses it (a stray
quote, ``non-perf``), it is searched again as one quoted phrase, so a typist never needs
the query syntax."""

from __future__ import annotations

from dataclasses import replace

from curator.search import SearchError, SearchRequest, run_search
from curator.tui.service.lanes import ServiceBase
from store import Store
from store.search import Hit
from store.sets import SetRow


def as_phrase(text: str) -> str:
    """``text`` as one FTS5 phrase (its double quotes doubled)."""
    return '"' + text.replace('"', '""') + '"'


def find_text(
    store: Store, text: str, set_name: str | None, limit: int, reader: str | None = None
) -> list[Hit]:
    """``text`` as an FTS5 query, else as one phrase; SearchError when both are refused.
    With ``reader``, notes on items of blind sets match only where ``reader`` wrote them."""
    request = SearchRequest(text, set_name=set_name, limit=limit, note_reader=reader)
    try:
        return run_search(store, request).hits
    except SearchError:
        return run_search(store, replace(request, query=as_phrase(text))).hits


class SearchService(ServiceBase):
    """Whole-store and per-set search."""

    def find(self, text: str, set_row: SetRow | None = None, limit: int = 50) -> list[Hit]:
        """Items matching ``text``, best first (the whole store, or one set)."""
        name = set_row.name if set_row else None
        return self._slow(lambda s: find_text(s, text, name, limit, self.annotator))
