"""Full-text search: the FTS5 indexes stay in step with the rows, the migration builds
them for an existing store, and ``curator search`` / ``set create --from-search`` / the
app's ``/`` find, rank, filter and show matches safely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.presentation.search import highlighted, snippet_spans
from curator.search import SearchError, SearchRequest, create_set_from_search, run_search
from store import Store, open_store
from store.commits import insert_predictions
from store.items import ImportedItem, insert_imported_items
from store.kernel_records import KernelCheck, KernelRow
from store.kernels import save_checks
from store.migrations import MIGRATIONS
from store.records import PredictionRow
from store.search import SOURCES, Scope, search
from store.sets import NewSet, create_set, set_item_ids
from store.votes import VoteRow, append_votes, undo_last
from tests import raw_sql
from tests.tui_store import build, copy_of

MESSAGES = {
    "a": ("Cache the parsed config to avoid reparsing", "+cache = {}\n+return cache[key]\n"),
    "b": ("Speed up the hot loop by hoisting the bounds check", "-for i in range(n):\n"),
    "c": ("Fix typo in README", "-teh\n+the\n"),
    "d": ("cache cache cache: memoize every lookup", "+@lru_cache\n"),
    "e": ("Markup [bold red]boom[/] and \x1b[31mred\x1b[0m in a cache message", "+x\n"),
}


def commit(key: str, message: str, diff: str, source: str = "repo-a") -> ImportedItem:
    return ImportedItem(
        kind="commit",
        key=key,
        source=source,
        language="python",
        path=f"src/{key}.py",
        payload={"message": message, "diff": diff, "model_input": message},
        provenance={},
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "s.db")
    insert_imported_items(s, [commit(k, m, d) for k, (m, d) in MESSAGES.items()])
    return s


def ids(store: Store, query: str, **scope: object) -> list[int]:
    return [h.item_id for h in search(store, query, Scope(**scope), limit=50).hits]  # type: ignore[arg-type]


def item(store: Store, key: str) -> int:
    return int(raw_sql.scalar(store, "SELECT id FROM items WHERE key = ?", (key,)))  # type: ignore[arg-type]


def integrity_ok(store: Store) -> None:
    conn = raw_sql.connection(store)
    for source in SOURCES:
        conn.execute(f"INSERT INTO {source.fts} ({source.fts}, rank) VALUES ('integrity-check', 1)")


# --------------------------------------------------------------------------- the index


def test_query_syntax_phrases_prefix_near_and_columns(store: Store) -> None:
    a, b, d = item(store, "a"), item(store, "b"), item(store, "d")
    assert set(ids(store, "cache")) == {a, d, item(store, "e")}
    assert ids(store, '"hot loop"') == [b]
    assert ids(store, '"loop hot"') == []
    assert set(ids(store, "hoist*")) == {b}
    assert ids(store, "NEAR(speed bounds, 8)") == [b]
    assert ids(store, "NEAR(speed bounds, 5)") == []
    assert ids(store, "diff: lru_cache") == [d]
    assert ids(store, "message: lru_cache") == []
    # bm25: the short message that says cache three times ranks first
    assert ids(store, "cache")[0] == d


def test_bad_syntax_is_one_clear_error(store: Store) -> None:
    with pytest.raises(SearchError, match="unterminated string") as info:
        run_search(store, SearchRequest('"unbalanced'))
    assert "\n" not in str(info.value)
    with pytest.raises(SearchError, match="no such column: nosuch"):
        run_search(store, SearchRequest("nosuch: cache"))


def test_code_that_reads_as_syntax_gets_the_phrase_that_matches_it(store: Store) -> None:
    insert_imported_items(store, [commit("v", "Reserve the buffer", "+std::vector<int> v;\n")])
    with pytest.raises(SearchError) as info:
        run_search(store, SearchRequest("std::vector"))
    assert str(info.value).endswith('quote it: "std::vector"')
    assert ids(store, '"std::vector"') == [item(store, "v")]
    with pytest.raises(SearchError, match='quote it: """unbalanced"'):
        run_search(store, SearchRequest('"unbalanced'))


