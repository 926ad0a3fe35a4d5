"""``curator predict`` as a user meets it: stopped with Ctrl-C, it says how many items it
labeled and stored and that the same command labels the rest, exits 130, and the rerun
completes the store without a duplicate; made to read another text than the model
learned from (``--input``), its predictions say so and ``curator eval`` warns of them."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from curator.prediction import CHUNK
from engines.labelers.inputs import recorded_input
from store import open_store
from store.bulk import bulk_insert_commits
from store.models import get_model
from store.sets import get_set, set_item_ids
from tests.conftest import ROOT
from tests.synthetic_commits import minimal_commit

N = 8 * CHUNK


def _predicted(db: Path) -> int:
    try:
        conn = sqlite3.connect(db, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM predictions").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _predict(db: Path) -> list[str]:
    return [sys.executable, "-m", "curator", "--db", str(db), "predict", "--labeler", "keyword@1"]


def test_a_json_run_stopped_by_sigterm_prints_what_the_store_holds(tmp_path: Path) -> None:
    """--json printed nothing on an interrupt, so a script had no summary to read."""
    db = tmp_path / "c.db"
    with open_store(db) as store:
        bulk_insert_commits(store, (minimal_commit(i, f"speed up loop {i}") for i in range(N)))
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [*_predict(db), "--json"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and _predicted(db) < CHUNK:
        time.sleep(0.005)
    assert proc.poll() is None, "the run finished before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    summary = json.loads(out)
    assert summary["interrupted"] is True
    assert summary["predicted"] == _predicted(db) >= CHUNK
    assert sum(summary.get("labels", {}).values()) in (0, summary["predicted"])


def test_ctrl_c_says_what_was_stored_and_a_rerun_labels_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    with open_store(db) as store:
        bulk_insert_commits(
            store, (minimal_commit(i, f"speed up loop {i}" if i % 3 else "docs") for i in range(N))
        )
    env = {**os.environ, "COLUMNS": "120", "PYTHONPATH": str(ROOT)}
    with (tmp_path / "stderr.txt").open("w") as stderr:
        proc = subprocess.Popen(
            _predict(db),
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _predicted(db) < CHUNK:
            time.sleep(0.005)
        assert proc.poll() is None, "the run finished before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
    err = (tmp_path / "stderr.txt").read_text()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "error:" not in err, err
    # was: nothing at all after the progress bar, so a user could not tell whether the
    # labels so far were kept
    stored = _predicted(db)
    found = re.search(r"interrupted: ([\d,]+) of ([\d,]+) items were labeled and stored", err)
    assert found is not None, err
    assert int(found[1].replace(",", "")) == stored and stored % CHUNK == 0
    assert int(found[2].replace(",", "")) == N
    assert "the same command labels the rest" in err

    rerun = subprocess.run(_predict(db), env=env, cwd=ROOT, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{stored} already predicted" in rerun.stdout.replace(",", "")
    conn = sqlite3.connect(db)
    try:
        total, distinct = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT item_id) FROM predictions"
        ).fetchone()
    finally:
        conn.close()
    assert total == distinct == N


def _warnings(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [x for x in result.stderr.splitlines() if x.startswith("warning: ")]


def test_eval_says_when_predictions_were_made_reading_another_text(split) -> None:  # type: ignore[no-untyped-def]
    made = split("train", "--kind", "tfidf-lr", "--votes", "tr", "--json")
    assert made.exit_code == 0, made.output
    learned = json.loads(made.stdout)
    assert learned["model"] == "tfidf-lr@1"
    with open_store(Path(os.environ["CURATOR_DB"])) as store:
        row = get_model(store, "tfidf-lr@1")
        assert row is not None and recorded_input(row.params)["field"] == "model_input"
    forced = split("predict", "gt-eval", "--labeler", "tfidf-lr@1", "--input", "message")
    assert forced.exit_code == 0, forced.output
    own = split("predict", "gt-dev", "--labeler", "tfidf-lr@1", "--input", "model_input")
    assert own.exit_code == 0, own.output
    # was: scored without a word, as if the model had read what it learned from (and a
    # plain `curator predict` afterwards says every item already carries its label)
    scored = split("eval", "gt-eval", "--labeler", "tfidf-lr@1")
    assert scored.exit_code == 0, scored.output
    with open_store(Path(os.environ["CURATOR_DB"])) as store:
        gt_eval = get_set(store, "gt-eval")
        assert gt_eval is not None
        n = len(set_item_ids(store, gt_eval.id))
    assert (
        f"warning: tfidf-lr@1: of its predictions on gt-eval, {n} with --input message"
        " (messages only) were made by `curator predict` reading another text than the model"
        " learned from: its scores there measure that reading, not the model as trained"
    ) in _warnings(scored)
    # the text it learned from, even when named: nothing recorded, nothing said
    plain = split("eval", "gt-dev", "--labeler", "tfidf-lr@1")
    assert plain.exit_code == 0, plain.output
    assert not any("another text" in w for w in _warnings(plain))


def test_student_runtimes_asked_of_another_labeler_are_refused(split) -> None:  # type: ignore[no-untyped-def]
    made = split("train", "--kind", "tfidf-lr", "--votes", "tr")
    assert made.exit_code == 0, made.output
    before = _predicted(Path(os.environ["CURATOR_DB"]))
    # was: run as always, exit 0, without a word that int8 or bf16 never happened
    for labeler, flag in (
        ("tfidf-lr@1", "--quantize"),
        ("tfidf-lr@latest", "--openvino"),
        ("keyword@5", "--bf16"),
        ("heuristics@1", "--fp32"),
    ):
        result = split("predict", "gt-eval", "--labeler", labeler, flag)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip() == (
            f"error: {flag} is for students (and ensembles of them), not {labeler}"
        )
    assert _predicted(Path(os.environ["CURATOR_DB"])) == before
