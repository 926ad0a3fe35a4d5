"""Everyday reads on a store the size a project reaches: the queries a set-scoped command
runs look up the set's members through an index, whatever the size of the rest of the
store, and the scale benchmark's short form runs every command it times.

The stores are built by the benchmark's own builder (``tests/benchmarks/
bench_store_scale.py``) at a small fraction of its full size: SQLite plans a query the
same way at any size here (no ``ANALYZE`` statistics), so a plan checked on a small store
is the plan a large one gets. No timing is asserted.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store import Store, open_store
from store.items import ImportedItem, find_by_key, insert_imported_items
from store.migrations import SCHEMA_VERSION
from store.predictions import add_predictions, predicted_item_ids
from store.records import PredictionRow
from store.sets import get_set, labeler_versions, latest_predictions, set_item_ids
from store.trends import latest_scores_in_set
from tests import raw_sql
from tests.benchmarks import bench_store_scale


@pytest.fixture(scope="module")
def scale_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 commits predicted by three labelers, kernels, IR modules, 20 sets, votes."""
    path = tmp_path_factory.mktemp("scale") / "store.db"
    bench_store_scale.build(path, 0.002)
    return path


@pytest.fixture
def scale_store(scale_db: Path) -> Iterator[Store]:
    with open_store(scale_db) as store:
        yield store


def plans_of(store: Store, action: Callable[[], object]) -> list[tuple[str, list[str]]]:
    """Every SELECT ``action`` runs on the store's connection, with its query plan."""
    conn = raw_sql.connection(store)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    plans = []
    for sql in statements:
        if sql.lstrip().upper().startswith("SELECT"):
            rows = conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            plans.append((sql, [str(row[3]) for row in rows]))
    return plans


def test_a_sets_latest_scores_are_looked_up_per_member(scale_store: Store) -> None:
    set_row = get_set(scale_store, "set03")
    assert set_row is not None
    plans = plans_of(
        scale_store, lambda: latest_scores_in_set(scale_store, set_row.id, "tfidf-lr@1")
    )
    details = [line for _, lines in plans for line in lines]
    # one (item, labeler) lookup per member, never the labeler's predictions store-wide
    by_labeler = [d for d in details if "labeler=?" in d]
    assert by_labeler and all("item_id=?" in d for d in by_labeler), plans
    assert not any("predictions_labeler_label" in d for d in details), plans
    assert not any(d.startswith("SCAN") for d in details), plans


def test_a_labelers_items_are_read_from_one_index_without_a_sort(scale_store: Store) -> None:
    for action in (
        lambda: predicted_item_ids(scale_store, "keyword@5"),
        lambda: latest_predictions(scale_store, "keyword@5"),
    ):
        plans = plans_of(scale_store, action)
        details = [line for _, lines in plans for line in lines]
        assert any("COVERING INDEX predictions_labeler_item (labeler=?)" in d for d in details)
        assert not any("TEMP B-TREE" in d for d in details), plans


def test_a_labelers_versions_are_a_range_of_the_index_and_only_its_own(
    scale_store: Store, tmp_path: Path
) -> None:
    plans = plans_of(scale_store, lambda: labeler_versions(scale_store, "keyword"))
    details = [line for _, lines in plans for line in lines]
    assert any("predictions_labeler_item (labeler>? AND labeler<?)" in d for d in details), plans
    with open_store(tmp_path / "names.db") as store:
        [(_, item)] = insert_imported_items(
            store, [ImportedItem("kernel", "k", "https://x.org/k", None, None, {})]
        )
        names = ("key_word@1", "keyword@2", "keyword@10", "keywords@1", "Keyword@3")
        add_predictions(store, [(item, PredictionRow(name, "perf", 1.0)) for name in names])
        assert labeler_versions(store, "keyword") == ["keyword@2", "keyword@10"]
        assert labeler_versions(store, "key_word") == ["key_word@1"]


