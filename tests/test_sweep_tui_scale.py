"""What the app does with the items of a real-sized store that made it slow
(``tests/benchmarks/bench_tui_scale.py`` times it at 200,000 commits): a search snippet
is cut from at most ``SNIPPET_CHARS`` of a column (FTS5's snippet() took seconds on a
generated diff matching a word on each of its 40,000 lines), and the show-all view of a
long diff holds one page of ``PAGE_LINES`` lines at a time, turned with ``]`` and ``[``
(a text area of 40,000 lines took half a second to open and a tenth of one per frame)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable, ProgressBar, Static, TextArea

from curator.presentation.format import number
from curator.search import SearchRequest, run_search
from curator.tui.app import CuratorApp
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.service import CurationService
from curator.tui.widgets.item_panel import PAGE_LINES, ItemPanel
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items
from store.search import HIGHLIGHT_START, SNIPPET_CHARS
from store.sets import NewSet, create_set, get_set
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.tui_helpers import (
    asyncio_backend,  # noqa: F401 - fixtures
    text_of,
    until,
)

pytestmark = pytest.mark.anyio

LONG_LINES = PAGE_LINES * 2 + 10  # three pages
LINE = "+static int table_{i} = {i}; /* generated lookup entry */"


def commit(key: str, message: str, diff: str) -> ImportedItem:
    return ImportedItem(
        kind="commit",
        key=key,
        source="https://example.org/big",
        language="c",
        path=f"src/{key}.c",
        payload={"message": message, "diff": diff, "model_input": message},
        provenance={},
    )


def long_diff(lines: int, tail: str = "") -> str:
    body = "\n".join(LINE.format(i=i) for i in range(lines))
    return f"@@ -1,1 +1,{lines} @@\n{body}{tail}"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "big.db"
    with open_store(path) as store:
        insert_imported_items(
            store,
            [
                # well over SNIPPET_CHARS, "lookup" on every line, "needle" only at the end
                commit("huge", "Regenerate the tables", long_diff(LONG_LINES, "\n+needle")),
                commit("small", "Speed up the lookup", "@@ -1 +1 @@\n-scan(x)\n+lookup(x)\n"),
            ],
        )
    return path


def item_id(store: Store, key: str) -> int:
    return int(raw_sql.scalar(store, "SELECT id FROM items WHERE key = ?", (key,)))


def scratch_tables(store: Store) -> list[str]:
    return [
        str(r[0])
        for r in raw_sql.query(store, "SELECT name FROM temp.sqlite_master WHERE type = 'table'")
    ]


def test_a_huge_diff_is_searched_and_its_snippet_cut_from_its_start(db: Path) -> None:
    with open_store(db) as store:
        assert len(raw_sql.scalar(store, "SELECT diff FROM commits")) > SNIPPET_CHARS
        hits = run_search(store, SearchRequest("lookup", limit=10)).hits
        by_key = {h.key: h for h in hits}
        assert set(by_key) == {"huge", "small"}
        huge = by_key["huge"]
        assert huge.field == "diff"
        assert HIGHLIGHT_START + "lookup" in huge.snippet
        # the cut text went through this connection's own scratch index
        assert "commits_fts_snippet" in scratch_tables(store)


def test_a_small_row_keeps_the_index_snippet(db: Path) -> None:
    with open_store(db) as store:
        hits = run_search(store, SearchRequest("message: speed", limit=10)).hits
        assert [h.key for h in hits] == ["small"]
        assert hits[0].snippet.startswith(HIGHLIGHT_START + "Speed")
        assert "commits_fts_snippet" not in scratch_tables(store)


def test_a_match_past_the_cut_still_finds_the_item(db: Path) -> None:
    """Only the snippet is cut: the item is found, its snippet the column's start."""
    with open_store(db) as store:
        hits = run_search(store, SearchRequest("needle", limit=10)).hits
        assert [h.key for h in hits] == ["huge"]
        assert hits[0].snippet.startswith("Regenerate the tables")


async def test_show_all_of_a_long_diff_turns_pages(db: Path) -> None:
    with open_store(db) as store:
        huge = item_id(store, "huge")
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(ItemDetailScreen(huge))
        await until(pilot, lambda: getattr(app.screen, "view", None) is not None, "detail")
        await pilot.press("f")
        panel = app.screen.query_one(ItemPanel)
        area = app.screen.query_one("#item-full", TextArea)
        await until(pilot, lambda: panel.showing_all, "show all")
        total = LONG_LINES + 5  # message, blank line, pane title, hunk header, needle
        assert area.document.line_count == PAGE_LINES
        assert area.text.splitlines()[0] == "Regenerate the tables"
        assert str(area.border_title).startswith(f"lines 1-{PAGE_LINES:,} of {total:,}")
        await pilot.press("right_square_bracket")
        assert panel.page == 1
        # the first line of page two is the text's line PAGE_LINES + 1
        assert area.text.splitlines()[0] == LINE.format(i=PAGE_LINES - 4)
        await pilot.press("right_square_bracket")
        assert area.text.splitlines()[-1] == "+needle"
        assert str(area.border_title).startswith(f"lines {2 * PAGE_LINES + 1:,}-{total:,}")
        await pilot.press("right_square_bracket")  # past the last page: stays
        assert panel.page == 2
        await pilot.press("left_square_bracket", "left_square_bracket", "left_square_bracket")
        assert panel.page == 0
        await pilot.press("escape")  # back to the clipped view, then pages start over
        assert not panel.showing_all
        await pilot.press("f")
        assert panel.page == 0 and area.document.line_count == PAGE_LINES