def test_the_index_follows_every_write(store: Store) -> None:
    a = item(store, "a")
    insert_imported_items(store, [commit("f", "Vectorize the zebra kernel", "+simd\n")])
    assert ids(store, "zebra") == [item(store, "f")]
    append_votes(store, [VoteRow(a, "ann", "perf", note="saw a quokka regression")])
    assert ids(store, "quokka") == [a]
    append_votes(store, [VoteRow(a, "ann", "perf", note="measured on a wombat")])
    assert ids(store, "quokka") == [] and ids(store, "wombat") == [a]
    undo_last(store, "ann")
    assert ids(store, "wombat") == [] and ids(store, "quokka") == [a]
    with store.transaction() as conn:
        conn.execute("DELETE FROM items WHERE id = ?", (a,))
    assert ids(store, "quokka") == [] and a not in ids(store, "cache")
    with pytest.raises(RuntimeError), store.transaction():
        insert_imported_items(store, [commit("g", "an aardvark appears", "+x\n")])
        raise RuntimeError("rolled back")
    assert ids(store, "aardvark") == []
    integrity_ok(store)


def test_a_reader_finds_others_notes_only_outside_blind_sets(store: Store) -> None:
    a, b = item(store, "a"), item(store, "b")
    labels = ["perf", "non-perf"]
    create_set(store, NewSet(name="blind", kind="commit", labels=labels, blind=True), [a])
    create_set(store, NewSet(name="open", kind="commit", labels=labels, blind=False), [b])
    append_votes(
        store,
        [
            VoteRow(a, "bob", "perf", note="bob saw a quokka"),
            VoteRow(b, "bob", "perf", note="bob saw a quokka too"),
            VoteRow(a, "ann", "perf", note="ann saw a wombat"),
        ],
    )
    assert sorted(ids(store, "quokka")) == sorted([a, b])  # no reader: every note
    assert ids(store, "quokka", note_reader="ann") == [b]
    assert sorted(ids(store, "quokka", note_reader="bob")) == sorted([a, b])
    assert ids(store, "wombat", note_reader="ann") == [a]
    assert ids(store, "wombat", note_reader="bob") == []
    assert ids(store, "cache", note_reader="ann") == ids(store, "cache")  # texts stay open


def test_sqlite_utils_sees_the_indexes_it_lays_out(store: Store) -> None:
    import sqlite_utils

    db = sqlite_utils.Database(raw_sql.connection(store))
    for source in SOURCES:
        assert db[source.table].detect_fts() == source.fts
    assert [r["rowid"] for r in db["commits"].search("hoisting")] == [item(store, "b")]


def test_the_migration_builds_the_index_of_an_existing_store_with_progress(
    tmp_path: Path,
) -> None:
    version = next(v for v, name, _ in MIGRATIONS if name.startswith("search:"))
    path = tmp_path / "old.db"
    with open_store(path) as s:
        insert_imported_items(
            s, [commit(f"k{i}", f"message {i} about tuning", "+x\n") for i in range(2500)]
        )
        append_votes(s, [VoteRow(item(s, "k7"), "ann", "perf", note="platypus")])
        conn = raw_sql.connection(s)
        # As a store written before the indexes existed: no index, no triggers.
        for source in SOURCES:
            conn.execute(f"DROP TABLE {source.fts}")
            for suffix in ("ai", "ad", "au"):
                conn.execute(f"DROP TRIGGER {source.table}_{suffix}")
        conn.execute("DELETE FROM schema_version WHERE version >= ?", (version,))
    seen: list[tuple[str, int, int]] = []
    with open_store(path, progress=lambda *a: seen.append(a)) as s:
        assert s.schema_version() >= version
        assert ids(s, "platypus") == [item(s, "k7")]
        assert len(search(s, "tuning", limit=5000, window=5000).hits) == 2500
        integrity_ok(s)
    commits = [(done, total) for what, done, total in seen if what == "commits"]
    assert commits[0] == (0, 2500) and commits[-1] == (2500, 2500) and len(commits) >= 3


# --------------------------------------------------------------------------- filters


