"""``curator models list|promote|history`` and ``FAMILY@current`` labeler names, through the
CLI on the sample annotation data; plus the store's promotion functions on their own."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from store import Store
from store.models import current_model, promote_model, promotions, register_model
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _json(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _error_line(result: Any, code: int = 1) -> str:
    """The one line a failing command printed (no traceback, nothing else)."""
    assert result.exit_code == code, result.output
    text = ANSI.sub("", result.stderr).strip()
    assert "Traceback" not in result.output
    assert len(text.splitlines()) == 1, text
    return text


def _rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture
def trained(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Sample items and votes split into tr, gt-dev, gt-eval; tfidf-lr@1 trained on tr and
    scored on gt-dev and gt-eval, tfidf-lr@2 trained on tr with no held-out sets."""
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    made = cli("set", "split", "--from-set", "gt-sample", "--into", "tr:60,gt-dev:20,gt-eval:20")
    assert made.exit_code == 0, made.output
    first = _json(
        cli(
            "train",
            *("--kind", "tfidf-lr", "--votes", "tr", "--dev", "gt-dev", "--eval", "gt-eval"),
            "--json",
        )
    )
    second = _json(cli("train", "--kind", "tfidf-lr", "--votes", "tr", "--json"))
    assert (first["model"], second["model"]) == ("tfidf-lr@1", "tfidf-lr@2")
    return cli, first, second


def test_store_promote_current_and_history(store: Store, tmp_path: Path) -> None:
    for n in (1, 2):
        staged = tmp_path / f"staged{n}"
        staged.mkdir()
        register_model(store, "student", "base", {}, {}, staged)
    assert current_model(store, "student") is None
    with pytest.raises(KeyError):
        promote_model(store, "student@9", "ann")
    assert promotions(store) == []  # a refused promotion leaves nothing behind
    first = promote_model(store, "student@2", "ann", note="best dev F1")
    assert (first.family, first.model, first.promoted_by, first.note) == (
        "student",
        "student@2",
        "ann",
        "best dev F1",
    )
    promote_model(store, "student@1", "bob")
    current = current_model(store, "student")
    assert current is not None and current.name == "student@1"  # the last promoted, not newest
    assert [(p.model, p.promoted_by) for p in promotions(store)] == [
        ("student@2", "ann"),
        ("student@1", "bob"),
    ]
    assert promotions(store, "tfidf-lr") == [] and current_model(store, "tfidf-lr") is None


def test_list_shows_each_models_metrics_and_marks_the_current_one(trained) -> None:  # type: ignore[no-untyped-def]
    cli, first, second = trained
    listed = _json(cli("models", "list", "--json"))
    assert [m["name"] for m in listed] == ["tfidf-lr@1", "tfidf-lr@2"]  # oldest first
    one, two = listed
    assert one["dev_f1"] == pytest.approx(first["metrics"]["dev"]["per_class"]["perf"]["f1"])
    assert one["eval_f1"] == pytest.approx(first["metrics"]["eval"]["per_class"]["perf"]["f1"])
    assert (one["dev_set"], one["eval_set"]) == ("gt-dev", "gt-eval")
    assert one["train_total"] == first["counts"]["train_total"] > 0
    assert two["dev_f1"] is None and two["eval_f1"] is None
    assert not one["current"] and not two["current"]

    promoted = cli("models", "promote", "tfidf-lr@1", "--by", "ann")
    assert promoted.exit_code == 0, promoted.output
    flags = {m["name"]: m["current"] for m in _json(cli("models", "list", "--json"))}
    assert flags == {"tfidf-lr@1": True, "tfidf-lr@2": False}

    table = cli("models", "list")
    assert table.exit_code == 0, table.output
    lines = {
        name: line
        for line in ANSI.sub("", table.stdout).splitlines()
        for name in ("tfidf-lr@1", "tfidf-lr@2")
        if f" {name} " in line
    }
    dev = f"{first['metrics']['dev']['per_class']['perf']['f1']:.3f}"
    evl = f"{first['metrics']['eval']['per_class']['perf']['f1']:.3f}"
    assert "*" in lines["tfidf-lr@1"] and "*" not in lines["tfidf-lr@2"]
    assert dev in lines["tfidf-lr@1"] and evl in lines["tfidf-lr@1"]
    cells = [c.strip() for c in lines["tfidf-lr@2"].split("│")]
    assert cells[-3:-1] == ["-", "-"]  # no dev or eval scores: dashes, not zeros
    assert str(second["counts"]["train_total"]) in cells
    only_svm = _json(cli("models", "list", "--family", "tfidf-svm", "--json"))
    assert only_svm == []


