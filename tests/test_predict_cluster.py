"""``curator predict`` on Dask workers (a real LocalCluster): the same predictions as the
in-process run, each item once; a worker killed mid-chunk is reported, its chunk runs
again elsewhere, and nothing is lost or doubled; a labeler that fails on the workers is
one line per chunk and the run ends cleanly."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import threading
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from curator.prediction import (
    PredictSummary,
    items_to_predict,
    predict_items,
    predict_items_on_cluster,
)
from engines.labelers.base import input_fields
from engines.labelers.registry import (
    LabelerError,
    build_labeler,
    load_labeler,
    resolve_labeler,
    spec_fields,
)
from engines.labelers.student.infer import META_FILE
from store import open_store
from store.bulk import bulk_insert_commits
from store.labeling_inputs import commit_item_ids
from store.models import register_model
from tests import raw_sql
from tests.dask_helpers import worker_running
from tests.synthetic_commits import WORDS, minimal_commit
from tests.tiny_student import save_tiny_student


def _store(path: Path, n: int) -> Path:
    with open_store(path) as store:
        rows = (
            minimal_commit(i, " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 2 + i % 9)))
            for i in range(n)
        )
        bulk_insert_commits(store, rows)
    return path


def _stored(db: Path, labeler: str) -> list[tuple[int, str, float]]:
    with open_store(db) as store:
        return [
            (int(i), str(label), round(float(score), 5))
            for i, label, score in raw_sql.query(
                store,
                "SELECT item_id, label, score FROM predictions WHERE labeler = ? ORDER BY item_id",
                (labeler,),
            )
        ]


def _with_student(db: Path, tmp_path: Path) -> str:
    staged = save_tiny_student(tmp_path / "staged-student")
    with open_store(db) as store:
        return register_model(store, "student", "tiny", {}, {}, staged).name


def _run(db: Path, name: str, client: Client | None, on_lost=lambda a: None) -> PredictSummary:  # type: ignore[no-untyped-def]
    """All commits labeled by ``name``, in process or on ``client`` in chunks of 250."""
    with open_store(db) as store:
        labeler = load_labeler(store, name)
        todo, done = items_to_predict(store, labeler, commit_item_ids(store))
        summary = PredictSummary(labeler.name, len(todo) + done, done)
        if client is None:
            return predict_items(store, labeler, todo, summary)
        spec = resolve_labeler(store, name)
        fields = input_fields(labeler)
        return predict_items_on_cluster(store, spec, fields, todo, summary, client, on_lost=on_lost)


def test_the_cli_labels_on_workers_as_it_does_in_process(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = _store(tmp_path / "cli.db", 5000)
    local = tmp_path / "local.db"
    local.write_bytes(db.read_bytes())
    _run(local, "keyword@latest", None)
    result = cli("predict", "--labeler", "keyword@latest", "--workers", "2", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["predicted"] == 5000 and summary["failed_chunks"] == []
    name = summary["labeler"]
    assert _stored(db, name) == _stored(local, name)
    again = json.loads(cli("predict", "--labeler", name, "--workers", "1", "--json").stdout)
    assert again["predicted"] == 0 and again["already_predicted"] == 5000


def test_give_workers_or_a_scheduler_not_both(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("predict", "--labeler", "keyword@1", "--workers", "2", "--scheduler", "tcp://x:1")
    assert result.exit_code != 0
    assert "not both" in result.output


def test_a_worker_killed_mid_chunk_is_reported_and_its_chunk_runs_again(
    tmp_path: Path,
) -> None:
    db = _store(tmp_path / "killed.db", 1_500)
    name = _with_student(db, tmp_path)
    local = tmp_path / "local.db"  # the copy names the same model directory
    local.write_bytes(db.read_bytes())
    lost: list[str] = []
    outcome: dict[str, object] = {}
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):

        def run() -> None:
            try:
                outcome["summary"] = _run(db, name, client, lost.append)
            except BaseException as exc:  # surfaced by the assertion below
                outcome["error"] = exc

        driver = threading.Thread(target=run)
        driver.start()
        victim = worker_running(
            client, re.compile(r"^predict-student@1-\w+-0$"), "the first chunk", 120
        )
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        driver.join(timeout=300)
        assert not driver.is_alive()
    assert "error" not in outcome, outcome.get("error")
    summary = outcome["summary"]
    assert isinstance(summary, PredictSummary) and summary.cluster is not None
    assert victim in lost and victim in summary.cluster.lost_workers
    assert summary.cluster.requeued >= 1 and summary.cluster.failed == []
    assert sum(summary.labels.values()) == 1_500
    _run(local, name, None)
    assert _stored(db, name) == _stored(local, name)  # each item once, as in one process


def test_a_labeler_that_fails_on_the_workers_is_one_line_per_chunk(
    tmp_path: Path, client: Client
) -> None:
    db = _store(tmp_path / "broken.db", 500)
    name = _with_student(db, tmp_path)
    with open_store(db) as store:
        labeler = load_labeler(store, name)
        spec = resolve_labeler(store, name)
        todo, _ = items_to_predict(store, labeler, commit_item_ids(store))
    for weights in (tmp_path / "models" / name).glob("*.safetensors"):
        weights.write_bytes(b"not weights")  # the workers find a broken model
    with open_store(db) as store:
        summary = PredictSummary(name, len(todo), 0)
        fields = input_fields(labeler)
        predict_items_on_cluster(store, spec, fields, todo, summary, client, chunk=250)
    assert summary.cluster is not None and len(summary.cluster.failed) == 2  # 2 chunks
    assert all(line.startswith("items ") and "\n" not in line for line in summary.cluster.failed)
    assert _stored(db, name) == []


@pytest.fixture(scope="module")
def client() -> object:
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def test_the_driver_learns_what_to_send_from_the_model_record(tmp_path: Path) -> None:
    """A driver sends the texts the labeler reads, known from what its training recorded
    (no model is loaded to learn it): the same fields the built labeler declares."""
    db = _store(tmp_path / "fields.db", 3)
    name = _with_student(db, tmp_path)
    with open_store(db) as store:
        for labeler in ("keyword@latest", "heuristics@1", name):
            spec = resolve_labeler(store, labeler)
            assert spec_fields(spec) == input_fields(build_labeler(spec)), labeler
        student = resolve_labeler(store, name)
        assert spec_fields(student) == ("message",)
        meta_path = Path(str(student.path)) / META_FILE
        meta = json.loads(meta_path.read_text())
        meta_path.write_text(json.dumps({**meta, "input_field": "model_input"}))
        assert spec_fields(student) == ("model_input",)
        missing = dataclasses.replace(student, path=str(tmp_path / "gone"))
        with pytest.raises(LabelerError, match="gone"):
            spec_fields(missing)


def test_items_without_commit_text_still_move_the_progress(client: Client, tmp_path: Path) -> None:
    db = _store(tmp_path / "gaps.db", 300)
    steps: list[int] = []
    with open_store(db) as store:
        ids = commit_item_ids(store)
        todo = [*ids[:150], 10**6, 10**6 + 1, *ids[150:]]  # two ids no commit has
        spec = resolve_labeler(store, "keyword@1")
        summary = PredictSummary(spec.name, len(todo), 0)
        predict_items_on_cluster(
            store, spec, ("message",), todo, summary, client, steps.append, chunk=100
        )
    assert sum(steps) == len(todo) == 302  # the bar reaches its end
    assert sum(summary.labels.values()) == 300
    assert len(_stored(db, "keyword@1")) == 300


def test_a_floored_model_gets_the_commits_files_on_the_workers(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A model whose rule floor vetoes test-only commits reads each commit's ``files``
    beside its text: the workers are sent them, and store what the in-process run does."""
    for path, message in (
        ("tests/test_json.py", "Speed up the JSON test fixtures"),  # the rules fire; vetoed
        ("src/json.cc", "Speed up the JSON parser"),
    ):
        item = {"id": path, "repo": "https://example.org/x/y", "file": path, "message": message}
        (tmp_path / "more.jsonl").write_text(json.dumps(item) + "\n")
        assert split("import", "items", str(tmp_path / "more.jsonl")).exit_code == 0
    assert split("train", "--kind", "tfidf-lr", "--votes", "tr").exit_code == 0
    db = tmp_path / "cli.db"
    with open_store(db) as store:
        spec = resolve_labeler(store, "tfidf-lr@1")
        assert spec_fields(spec) == input_fields(build_labeler(spec)) == ("model_input", "files")
        assert spec_fields(spec, "message") == ("message", "files")  # --input message
    local = tmp_path / "local.db"
    local.write_bytes(db.read_bytes())
    _run(local, "tfidf-lr@1", None)
    result = split("predict", "--labeler", "tfidf-lr@1", "--workers", "1", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["failed_chunks"] == [] and summary["failed_items"] == 0
    stored = _stored(db, "tfidf-lr@1")
    labeled = summary["predicted"] + summary["already_predicted"]  # out-of-fold on tr
    assert summary["predicted"] > 2 and labeled == summary["items"] == len(stored)
    assert _stored(db, "tfidf-lr@1") == _stored(local, "tfidf-lr@1")
    with open_store(db) as store:
        found = dict(
            raw_sql.query(
                store,
                "SELECT c.message, p.label FROM predictions AS p JOIN commits AS c"
                " ON c.item_id = p.item_id WHERE p.labeler = 'tfidf-lr@1'"
                " AND c.message LIKE 'Speed up the JSON %'",
            )
        )
    # the rules call both perf; the veto, reading the files on the worker, overrules them
    # on the commit that changes only a test
    assert found == {
        "Speed up the JSON parser": "perf",
        "Speed up the JSON test fixtures": "non-perf",
    }


def test_a_run_where_every_chunk_fails_ends_in_one_error_line(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert split("train", "--kind", "tfidf-lr", "--votes", "tr").exit_code == 0
    before = _stored(tmp_path / "cli.db", "tfidf-lr@1")  # its out-of-fold scores on tr
    pickled = tmp_path / "models" / "tfidf-lr@1" / "model.pkl"
    pickled.write_bytes(b"garbage\n")
    result = split("predict", "--labeler", "tfidf-lr@1", "--workers", "1")
    assert result.exit_code == 1, result.output
    lines = re.sub(r"\x1b\[[0-9;]*m", "", result.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith("warning: chunk not labeled: items ")]
    assert failed and all(f"{pickled}: cannot be read (" in line for line in failed)
    assert (
        lines[-1]
        == "error: tfidf-lr@1: no item was labeled (1 chunk failed: see the warnings above)"
    )
    assert "Traceback" not in result.output and "predicted" not in result.stdout
    assert _stored(tmp_path / "cli.db", "tfidf-lr@1") == before


def test_chunks_that_failed_beside_labeled_ones_are_counted_in_one_line() -> None:
    """Some chunks labeled, some failed: the summary's line (the command prints it as its
    error and exits 1) counts the items left unlabeled, which a rerun labels."""
    from collections import Counter

    from engines.labelers.on_cluster import ClusterPredictOutcome

    clean = PredictSummary("tfidf-lr@1", 6, 0, Counter({"perf": 4}), ClusterPredictOutcome())
    assert clean.not_labeled() is None
    outcome = ClusterPredictOutcome(failed=["items 5..6: boom"], failed_items=2)
    partial = PredictSummary("tfidf-lr@1", 6, 0, Counter({"perf": 4}), outcome)
    line = partial.not_labeled()
    assert line is not None and line.startswith("tfidf-lr@1: 2 items were not labeled (1 chunk")
    assert partial.as_json()["failed_items"] == 2
