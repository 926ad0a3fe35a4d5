"""The learning commands (train, predict, eval, chart, simulate, models) misused the way a
hurried user does: the same set as votes and eval, votes that are all skips, a labeler
never run on the set, a report written through a link or into a pipe, a simulation
shorter than its seed votes. Each refusal is one line saying what to do instead."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from store import open_store
from store.sets import get_set, set_item_ids

SKIP_ITEMS = [
    {"id": "s-1", "message": "speed up the loop"},
    {"id": "s-2", "message": "fix the docs"},
]


def _error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def _models(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [name for (name,) in conn.execute("SELECT name FROM models ORDER BY id")]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--votes", "tr", "--eval", "tr"), "--eval tr is also a --votes set"),
        (("--votes", "tr", "--dev", "tr"), "--dev tr is also a --votes set"),
        (("--votes", "tr", "--eval", "tr", "--same-repos"), "dropped as items or repositories"),
        (("--votes", "tr", "--eval", "tr", "--exclude-overlap"), "dropped as items or repo"),
        (("--votes", "tr", "--dev", "gt-dev", "--eval", "gt-dev"), "--dev and --eval both name"),
    ],
)
def test_a_set_scored_on_what_the_model_learns_from_is_refused(split, tmp_path: Path, args, says):  # type: ignore[no-untyped-def]
    # was: "shares 1 repositories with the dev/eval sets", or with --same-repos
    # "no training examples left (check --tau, ...)", or a model scored on its own dev set
    line = _error(split("train", "--kind", "tfidf-lr", *args))
    assert says in line and "--tau" not in line  # no teacher was asked for
    assert _models(tmp_path / "cli.db") == []


def test_a_curve_or_an_ensemble_scored_on_its_own_sets_is_refused(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    curve = ("--curve", "10", "--from-model", "student@current", "--votes", "tr", "--eval", "tr")
    assert "--eval tr is also a --votes set" in _error(split("train", *curve))
    ensemble = ("--kind", "ensemble", "--dev", "gt-dev", "--eval", "gt-dev")
    assert "--dev and --eval both name gt-dev" in _error(split("train", *ensemble))
    assert _models(tmp_path / "cli.db") == []


def test_votes_that_are_all_skips_say_so_not_tau(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "skips.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in SKIP_ITEMS))
    assert cli("import", "items", str(items), "--set", "sk").exit_code == 0
    for item in ("s-1", "s-2"):
        for who in ("ann", "bob"):
            assert cli("vote", item, "skip", "--annotator", who).exit_code == 0
    line = _error(cli("train", "--kind", "tfidf-lr", "--votes", "sk"))
    assert "--votes sk: 0 items with a settled perf/non-perf label" in line
    assert "--tau" not in line  # no teacher was asked for


def test_weak_labels_from_a_name_that_is_no_labeler_say_so(split) -> None:  # type: ignore[no-untyped-def]
    line = _error(split("train", "--kind", "tfidf-lr", "--votes", "tr", "--weak", "nope@1"))
    assert "'nope@1' names no labeler" in line
    assert "curator predict --labeler nope@1" not in line


def test_a_missing_ensemble_names_the_command_that_trains_one(split) -> None:  # type: ignore[no-untyped-def]
    line = _error(split("models", "show", "ensemble@3"))
    assert "`curator train --kind ensemble`" in line


def test_eval_warns_when_a_labeler_labeled_none_of_the_set(split) -> None:  # type: ignore[no-untyped-def]
    # was: exit 0 with a row of dashes and an all-zero confusion matrix, and no hint
    result = split("eval", "gt-eval", "--labeler", "heuristics@1", "--labeler", "keyword@5")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        next(w for w in warnings if w.startswith("warning: heuristics@1 has labeled none"))
    ]
    assert "`curator predict gt-eval --labeler heuristics@1`" in warnings[0]
    assert split("predict", "gt-eval", "--labeler", "heuristics@1").exit_code == 0
    again = split("eval", "gt-eval", "--labeler", "heuristics@1", "--no-confusion")
    assert "has labeled none" not in again.output


def test_eval_reports_go_through_a_link_and_into_a_pipe(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # was: the link, or the FIFO, replaced by a regular file (as root, --out /dev/full
    # replaced the device itself)
    runs = tmp_path / "runs"
    runs.mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to(runs / "eval.json")
    fifo = tmp_path / "scores.pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader waits; the write can't block
    try:
        args = ("eval", "gt-eval", "--labeler", "keyword@5", "--no-confusion")
        result = split(*args, "--out", str(link), "--markdown", str(fifo))
        assert result.exit_code == 0, result.output
        piped = os.read(reader, 1 << 16).decode()
    finally:
        os.close(reader)
    assert link.is_symlink() and json.loads(link.read_text())["set"] == "gt-eval"
    assert piped.startswith("Evaluation on `gt-eval`")
    assert fifo.exists() and not fifo.is_file()


def test_a_chart_goes_through_a_link_and_a_file_in_the_way_is_named(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    link = tmp_path / "chart.svg"
    link.symlink_to(tmp_path / "real.svg")
    drawn = split(
        "chart", "threshold", "--set", "gt-eval", "--labeler", "keyword@5", "--svg", str(link)
    )
    assert drawn.exit_code == 0, drawn.output
    assert link.is_symlink() and (tmp_path / "real.svg").read_text().startswith("<svg")
    blocker = tmp_path / "notes.txt"
    blocker.write_text("x")
    line = _error(
        split("eval", "gt-eval", "--labeler", "keyword@5", "--out", str(blocker / "e.json"))
    )
    assert line == f"error: cannot write {blocker / 'e.json'}: {blocker} is a file, not a folder"


def test_predict_with_nothing_to_label_says_why_and_never_duplicates(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli("import", "items", str(empty), "--set", "nothing").exit_code == 0
    result = cli("predict", "nothing", "--labeler", "keyword@5")
    assert result.exit_code == 0, result.output
    assert "keyword@5: nothing to label: set 'nothing' holds no items" in result.output
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in SKIP_ITEMS))
    assert cli("import", "items", str(items), "--set", "two").exit_code == 0
    first = cli("predict", "two", "--labeler", "heuristics@1")
    assert first.exit_code == 0 and "2 predicted" in first.output, first.output
    second = cli("predict", "two", "--labeler", "heuristics@1")
    assert second.exit_code == 0, second.output
    assert "nothing to label: 2 of the 2 items already carry its label" in second.output
    assert "┏" not in second.output  # no empty table
    with open_store(tmp_path / "cli.db") as store:
        found = get_set(store, "two")
        assert found is not None
        ids = set_item_ids(store, found.id)
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        rows = conn.execute(
            f"SELECT item_id, COUNT(*) FROM predictions WHERE labeler = 'heuristics@1'"
            f" AND item_id IN ({','.join('?' * len(ids))}) GROUP BY item_id",
            ids,
        ).fetchall()
    assert sorted(n for _, n in rows) == [1, 1]


def test_a_simulation_no_longer_than_its_seed_votes_is_refused(split) -> None:  # type: ignore[no-untyped-def]
    # was: a one-point "curve" at 10 votes, all three orders equal, for --votes 5
    args = ("simulate", "active-learning", "tr", "--eval", "gt-eval", "--seeds", "1")
    line = _error(split(*args, "--votes", "5", "--no-store"))
    assert "--votes 5 must exceed --seed-votes 10" in line
