"""Team commands run at once on one store: each reads what it decides on under the
write lock it writes with, so a second run never works from a state the first changed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import store.connection
from annotation.gold import add_gold
from store import Store, open_store
from store.routing import gold_count
from store.sets import NewSet, create_set, get_set
from tests.annotation_data import Spec, add_items, vote

PERF = ["perf", "non-perf"]


def two_sets(store: Store) -> tuple[list[int], list[int]]:
    """A settled set ``known`` of eight perf items and a set ``work`` of ten."""
    known_ids = list(add_items(store, [Spec(f"g{i}") for i in range(8)]).values())
    known = create_set(store, NewSet("known", "commit", PERF, votes_per_item=1), known_ids)
    for item in known_ids:
        vote(store, item, "oracle", "perf", set_id=known.id)
    work_ids = list(add_items(store, [Spec(f"w{i}") for i in range(10)]).values())
    create_set(store, NewSet("work", "commit", PERF), work_ids)
    return known_ids, work_ids


def test_set_gold_waiting_for_another_set_gold_counts_its_gold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "team.db"
    with open_store(path) as s:
        known_ids, _ = two_sets(s)
        work_id = get_set(s, "work").id  # type: ignore[union-attr]
    # Another `curator set gold work --rate 0.3` holds the write lock, its three gold
    # items written but not yet committed; ours waits for it.
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.executemany(
        "INSERT INTO gold_items (set_id, item_id, label, from_set, position)"
        " VALUES (?, ?, 'perf', 'known', ?)",
        [(work_id, item, n) for n, item in enumerate(known_ids[:3])],
    )
    heard: list[Path] = []

    def waiting(db: Path) -> None:  # the other run commits while ours waits
        heard.append(db)
        other.execute("COMMIT")

    monkeypatch.setattr(store.connection, "NOTICE_AFTER_MS", 50)
    try:
        with open_store(path, waiting=waiting) as s:
            result = add_gold(s, "work", "known", 0.3, seed=1)
            assert heard == [path]  # it did wait for the other run
            assert (result.added, result.total) == (0, 3)
            assert gold_count(s, work_id) == 3  # 30% of ten items, not twice that
    finally:
        other.close()