def test_current_predicts_and_evaluates_under_the_promoted_models_name(  # type: ignore[no-untyped-def]
    trained, tmp_path: Path
) -> None:
    cli, first, _ = trained
    db = tmp_path / "cli.db"
    promoted = cli("models", "promote", "tfidf-lr@1")
    assert promoted.exit_code == 0, promoted.output
    eval_ids = {
        r[0]
        for r in _rows(
            db,
            "SELECT item_id FROM set_items AS si JOIN sets AS s"
            " ON s.id = si.set_id WHERE s.name = 'gt-eval'",
        )
    }
    assert eval_ids

    predicted = _json(cli("predict", "gt-eval", "--labeler", "tfidf-lr@current", "--json"))
    assert predicted["labeler"] == "tfidf-lr@1"  # the promoted one, not the newest (@2)
    assert predicted["predicted"] == len(eval_ids)
    stored = {
        r[0] for r in _rows(db, "SELECT item_id FROM predictions WHERE labeler = 'tfidf-lr@1'")
    }
    assert eval_ids <= stored
    assert _rows(db, "SELECT COUNT(*) FROM predictions WHERE labeler LIKE '%@current'") == [(0,)]

    scores = _json(cli("eval", "gt-eval", "--labeler", "tfidf-lr@current", "--json"))
    result = scores["labelers"][0]
    assert result["labeler"] == "tfidf-lr@1"
    assert result["items_missing_prediction"] == 0
    assert result["accuracy"] == pytest.approx(first["metrics"]["eval"]["accuracy"])

    # @current follows the promotions: tfidf-lr@2 has predicted nothing on gt-eval
    assert cli("models", "promote", "tfidf-lr@latest").exit_code == 0
    after = _json(cli("eval", "gt-eval", "--labeler", "tfidf-lr@current", "--json"))
    now = after["labelers"][0]
    assert now["labeler"] == "tfidf-lr@2"
    assert now["items_missing_prediction"] == now["items_with_final_label"] > 0


