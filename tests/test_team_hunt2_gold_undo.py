"""Undo takes back an answer on a hidden gold item as it takes back a vote: the latest
of the two goes, the answer is kept as undone history, and it leaves the annotator's
gold accuracy; and migration 14 brings a store of the schema before it up to date."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from annotation.annotator_report import annotator_quality
from annotation.gold import add_gold
from annotation.routing import serve_next, submit
from annotation.votes import undo
from store import SCHEMA_VERSION, Store, StoreError, open_store
from store.items import find_by_id, find_by_sha_prefix
from store.migrations import MIGRATIONS, _statements
from store.routing import gold_answered, gold_answers
from store.sets import NewSet, SetRow, create_set
from store.votes import live_votes_for_items
from tests import raw_sql
from tests.annotation_data import Spec, add_items, vote

PERF = ["perf", "non-perf"]


def gold_setup(store: Store) -> tuple[SetRow, list[int], list[int]]:
    """A settled set ``known`` (both items perf) and a set ``work`` of three items with
    ``known``'s two items as hidden gold."""
    known_ids = list(add_items(store, [Spec(f"g{i}") for i in range(2)]).values())
    known = create_set(store, NewSet("known", "commit", PERF, votes_per_item=1), known_ids)
    for item in known_ids:
        vote(store, item, "oracle", "perf", set_id=known.id)
    work_ids = list(add_items(store, [Spec(f"w{i}") for i in range(3)]).values())
    work = create_set(
        store, NewSet("work", "commit", PERF, votes_per_item=2, overlap="all"), work_ids
    )
    add_gold(store, "work", "known", 0.5, 0)
    return work, work_ids, known_ids


def quality(store: Store, set_row: SetRow, who: str) -> tuple[int, float | None]:
    row = next(q for q in annotator_quality(store, set_row) if q.annotator == who)
    return row.gold_answered, row.gold_accuracy


def test_undo_takes_back_a_gold_answer_given_after_a_vote(store: Store) -> None:
    work, work_ids, known_ids = gold_setup(store)
    submit(store, work, work_ids[0], "ann", "perf")
    submit(store, work, known_ids[0], "ann", "non-perf")  # a slip on a gold item
    assert quality(store, work, "ann") == (1, 0.0)

    undone = undo(store, "ann", in_set=work)

    assert undone is not None and undone.gold
    assert (undone.item_id, undone.undone_label, undone.restored_label) == (
        known_ids[0],
        "non-perf",
        None,
    )
    # the vote before it is untouched; the answer is out of the accuracy but kept
    assert [(v.annotator, v.label) for v in live_votes_for_items(store, [work_ids[0]])] == [
        ("ann", "perf")
    ]
    assert gold_answers(store, work.id) == []
    assert gold_answered(store, work.id, "ann") == 0
    kept = raw_sql.query(
        store, "SELECT item_id, annotator, label, expected, undone_at FROM gold_answers_undone"
    )
    assert [tuple(r)[:4] for r in kept] == [(known_ids[0], "ann", "non-perf", "perf")]
    assert kept[0]["undone_at"]
    # served again, and the right answer now counts alone
    served = serve_next(store, work, "ann")
    assert served is not None and served.gold
    submit(store, work, served.entry.item_id, "ann", "perf")
    assert quality(store, work, "ann") == (1, 1.0)


def test_repeated_undos_walk_back_through_gold_answers_and_votes(store: Store) -> None:
    work, work_ids, known_ids = gold_setup(store)
    submit(store, work, work_ids[0], "ann", "perf")
    submit(store, work, known_ids[0], "ann", "non-perf")
    submit(store, work, known_ids[0], "ann", "perf")  # answered again: the latest counts
    submit(store, work, work_ids[1], "ann", "non-perf")

    steps = []
    while (undone := undo(store, "ann", in_set=work)) is not None:
        steps.append((undone.gold, undone.item_id, undone.undone_label, undone.restored_label))
    assert steps == [
        (False, work_ids[1], "non-perf", None),
        (True, known_ids[0], "perf", "non-perf"),  # the first answer is in force again
        (True, known_ids[0], "non-perf", None),
        (False, work_ids[0], "perf", None),
    ]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM gold_answers_undone") == 2


def test_undo_in_another_set_leaves_this_sets_gold_answers(store: Store) -> None:
    work, _, known_ids = gold_setup(store)
    other_ids = list(add_items(store, [Spec("o0")]).values())
    other = create_set(store, NewSet("other", "commit", PERF), other_ids)
    vote(store, other_ids[0], "ann", "perf", set_id=other.id)
    submit(store, work, known_ids[0], "ann", "non-perf")

    undone = undo(store, "ann", in_set=other)

    assert undone is not None and not undone.gold and undone.item_id == other_ids[0]
    assert [a.label for a in gold_answers(store, work.id)] == ["non-perf"]