def test_an_older_store_gains_the_labeler_item_index(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    bench_store_scale.build(db, 0.001)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DROP INDEX predictions_labeler_item")
        conn.execute("DELETE FROM schema_version WHERE version >= 13")
    conn.close()
    with open_store(db) as store:
        assert store.schema_version() == SCHEMA_VERSION >= 13
        names = raw_sql.query(
            store,
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'predictions'",
        )
        assert "predictions_labeler_item" in {r[0] for r in names}
        assert len(predicted_item_ids(store, "keyword@5")) == 200


def _copy(db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy.db"
    source = sqlite3.connect(db)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    return copy


def test_a_sets_latest_scores_are_each_members_newest(scale_db: Path, tmp_path: Path) -> None:
    with open_store(_copy(scale_db, tmp_path)) as store:
        set_row = get_set(store, "set03")
        assert set_row is not None
        members = set_item_ids(store, set_row.id)
        before = latest_scores_in_set(store, set_row.id, "tfidf-lr@1")
        assert set(before) == set(members)
        add_predictions(store, [(members[0], PredictionRow("tfidf-lr@1", "perf", 0.99, {}))])
        outsider = int(
            raw_sql.scalar(
                store,
                "SELECT MAX(id) FROM items WHERE kind = 'commit' AND id NOT IN"
                " (SELECT item_id FROM set_items WHERE set_id = ?)",
                (set_row.id,),
            )
            or 0
        )
        add_predictions(store, [(outsider, PredictionRow("tfidf-lr@1", "perf", 0.5, {}))])
        after = latest_scores_in_set(store, set_row.id, "tfidf-lr@1")
    assert after[members[0]] == ("perf", 0.99, {})
    assert outsider not in after
    assert {i: v for i, v in after.items() if i != members[0]} == {
        i: v for i, v in before.items() if i != members[0]
    }


def test_scale_benchmark_short_form_times_every_command(tmp_path: Path) -> None:
    result = bench_store_scale.run(0.002, tmp_path, repeat=1)
    big, small = result["big"], result["small"]
    assert (big["commits"], small["commits"]) == (400, 40)
    assert big["sets"] == small["sets"] == 20 and big["votes"] > small["votes"] > 0
    rows = result["rows"]
    assert {"stats", "set list", "eval --labeler keyword@latest", "home counts"} <= set(rows)
    assert len(rows) == 18
    assert all(r["small_s"] > 0 and r["big_s"] > 0 and r["ratio"] > 0 for r in rows.values())
    assert not list(tmp_path.glob("*.db"))  # the stores are removed unless --keep


def test_an_item_named_by_key_alone_is_found_through_the_index(scale_store: Store) -> None:
    key = str(raw_sql.scalar(scale_store, "SELECT key FROM items WHERE kind = 'commit' LIMIT 1"))
    plans = plans_of(scale_store, lambda: find_by_key(scale_store, key))
    details = [line for _, lines in plans for line in lines]
    # `curator vote KEY LABEL` names no kind: the (kind, key) index is searched, not read
    assert any("sqlite_autoindex_items_1 (kind=? AND key=?)" in d for d in details), plans
    assert not any(d.startswith("SCAN") for d in details), plans


def test_a_key_of_several_kinds_still_names_each(scale_db: Path, tmp_path: Path) -> None:
    with open_store(_copy(scale_db, tmp_path)) as store:
        key = str(raw_sql.scalar(store, "SELECT key FROM items WHERE kind = 'commit' LIMIT 1"))
        insert_imported_items(
            store, [ImportedItem("kernel", key, "https://x.org/k", None, None, {})]
        )
        assert [r.kind for r in find_by_key(store, key)] == ["commit", "kernel"]
        assert [r.kind for r in find_by_key(store, key, "kernel")] == ["kernel"]
        assert find_by_key(store, "no-such-key") == []
        # the CLI says so rather than guess
        vote = ["vote", key, "perf", "--annotator", "zed"]
        done = subprocess.run(
            [sys.executable, "-m", "curator", "--db", str(store.path), *vote],
            capture_output=True,
            text=True,
            cwd=bench_store_scale.REPO,
            check=False,
        )
    assert done.returncode != 0 and "several kinds (commit, kernel); pass --kind" in done.stderr
