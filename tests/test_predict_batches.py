"""`curator predict` writes each chunk of predictions in one transaction: a process
killed in the middle of a chunk's write leaves the chunks before it whole and nothing of
that chunk, and a rerun completes the store without a duplicate."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from curator.prediction import CHUNK, PredictSummary, items_to_predict, predict_items
from engines.labelers.registry import load_labeler
from store import open_store
from store.bulk import bulk_insert_commits
from store.labeling_inputs import commit_item_ids
from store.records import CommitRow
from tests import raw_sql
from tests.conftest import ROOT
from tests.synthetic_commits import minimal_commit

N = 2 * CHUNK + 300

# Runs predict and kills its own process (SIGKILL, no clean-up) when SQLite starts the
# KILL_AT-th prediction INSERT: in the middle of the second chunk's transaction.
_KILLED_RUN = textwrap.dedent(
    """
    import os, signal, sys
    from curator.prediction import CHUNK, PredictSummary, items_to_predict, predict_items
    from engines.labelers.registry import load_labeler
    from store import open_store
    from store.labeling_inputs import commit_item_ids
    from tests import raw_sql

    kill_at = CHUNK + CHUNK // 2
    inserts = 0

    def trace(sql):
        global inserts
        if sql.startswith("INSERT INTO predictions"):
            inserts += 1
            if inserts == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    with open_store(sys.argv[1]) as store:
        raw_sql.connection(store).set_trace_callback(trace)
        labeler = load_labeler(store, "keyword@1")
        todo, done = items_to_predict(store, labeler, commit_item_ids(store))
        predict_items(store, labeler, todo, PredictSummary(labeler.name, len(todo), done))
    print("not killed")
    """
)


def _commit(i: int) -> CommitRow:
    message = "speed up the hot loop" if i % 3 == 0 else "fix typo in the docs"
    return minimal_commit(i, f"{message} {i}")


def test_a_kill_during_a_chunk_write_leaves_whole_chunks_and_a_rerun_completes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "big.db"
    with open_store(db) as store:
        bulk_insert_commits(store, (_commit(i) for i in range(N)))
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, str(db)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -9, proc.stderr  # killed mid-write, not finished
    assert "not killed" not in proc.stdout
    with open_store(db) as store:
        ids = commit_item_ids(store)
        stored = raw_sql.query(store, "SELECT item_id FROM predictions ORDER BY item_id")
        assert [r[0] for r in stored] == ids[:CHUNK]  # the first chunk whole, no more
        labeler = load_labeler(store, "keyword@1")
        todo, done = items_to_predict(store, labeler, ids)
        assert done == CHUNK and todo == ids[CHUNK:]
        summary = predict_items(store, labeler, todo, PredictSummary(labeler.name, N, done))
        assert sum(summary.labels.values()) == N - CHUNK
        counts = raw_sql.query(
            store, "SELECT COUNT(*), COUNT(DISTINCT item_id), SUM(label = 'perf') FROM predictions"
        )[0]
        assert tuple(counts) == (N, N, sum(1 for i in range(N) if i % 3 == 0))


def test_the_store_benchmark_short_form_writes_every_prediction_on_both_paths() -> None:
    from tests.benchmarks import bench_predict_store

    result = bench_predict_store.run(3_000)  # raises when the two paths disagree
    assert set(result["rows"]) == {"chunks of 512 (before)", "curator predict_items"}
    assert all(r["per_s"] > 0 for r in result["rows"].values())


def test_stored_details_are_the_json_of_sorted_keys(tmp_path: Path) -> None:
    import json

    from store.predictions import add_predictions
    from store.records import PredictionRow

    details = [
        {"p_perf": 0.1 + 0.2},
        {"p_perf": 1e-07},
        {"p_perf": float("nan")},
        {"p_perf": 1},
        {"é": 0.5},
        {"b": [1, "x"], "a": {"z": None}},
        {},
    ]
    with open_store(tmp_path / "d.db") as store:
        bulk_insert_commits(store, (_commit(i) for i in range(len(details))))
        ids = commit_item_ids(store)
        add_predictions(
            store,
            [(i, PredictionRow("x@1", "perf", 0.5, d)) for i, d in zip(ids, details, strict=True)],
        )
        stored = raw_sql.query(store, "SELECT details FROM predictions ORDER BY item_id")
    assert [r[0] for r in stored] == [json.dumps(d, sort_keys=True) for d in details]