def test_filters_kind_set_label_and_disagreement(store: Store) -> None:
    a, b, d, e = (item(store, k) for k in "abde")
    row = create_set(store, NewSet(name="s", kind="commit", labels=["perf", "non-perf"]), [a, b])
    assert [h.item_id for h in run_search(store, SearchRequest("cache", set_name="s")).hits] == [a]
    assert run_search(store, SearchRequest("cache", kind="kernel")).hits == []
    for item_id, label in ((a, "perf"), (d, "non-perf"), (e, "perf")):
        insert_predictions(store, item_id, [PredictionRow("keyword@1", label, 0.9)])
    perf = run_search(store, SearchRequest("cache", label="perf", labeler="keyword@latest"))
    assert {h.item_id for h in perf.hits} == {a, e}
    append_votes(
        store,
        [
            VoteRow(a, "ann", "non-perf", set_id=row.id),
            VoteRow(a, "bob", "non-perf", set_id=row.id),
            VoteRow(b, "ann", "perf", set_id=row.id),
            VoteRow(b, "bob", "perf", set_id=row.id),
            VoteRow(d, "ann", "perf"),
        ],
    )
    # keyword@1 says perf on a, the settled label is non-perf: a model's mistake
    found = run_search(store, SearchRequest("", disagree=("keyword@1", "final")))
    assert [h.item_id for h in found.hits] == [a]
    found = run_search(store, SearchRequest("cache", disagree=("ann", "keyword@1")))
    assert {h.item_id for h in found.hits} == {a, d}
    with pytest.raises(SearchError, match="neither a labeler"):
        run_search(store, SearchRequest("cache", disagree=("ann", "nobody")))
    with pytest.raises(SearchError, match="--label needs --labeler"):
        run_search(store, SearchRequest("cache", label="perf"))


def test_a_search_becomes_a_set_in_rank_order(store: Store) -> None:
    row = create_set_from_search(store, "cache-hunt", SearchRequest("cache", limit=2))
    assert set_item_ids(store, row.id) == [item(store, "d"), *ids(store, "cache")[1:2]]
    assert row.params["search"]["query"] == "cache"
    with pytest.raises(SearchError, match="already exists"):
        create_set_from_search(store, "cache-hunt", SearchRequest("cache"))
    with pytest.raises(SearchError, match="would be empty"):
        create_set_from_search(store, "none", SearchRequest("zzqx"))


def test_snippets_are_shown_literally_with_their_matches_marked(store: Store) -> None:
    hit = next(h for h in search(store, "boom").hits if h.key == "e")
    text, spans = snippet_spans(hit.snippet)
    assert "[bold red]boom[/]" in text and "\x1b" not in text
    assert [text[s:t] for s, t in spans] == ["boom"]
    shown = highlighted(hit.snippet)
    assert shown.plain == text and [str(s.style) for s in shown.spans] == ["bold yellow"]


# --------------------------------------------------------------------------- CLI and app


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("search") / "template.db", with_engines=False)


def cli(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args, "--db", str(db)], env={"COLUMNS": "120"})
    return result.exit_code, result.output


def test_kernel_sources_and_ir_text_are_indexed(store: Store) -> None:
    from store.ir import IRModuleRow, save_ir_batch
    from store.kernels import save_kernel_batch

    source = "__kernel void saxpy(__global float *y) { y[get_global_id(0)] *= 2.0f; }"
    save_kernel_batch(
        store,
        [
            KernelRow(
                "repo-k",
                "k.cl:saxpy",
                "k.cl",
                "saxpy",
                "cl",
                source,
                source,
                "h1",
                False,
                [],
                True,
                12,
                None,
                None,
            )
        ],
    )
    text = "define i32 @clamp_value(i32 %x) {\n  ret i32 %x\n}\n"
    save_ir_batch(
        store,
        [
            IRModuleRow(
                "repo-ir",
                "clamp.ll",
                "c",
                "sh1",
                "in1",
                "ll",
                None,
                "mathlib",
                "MIT",
                text,
                b"BC",
                len(text),
                2,
                9,
                1,
                0,
                0,
                1,
                1,
            )
        ],
    )
    kernel = run_search(store, SearchRequest("get_global_id", kind="kernel")).hits
    assert [(h.kind, h.field) for h in kernel] == [("kernel", "original_source")]
    ir = run_search(store, SearchRequest("text: clamp_value")).hits
    assert [(h.kind, h.field) for h in ir] == [("ir", "text")]
    assert run_search(store, SearchRequest("project: mathlib", kind="ir")).hits
    kernel_id = kernel[0].item_id
    save_checks(store, [KernelCheck(kernel_id, "useful", {}, {})])  # not an indexed column
    assert run_search(store, SearchRequest("saxpy")).hits[0].item_id == kernel_id
    integrity_ok(store)