def test_curator_undo_takes_back_a_gold_answer_without_naming_it_gold(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as s:
        work, work_ids, known_ids = gold_setup(s)
        vote(s, work_ids[0], "ann", "perf", set_id=work.id)
    voted = cli("vote", f"#{known_ids[0]}", "non-perf", "--set", "work", "--annotator", "ann")
    assert voted.exit_code == 0, voted.output

    undone = cli("undo", "--set", "work", "--annotator", "ann")

    assert undone.exit_code == 0, undone.output
    assert undone.output.startswith("undid vote ")
    assert f"on item #{known_ids[0]} (non-perf); now: no vote" in undone.output
    assert "gold" not in undone.output
    report = cli("agree", "work", "--by-annotator", "--json")
    assert report.exit_code == 0, report.output
    (ann,) = [a for a in json.loads(report.output)["annotators"] if a["annotator"] == "ann"]
    assert (ann["gold_answered"], ann["gold_accuracy"]) == (0, None)
    again = cli("undo", "--set", "work", "--annotator", "ann")  # then the vote before it
    assert f"on item #{work_ids[0]} (perf); now: no vote" in again.output


# Migration 14 ---------------------------------------------------------------------------


def old_store(path: Path, version: int) -> sqlite3.Connection:
    """A database made by the migrations up to ``version``, as an older Curator left it."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL)"
    )
    for number, name, step in MIGRATIONS[:version]:
        if callable(step):
            step(conn, None)
        else:
            for statement in _statements(step):
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (number, name))
    return conn


def plan(store: Store, call: Callable[[], object]) -> list[str]:
    """The query plans of the statements ``call()`` runs on the store's connection."""
    conn = raw_sql.connection(store)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    return [
        detail
        for sql in seen
        if sql.lstrip().upper().startswith("SELECT")
        for *_, detail in conn.execute("EXPLAIN QUERY PLAN " + sql)
    ]


def test_migration_14_indexes_the_sha_of_an_old_store(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = old_store(path, 13)
    for i, sha in enumerate(["ABCDEF" + "0" * 34, "abcdee" + "1" * 34, "abcdef" + "2" * 34]):
        conn.execute(
            "INSERT INTO items (id, kind, key, source, created_at)"
            " VALUES (?, 'commit', ?, 'file.jsonl', 'then')",
            (i + 1, f"ext-{i}"),
        )
        conn.execute(
            "INSERT INTO commits (item_id, repo, sha, message, diff, model_input, diff_hash)"
            " VALUES (?, 'r', ?, 'm', '', 'm', 'h')",
            (i + 1, sha),
        )
    conn.close()

    with open_store(path) as s:
        assert s.schema_version() == SCHEMA_VERSION
        indexes = {r[0] for r in raw_sql.query(s, "SELECT name FROM sqlite_master")}
        assert {"commits_sha", "gold_answers_undone"} <= indexes
        found = find_by_sha_prefix(s, "abcdef0")
        assert [(ref.key, sha) for ref, sha in found] == [("ext-0", "ABCDEF" + "0" * 34)]
        assert [ref.key for ref, _ in find_by_sha_prefix(s, "ABCDE")] == [
            "ext-0",
            "ext-1",
            "ext-2",
        ]
        assert find_by_sha_prefix(s, "abcdf") == []
        details = plan(s, lambda: find_by_sha_prefix(s, "abcdef0"))
    assert any("USING COVERING INDEX commits_sha" in d for d in details), details
    assert not any(d.startswith("SCAN c") for d in details), details


def test_migration_14_is_one_transaction(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = old_store(path, 13)
    # in the way: the migration's last statement (the index) fails after the sha index
    conn.execute("CREATE VIEW gold_answers_undone AS SELECT 1 AS set_id")
    conn.close()

    with pytest.raises(StoreError, match="views may not be indexed"):
        open_store(path).close()

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone() == (13,)
        assert (
            conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'commits_sha'").fetchone()
            is None
        )
    finally:
        conn.close()


def test_a_served_gold_item_voted_on_without_set_is_answered_in_its_set(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as s:
        work, _, known_ids = gold_setup(s)
        served = serve_next(s, work, "ann")  # `curator next work`: gold comes first
        assert served is not None and served.gold
        ref = find_by_id(s, served.entry.item_id)
        assert ref is not None

    voted = cli("vote", ref.key, "non-perf", "--annotator", "ann")  # no --set

    assert voted.exit_code == 0, voted.output
    assert "gold" not in voted.output
    with open_store(tmp_path / "cli.db") as s:
        # an answer in work, not a vote that would change the known set's label
        assert [(a.item_id, a.label) for a in gold_answers(s, work.id)] == [
            (served.entry.item_id, "non-perf")
        ]
        assert {(v.annotator, v.label) for v in live_votes_for_items(s, known_ids)} == {
            ("oracle", "perf")
        }


def test_a_skip_on_a_gold_item_is_neither_right_nor_wrong(store: Store) -> None:
    """As a skip vote is left out of an annotator's agreement with the final labels."""
    work, _, known_ids = gold_setup(store)
    submit(store, work, known_ids[0], "ann", "skip")
    assert quality(store, work, "ann") == (0, None)
    submit(store, work, known_ids[1], "ann", "perf")
    assert quality(store, work, "ann") == (1, 1.0)