def test_current_with_nothing_promoted_is_one_error_line(trained, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli, _, _ = trained
    db = tmp_path / "cli.db"
    before = _rows(db, "SELECT COUNT(*) FROM predictions")
    line = _error_line(cli("predict", "gt-eval", "--labeler", "tfidf-lr@current"))
    assert "no tfidf-lr has been promoted yet" in line
    assert "curator models promote tfidf-lr@N" in line
    assert "tfidf-lr@1, tfidf-lr@2" in line  # what could be promoted
    assert _rows(db, "SELECT COUNT(*) FROM predictions") == before

    line = _error_line(cli("eval", "gt-eval", "--labeler", "tfidf-lr@current"))
    assert "no tfidf-lr has been promoted yet" in line and "curator models promote" in line

    line = _error_line(cli("models", "show", "tfidf-lr@current"))
    assert "no tfidf-lr has been promoted yet" in line
    assert line.count("registered: ") == 1 and "tfidf-lr@1, tfidf-lr@2" in line

    line = _error_line(cli("predict", "gt-eval", "--labeler", "student@current"))
    assert "no student has been promoted yet" in line and "curator train" in line


def test_promoting_an_unknown_model_fails_cleanly_and_stores_nothing(  # type: ignore[no-untyped-def]
    trained, tmp_path: Path
) -> None:
    cli, _, _ = trained
    db = tmp_path / "cli.db"
    line = _error_line(cli("models", "promote", "tfidf-lr@9"))
    assert "no model 'tfidf-lr@9'" in line and "tfidf-lr@1, tfidf-lr@2" in line
    assert "not a trained labeler" in _error_line(cli("models", "promote", "nope@1"))
    assert "no student is registered" in _error_line(cli("models", "promote", "student@latest"))
    assert "FAMILY@N" in _error_line(cli("models", "promote", "tfidf-lr"), code=2)
    assert "FAMILY@N" in _error_line(cli("models", "promote", "tfidf-lr@current"), code=2)
    assert _rows(db, "SELECT COUNT(*) FROM model_promotions") == [(0,)]
    assert _json(cli("models", "history", "--json")) == []


def test_history_lists_promotions_in_order_with_who(  # type: ignore[no-untyped-def]
    trained, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli, _, _ = trained
    monkeypatch.setenv("CURATOR_ANNOTATOR", "carol")
    first = cli("models", "promote", "tfidf-lr@1")
    assert first.exit_code == 0, first.output
    assert "tfidf-lr@1 is now the current tfidf-lr" in ANSI.sub("", first.stdout)
    second = cli("models", "promote", "tfidf-lr@2", "--by", "alice", "--note", "more data")
    assert second.exit_code == 0, second.output
    assert "tfidf-lr@2 is now the current tfidf-lr (was tfidf-lr@1)" in ANSI.sub("", second.stdout)
    again = cli("models", "promote", "tfidf-lr@latest")  # already current: nothing recorded
    assert again.exit_code == 0 and "already the current" in again.stdout
    back = cli("models", "promote", "tfidf-lr@1", "--annotator", "bob")
    assert back.exit_code == 0, back.output

    history = _json(cli("models", "history", "--json"))
    assert [(h["model"], h["previous"], h["promoted_by"], h["note"]) for h in history] == [
        ("tfidf-lr@1", None, "carol", None),
        ("tfidf-lr@2", "tfidf-lr@1", "alice", "more data"),
        ("tfidf-lr@1", "tfidf-lr@2", "bob", None),
    ]
    stamps = [h["promoted_at"] for h in history]
    assert stamps == sorted(stamps)
    assert _json(cli("models", "history", "--family", "student", "--json")) == []

    table = ANSI.sub("", cli("models", "history").stdout)
    rows = [line for line in table.splitlines() if "tfidf-lr@" in line]
    assert [("carol" in r, "alice" in r, "bob" in r) for r in rows] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ]
    assert "more data" in rows[1]


def test_show_prints_the_input_threshold_ece_and_reliability(trained) -> None:  # type: ignore[no-untyped-def]
    cli, first, _ = trained
    shown = _json(cli("models", "show", "tfidf-lr@1", "--json"))
    decision = shown["decision"]
    assert shown["name"] == "tfidf-lr@1" and shown["threshold"] == decision["threshold"]
    assert decision["objective"] == "f1" and decision["chosen_on"] == "dev:gt-dev"
    assert decision["n"] == first["metrics"]["dev"]["items_with_final_label"]
    assert len(decision["reliability"]) == 10
    assert sum(b["n"] for b in decision["reliability"]) == decision["n"]
    assert shown["input"]["field"] == "model_input" and shown["input"]["requested"] == "auto"
    model_rows = [s for s in shown["scores"] if not s["rules"]]
    assert [s["role"] for s in model_rows] == ["dev", "eval", "out_of_fold"]
    rules_rows = [s for s in shown["scores"] if s["rules"]]  # each beside the model's row
    assert [(s["role"], s["labeler"]) for s in rules_rows] == [
        (role, "keyword@5") for role in ("dev", "eval", "out_of_fold")
    ]
    assert shown["train_total"] == first["counts"]["train_total"]

    text = ANSI.sub("", cli("models", "show", "tfidf-lr@1").stdout)
    assert f"perf iff P(perf) >= {decision['threshold']:.4g}" in text
    assert f"ECE {decision['ece']:.3f}" in text
    assert "Reliability on dev:gt-dev" in text and "0.9-1.0" in text
    assert "observed perf rate" in text and "message || diff" in text
    floor = decision["floor"]  # the default rule floor: its items are told apart
    assert floor["n"] + floor["model_n"] == decision["n"]
    assert f"the rule floor decided {floor['n']}" in text.replace("\n", " ")
    # without a dev set a TF-IDF model chooses on its out-of-fold scores
    second = _json(cli("models", "show", "tfidf-lr@latest", "--json"))
    assert second["name"] == "tfidf-lr@2" and second["decision"]["chosen_on"] == "out_of_fold"
    assert cli("models", "promote", "tfidf-lr@1").exit_code == 0
    assert _json(cli("models", "show", "tfidf-lr@current", "--json"))["current"] is True
    assert "no model 'tfidf-lr@7'" in _error_line(cli("models", "show", "tfidf-lr@7"))
    assert "FAMILY@N" in _error_line(cli("models", "show", "tfidf-lr"), code=2)