async def test_show_all_of_a_short_diff_is_one_page_without_a_title(db: Path) -> None:
    with open_store(db) as store:
        small = item_id(store, "small")
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(ItemDetailScreen(small))
        await until(pilot, lambda: getattr(app.screen, "view", None) is not None, "detail")
        await pilot.press("f")
        panel = app.screen.query_one(ItemPanel)
        area = app.screen.query_one("#item-full", TextArea)
        assert panel.showing_all and panel.pages == [area.text]
        assert "+lookup(x)" in area.text and not area.border_title
        await pilot.press("right_square_bracket")
        assert panel.page == 0


@pytest.fixture
def many_sets(tmp_path: Path) -> Path:
    """40 sets of 1 to 40 commits, the first item of each voted by two annotators."""
    path = tmp_path / "many.db"
    with open_store(path) as store:
        rows = [commit(f"c{i}", f"Change {i}", "@@ -1 +1 @@\n-a\n+b\n") for i in range(120)]
        ids = [item for _, item in insert_imported_items(store, rows)]
        votes = []
        for k in range(40):
            members = ids[k : k + k + 1]
            row = create_set(
                store, NewSet(f"s{k:02d}", "commit", ["perf", "non-perf"], overlap="all"), members
            )
            votes += [
                VoteRow(members[0], who, label, set_id=row.id)
                for who, label in (("ben", "perf"), ("cat", "perf" if k % 2 else "non-perf"))
            ]
        append_votes(store, votes)
    return path


def home_cells(app: CuratorApp, column: str) -> list[str]:
    screen = app.screen
    assert isinstance(screen, HomeScreen)
    table = screen.query_one(DataTable)
    return [str(table.get_cell(str(s.id), column)) for s in screen.sets]


def filled_in(app: CuratorApp) -> bool:
    screen = app.screen
    return (
        isinstance(screen, HomeScreen)
        and len(screen.sets) == 40
        and all(c not in ("…", "") for c in home_cells(app, "κ"))
    )


async def test_home_shows_every_figure_of_many_sets_in_full(many_sets: Path) -> None:
    """The table is filled in by batches, its columns widened only by their widest new
    cell: every figure still fits its column."""
    app = CuratorApp(many_sets, "ann")
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: filled_in(app), "every set's agreement")
        await pilot.pause(0.1)  # the table measures its columns when idle
        screen = app.screen
        assert isinstance(screen, HomeScreen)
        assert home_cells(app, "items") == [str(k + 1) for k in range(40)]
        service = CurationService(many_sets, "ann")
        try:
            expected = [service.overview(s) for s in screen.sets]
        finally:
            service.close()
        assert home_cells(app, "conflicts") == [str(o.conflicts) for o in expected]
        assert home_cells(app, "κ") == [number(o.kappa, 2) for o in expected]
        assert any(o.conflicts > 1 for o in expected)
        table = screen.query_one(DataTable)
        for key, column in table.columns.items():
            widths = [
                c.cell_len if isinstance(c, Text) else cell_len(str(c))
                for c in table.get_column(key)
            ]
            assert column.content_width >= max(widths), column.label
        assert not screen.query_one("#loading", ProgressBar).display
        assert text_of(screen.query_one("#status", Static)) == "40 sets · annotator ann"


async def test_refreshes_while_the_home_loads_end_with_the_figures_of_now(
    many_sets: Path,
) -> None:
    """A refresh takes over from the load under way (which stops): a vote cast in
    between shows once the last one is done."""
    app = CuratorApp(many_sets, "ann")
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await pilot.press("f5", "f5")
        with open_store(many_sets) as store:
            s00 = get_set(store, "s00")
            assert s00 is not None
            first = int(
                raw_sql.scalar(store, "SELECT item_id FROM set_items WHERE set_id = ?", (s00.id,))
            )
            append_votes(store, [VoteRow(first, "dan", "perf", set_id=s00.id)])
        await pilot.press("f5")
        await until(pilot, lambda: filled_in(app), "every set's agreement")
        await pilot.pause(0.3)  # anything still under way from an earlier load lands
        service = CurationService(many_sets, "ann")
        try:
            screen = app.screen
            assert isinstance(screen, HomeScreen)
            expected = [service.counts(s) for s in screen.sets]
        finally:
            service.close()
        assert home_cells(app, "conflicts") == [str(o.conflicts) for o in expected]
        assert home_cells(app, "items") == [str(o.items) for o in expected]
        assert expected[0].voted_items == 1 and expected[0].conflicts == 0  # dan settled it