def test_cli_search_prints_json_ranks_and_fails_on_bad_syntax(built: Path, tmp_path: Path) -> None:
    db = copy_of(built, tmp_path / "c.db")
    code, out = cli(db, "search", "cache", "--json", "--limit", "3")
    assert code == 0
    found = json.loads(out)
    assert len(found) == 3 and found[0]["score"] >= found[-1]["score"]
    assert all(
        f["snippet"][s:e].lower().startswith("cach") for f in found for s, e in f["highlights"]
    )
    code, out = cli(db, "search", '"speed up lookup"', "--set", "inbox", "--limit", "3")
    assert code == 0 and "3 best matches" in out and "inbox-" in out
    code, out = cli(db, "search", '"broken', "--kind", "commit")
    assert code == 1 and "unterminated string" in out


def test_cli_set_create_from_search(built: Path, tmp_path: Path) -> None:
    db = copy_of(built, tmp_path / "c.db")
    code, out = cli(db, "set", "create", "lookups", "--from-search", "lookup", "--sample", "4")
    assert code == 0 and "4 items found by lookup" in out
    code, out = cli(db, "set", "show", "lookups", "--json")
    assert json.loads(out)["params"]["search"]["limit"] == 4
    code, out = cli(db, "set", "create", "nothing", "--from-search", "zzqx")
    assert code == 1 and "would be empty" in out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_slash_on_home_searches_and_opens_the_detail_view(
    built: Path, tmp_path: Path
) -> None:
    from textual.widgets import DataTable

    from curator.tui.app import CuratorApp
    from curator.tui.screens.detail import ItemDetailScreen
    from curator.tui.screens.home import HomeScreen
    from curator.tui.screens.search import SearchScreen
    from tests.tui_helpers import until

    db = copy_of(built, tmp_path / "a.db")
    with open_store(db) as s:
        target = item(s, "inbox-3")
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "the search screen")
        await pilot.press(*'"lookup 3"', "enter")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await until(pilot, lambda: [h.item_id for h in screen.hits] == [target], "the hit")
        assert screen.query_one(DataTable).row_count == 1
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ItemDetailScreen), "the detail view")
        assert app.screen.item_id == target  # type: ignore[attr-defined]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "back to the hits")
        # text FTS5 refuses is searched as a phrase instead of failing
        await pilot.press("slash", *"non-perf [x", "enter")
        await until(
            pilot, lambda: "no item matches" in str(screen.query_one("#status").content), "no match"
        )


def test_a_query_matching_more_than_the_window_is_ranked_among_the_newest(store: Store) -> None:
    insert_imported_items(
        store, [commit(f"w{i}", f"tune {'tune ' * (i % 3)}", "+x\n") for i in range(12)]
    )
    full = search(store, "tune", limit=3, window=100)
    assert not full.windowed and len(full.hits) == 3
    newest = search(store, "tune", limit=3, window=5)
    assert newest.windowed
    # ranked by bm25, but only among the five newest matches
    assert {h.key for h in newest.hits} <= {f"w{i}" for i in range(7, 12)}
    assert [h.score for h in newest.hits] == sorted(h.score for h in newest.hits)


def test_rebuild_through_sqlite_utils_restores_a_stale_index(store: Store) -> None:
    from store.search import rebuild

    a = item(store, "a")
    conn = raw_sql.connection(store)
    # A write that bypassed the triggers (as a tool editing the file directly would).
    conn.execute("DROP TRIGGER commits_au")
    conn.execute("UPDATE commits SET message = 'now about a narwhal' WHERE item_id = ?", (a,))
    assert ids(store, "narwhal") == []
    seen: list[str] = []
    rebuild(store, lambda what, done, total: seen.append(what))
    assert ids(store, "narwhal") == [a]
    assert seen == [s.table for s in SOURCES]
