"""Adaptation on small data: every student keeps a replay sample, a warm start reads the
old student's weights and mixes its replay share in, a missing replay file is said in
one line, and ``curator train --curve`` measures a learning curve per size and order
on a repository-disjoint eval set (and refuses one that is not)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from curator.adaptation import CurvePoint, curve_points, curve_sizes, ordered
from curator.training import TrainingRefused, TrainRequest, run_training
from engines.labelers.student import StudentLabeler, TrainConfig, hard_example
from engines.labelers.student.replay import (
    REPLAY_FILE,
    read_replay,
    replay_sample,
    write_replay,
)
from store import Store, open_store
from store.models import get_model, list_models
from store.teaching import commit_texts

TINY = ("--epochs", "1", "--max-length", "32", "--batch", "8", "--lr", "1e-3")
SOURCE_ARGS = (*TINY, "--layers", "1")
SOURCE = TrainConfig(epochs=1, batch_size=8, max_length=32, lr=1e-3, layers=1, max_steps=2)
FROZEN = TrainConfig(epochs=1, batch_size=8, max_length=32, lr=1e-12, max_steps=1)


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _eval_texts(store: Store) -> list[str]:
    from store.sets import get_set, set_item_ids

    found = get_set(store, "gt-eval")
    assert found is not None
    return list(commit_texts(store, set_item_ids(store, found.id), "model_input").values())


def _probs(store: Store, name: str, texts: list[str]) -> list[float]:
    model = get_model(store, name)
    assert model is not None and model.path
    return StudentLabeler(model.path, name).probabilities(texts)


# The replay file ----------------------------------------------------------------------


def test_replay_file_round_trips_a_seeded_sample_atomically(tmp_path: Path) -> None:
    examples = [hard_example(f"text {i}", i % 2, f"repo-{i % 3}") for i in range(10)]
    assert write_replay(tmp_path, examples, seed=1, limit=4) == 4
    assert [p.name for p in tmp_path.iterdir()] == [REPLAY_FILE]  # no temporary file left
    back = read_replay(tmp_path)
    assert back is not None and len(back) == 4
    assert {(e.text, e.label, e.source) for e in back} <= {
        (e.text, e.label, e.source) for e in examples
    }
    with gzip.open(tmp_path / REPLAY_FILE, "rt", encoding="utf-8") as fh:
        assert set(json.loads(fh.readline())) == {
            "text",
            "label",
            "target",
            "origin",
            "source",
            "message",
            "weight",
        }
    write_replay(tmp_path, examples, seed=1, limit=4)
    assert [e.text for e in read_replay(tmp_path) or []] == [e.text for e in back]  # seeded
    assert read_replay(tmp_path / "nowhere") is None


def test_replay_sample_takes_ratio_times_the_new_examples() -> None:
    replay = [hard_example(f"old {i}", i % 2) for i in range(30)]
    assert len(replay_sample(replay, 10, 0.5, 0)) == 5
    assert len(replay_sample(replay, 10, 2.0, 0)) == 20
    assert len(replay_sample(replay, 10, 5.0, 0)) == 30  # all there is
    assert replay_sample(replay, 10, 0.0, 0) == []
    assert replay_sample(replay, 10, 0.5, 3) == replay_sample(replay, 10, 0.5, 3)
    with pytest.raises(ValueError):
        replay_sample(replay, 10, -1.0, 0)


# Warm starts ------------------------------------------------------------------------


def test_warm_start_loads_the_old_weights_and_mixes_replay(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as store:
        first = run_training(store, TrainRequest(vote_sets=("tr",), config=SOURCE))
        assert first.model is not None and first.model.path
        saved = read_replay(first.model.path)
        # The replay sample keeps the votes the perf prior learned, which it trained without.
        skipped = first.counts.get("prior_learned", {}).get("skipped", 0)
        assert saved is not None and len(saved) == first.counts["train_total"] + skipped

        warm = run_training(
            store,
            TrainRequest(vote_sets=("tr",), config=FROZEN, from_model="student@latest"),
        )
        cold = run_training(
            store, TrainRequest(vote_sets=("tr",), config=replace(FROZEN, layers=1))
        )
        assert warm.model is not None and cold.model is not None
        assert warm.model.params["warm_start"] == "student@1"
        assert warm.notes == []
        new = warm.counts["train_total"]
        replay = warm.counts["replay"]
        assert replay["from"] == "student@1" and replay["ratio"] == 0.5
        assert replay["mixed"] == round(0.5 * new)
        meta = json.loads((Path(warm.model.path or "") / "curator_student.json").read_text())
        assert meta["training"]["examples"] == new + replay["mixed"]

        # its held-out slice is too few votes to choose a threshold on: student@1's is kept
        first_threshold = first.model.params["decision"]["threshold"]
        assert warm.model.params["decision"]["threshold"] == first_threshold
        assert warm.model.params["decision"]["chosen_on"].startswith("from student@1 (holdout: ")

        texts = _eval_texts(store)
        old = _probs(store, "student@1", texts)
        assert _probs(store, warm.model.name, texts) == pytest.approx(old, abs=1e-4)
        assert _probs(store, cold.model.name, texts) != pytest.approx(old, abs=1e-4)

        more = run_training(
            store,
            TrainRequest(vote_sets=("tr",), config=FROZEN, from_model="student@1", replay=100.0),
        )
        assert more.counts["replay"]["mixed"] == len(saved)  # capped at what was saved


def test_a_missing_replay_file_warns_and_warm_starts_without(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert (
        split("train", "--votes", "tr", *TINY, "--layers", "1", "--max-steps", "1").exit_code == 0
    )
    (tmp_path / "models" / "student@1" / REPLAY_FILE).unlink()
    result = split(
        "train",
        "--votes",
        "tr",
        "--from-model",
        "student@1",
        *TINY,
        "--max-steps",
        "1",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert "warning: student@1 has no replay sample: warm start without replay" in " ".join(
        result.stderr.split()
    )
    trained = json.loads(result.stdout)
    assert trained["counts"]["replay"]["mixed"] == 0
    with open_store(tmp_path / "cli.db") as store:
        model = get_model(store, trained["model"])
        assert model is not None and model.params["warm_start"] == "student@1"


def test_warm_start_refusals_are_one_line(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as store:
        with pytest.raises(TrainingRefused, match="no student is registered"):
            run_training(store, TrainRequest(vote_sets=("tr",), from_model="student@latest"))
        with pytest.raises(TrainingRefused, match="takes a student"):
            run_training(store, TrainRequest(vote_sets=("tr",), from_model="keyword@1"))
        with pytest.raises(TrainingRefused, match="no student has been promoted"):
            run_training(store, TrainRequest(vote_sets=("tr",), from_model="student@current"))
        with pytest.raises(TrainingRefused, match="warm-starts students only, not tfidf-lr"):
            run_training(
                store,
                TrainRequest(vote_sets=("tr",), kind="tfidf-lr", from_model="student@latest"),
            )
        assert list_models(store) == []


# The learning curve -------------------------------------------------------------------


def test_orders_and_sizes() -> None:
    examples = [hard_example(f"t{i}", i % 2, item_id=i) for i in range(6)]
    p = [0.9, 0.51, 0.2, 0.45, 0.5, 0.99]
    assert [e.item_id for e in ordered("uncertainty", examples, p, 0)] == [4, 1, 3, 2, 0, 5]
    shuffled = [e.item_id for e in ordered("random", examples, p, 7)]
    assert sorted(shuffled) == list(range(6))
    assert shuffled == [e.item_id for e in ordered("random", examples[::-1], p[::-1], 7)]
    notes: list[str] = []
    assert curve_sizes([50, 2, 4], 5, notes) == [2, 4, 5] and "only 5" in notes[0]
    assert curve_sizes([2, 4], 5, []) == [2, 4]


def test_curve_rows_per_size_and_order_then_the_full_run(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert (
        split("train", "--votes", "tr", *TINY, "--layers", "1", "--max-steps", "2").exit_code == 0
    )
    assert split("models", "promote", "student@1", "--by", "t").exit_code == 0
    args = ("--from-model", "student@current", "--votes", "tr", "--eval", "gt-eval", *TINY)
    got = _json(split("train", "--curve", "2,4", *args, "--max-steps", "1", "--json"))
    curve = got["learning_curve"]
    assert [(p["n"], p["order"]) for p in curve["points"]] == [
        (2, "random"),
        (4, "random"),
        (2, "uncertainty"),
        (4, "uncertainty"),
    ]
    assert curve["start"]["n"] == 0 and curve["from_model"] == "student@1"
    assert all(p["replayed"] == round(0.5 * p["n"]) for p in curve["points"])
    assert got["model"] == "student@2"
    with open_store(tmp_path / "cli.db") as store:
        model = get_model(store, "student@2")
        assert model is not None and model.params["learning_curve"] == curve
        assert model.params["warm_start"] == "student@1"
    assert "started from: student@1 (warm start)" in split("models", "show", "student@2").output
    model_dir = tmp_path / "models" / "student@2"
    assert json.loads((model_dir / "learning_curve.json").read_text()) == curve
    assert json.loads((model_dir / "curator_student.json").read_text())["learning_curve"] == curve
    assert not list((tmp_path / "models").glob(".curve-*"))  # curve runs leave nothing
    assert len(curve_points(curve)) == 6 and isinstance(curve_points(curve)[0], CurvePoint)
    # the first row: the keyword rules on the same eval items, as `curator eval` scores them
    rules = curve["rules"]
    assert (rules["n"], rules["order"]) == (0, "keyword@5 (rules)")
    [scored] = _json(split("eval", "gt-eval", "--labeler", "keyword@5", "--json"))["labelers"]
    assert rules["f1"] == scored["per_class"]["perf"]["f1"]
    assert curve_points(curve)[0].order == "keyword@5 (rules)"

    shown = split("train", "--curve", "3", "--order", "random", "--curve-only", *args)
    assert shown.exit_code == 0, shown.output
    assert "learning curve from student@1 on gt-eval" in shown.stdout
    assert "keyword@5 (rules)" in shown.stdout
    assert "nothing was registered" in shown.stdout
    with open_store(tmp_path / "cli.db") as store:
        assert [m.name for m in list_models(store, "student")] == ["student@1", "student@2"]


def test_curve_refuses_an_eval_set_sharing_repositories(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert (
        split("train", "--votes", "tr", *TINY, "--layers", "1", "--max-steps", "1").exit_code == 0
    )
    refused = split(
        "train",
        "--curve",
        "2",
        "--from-model",
        "student@1",
        "--votes",
        "tr",
        "--eval",
        "gt-sample",
    )
    assert refused.exit_code != 0
    message = " ".join(refused.stderr.split())
    assert "share" in message and "repositories with the new votes (tr;" in message
    assert len(refused.stderr.strip().splitlines()) <= 3  # one line, wrapped at most
    bad = split("train", "--curve", "two", "--from-model", "student@1", "--votes", "tr")
    assert bad.exit_code != 0 and "positive sizes" in bad.stderr
    with open_store(tmp_path / "cli.db") as store:
        assert [m.name for m in list_models(store)] == ["student@1"]


def test_same_repos_scores_a_project_on_its_other_commits(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from store.sets import NewSet, create_set, get_set, set_item_ids

    assert (
        split("train", "--votes", "tr", *TINY, "--layers", "1", "--max-steps", "1").exit_code == 0
    )
    with open_store(tmp_path / "cli.db") as store:
        sample = get_set(store, "gt-sample")
        assert sample is not None
        ids = set_item_ids(store, sample.id)
        for name, part in (("own-a", ids[0::2]), ("own-b", ids[1::2])):
            create_set(store, NewSet(name, "commit", ["perf", "non-perf"], votes_per_item=1), part)
    args = ("--from-model", "student@1", "--votes", "own-a", "--eval", "own-b", *TINY)
    refused = split("train", "--curve", "2", "--curve-only", *args)
    assert refused.exit_code != 0 and "--same-repos" in " ".join(refused.stderr.split())
    plain = split("train", "--votes", "own-a", "--eval", "own-b", *TINY, "--max-steps", "1")
    assert plain.exit_code != 0 and "--same-repos" in " ".join(plain.stderr.split())

    curve = split(
        "train",
        "--curve",
        "2",
        "--curve-only",
        "--order",
        "random",
        *args,
        "--max-steps",
        "1",
        "--same-repos",
        "--json",
    )
    got = _json(curve)["learning_curve"]
    assert got["same_repos"] is True and [p["n"] for p in got["points"]] == [2]

    trained = _json(
        split(
            "train",
            "--votes",
            "own-a",
            "--votes",
            "own-b",
            "--eval",
            "own-b",
            *TINY,
            "--max-steps",
            "1",
            "--layers",
            "1",
            "--same-repos",
            "--json",
        )
    )
    counts = trained["counts"]
    assert counts["shared_repositories"] >= 1
    # own-b's items are what it is scored on: every one of them is dropped from training
    held = counts["held_out"]
    skipped = counts.get("prior_learned", {}).get("skipped", 0)  # the perf prior's own
    learned = counts["train_total"] + skipped + held.get("perf", 0) + held.get("non-perf", 0)
    assert counts["dropped_for_overlap"] >= len(ids[1::2]) - 1
    assert learned == counts["human"]["settled"] - counts["dropped_for_overlap"]
    assert learned <= len(ids[0::2])
