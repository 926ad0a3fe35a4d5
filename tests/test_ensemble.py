"""``ensemble@N``: the combiner chosen on dev, the registry, predict and eval through the
CLI, members reading their own fields, the label-model route without labels."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from engines.labelers.base import Prediction, input_fields, p_perf, run_labeler
from engines.labelers.ensemble import EnsembleLabeler, best_threshold, choose_combiner
from tests.ensemble_data import load_corpus

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def corpus(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    load_corpus(cli, tmp_path / "data")
    assert cli("train", "--kind", "tfidf-lr", "--votes", "tr", "--dev", "dev").exit_code == 0
    return cli


def test_ensemble_trains_resolves_predicts_and_evaluates(corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trained = _json(corpus("train", "--kind", "ensemble", "--dev", "dev", "--eval", "ev", "--json"))
    assert trained["model"] == "ensemble@1"
    assert trained["params"]["members"] == ["keyword@5", "heuristics@1", "tfidf-lr@1"]
    spec = json.loads((Path(trained["path"]) / "ensemble.json").read_text())
    assert [m["name"] for m in spec["members"]] == trained["params"]["members"]
    assert spec["members"][0]["vote_only"] and not spec["members"][2]["vote_only"]
    cv = spec["cv_f1"]
    assert {"keyword@5", "heuristics@1", "tfidf-lr@1", "mean", "stack(C=1)"} <= set(cv)
    members = [cv[m] for m in trained["params"]["members"]]
    assert cv[spec["chosen"]] == max(cv.values()) >= max(members)  # never below a member
    assert 0.0 < spec["threshold"] < 1.0

    predicted = _json(corpus("predict", "ev", "--labeler", "ensemble@latest", "--json"))
    assert predicted["labeler"] == "ensemble@1" and predicted["predicted"] == 12
    scores = _json(
        corpus("eval", "ev", "--labeler", "ensemble@1", "--labeler", "keyword@5", "--json")
    )
    ens, keyword = scores["labelers"]
    assert ens["items_missing_prediction"] == 0
    assert ens["per_class"]["perf"]["f1"] >= keyword["per_class"]["perf"]["f1"]
    listed = corpus("models", "list")
    assert listed.exit_code == 0 and "ensemble@1" in listed.output


def test_models_show_gives_an_ensembles_members_combiner_and_candidates(corpus) -> None:  # type: ignore[no-untyped-def]
    trained = _json(corpus("train", "--kind", "ensemble", "--dev", "dev", "--json"))
    spec = json.loads((Path(trained["path"]) / "ensemble.json").read_text())
    shown = corpus("models", "show", "ensemble@1")
    assert shown.exit_code == 0, shown.output
    text = " ".join(ANSI.sub("", shown.stdout).split())
    assert "members: keyword@5, heuristics@1, tfidf-lr@1;" in text
    assert f"combiner chosen by {spec['folds']}-fold CV on dev ({spec['dev_items']} items)" in text
    assert f"decision: perf iff P(perf) > {spec['threshold']:.4g}; combiner: " in text
    assert "cross-validated F1(perf) on dev" in text and "stack(C=10)" in text
    assert "None" not in text and "nothing recorded" not in text
    assert "before thresholds were chosen" not in text and "message || diff" not in text
    data = _json(corpus("models", "show", "ensemble@1", "--json"))
    ens = data["ensemble"]
    assert [m["name"] for m in ens["members"]] == trained["params"]["members"]
    assert (ens["chosen"], ens["cv_f1"]) == (spec["chosen"], spec["cv_f1"])
    assert ens["threshold"] == data["threshold"] == spec["threshold"]
    assert ens["combiner"]["kind"] == spec["combiner"]["kind"] and ens["error"] is None

    voted = _json(corpus("train", "--kind", "ensemble", "--json"))  # no --dev: label model
    text = " ".join(ANSI.sub("", corpus("models", "show", voted["model"]).stdout).split())
    assert "label model fitted on" in text and "Dawid-Skene label model" in text


def test_vote_combiner_fits_the_label_model_without_labels(corpus) -> None:  # type: ignore[no-untyped-def]
    two = corpus("train", "--kind", "ensemble", "--members", "keyword@1,tfidf-lr@latest")
    assert two.exit_code == 1 and "at least three members" in ANSI.sub("", two.stderr)
    result = corpus("train", "--kind", "ensemble")  # defaults, no --dev
    assert result.exit_code == 0, result.output
    text = ANSI.sub("", result.output)
    assert "no --dev set" in text and "Dawid-Skene" in text and "unlabeled commits" in text
    predicted = _json(corpus("predict", "ev", "--labeler", "ensemble@1", "--json"))
    assert predicted["predicted"] == 12 and set(predicted["labels"]) == {"perf", "non-perf"}


def test_bad_member_names_refuse_in_one_line(corpus) -> None:  # type: ignore[no-untyped-def]
    for members, expected in (
        ("keyword@1,nope@3", "member nope@3"),
        ("student@latest", "no student is registered"),
        ("teacher:gpt", "teacher answers"),
        ("keyword@5,keyword@latest", "named twice"),
    ):
        result = corpus("train", "--kind", "ensemble", "--members", members, "--dev", "dev")
        message = ANSI.sub("", result.stderr).strip()
        assert result.exit_code == 1 and expected in message, message
        assert len(message.splitlines()) == 1 and "Traceback" not in result.output


def test_chosen_combiner_is_never_below_its_best_member_on_crafted_rows() -> None:
    # member 0 right on perf, member 1 right on non-perf; neither alone is perfect
    truth = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0] * 2
    rows = [[0.9, 0.9 if t else 0.6] if i % 3 else [0.4, 0.8] for i, t in enumerate(truth)]
    choice = choose_combiner(rows, truth, ["a@1", "b@1"], [False, False], seed=1)
    assert choice.cv_f1[choice.candidate.label(["a@1", "b@1"])] >= max(
        choice.cv_f1["a@1"], choice.cv_f1["b@1"]
    )
    assert best_threshold([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == pytest.approx(0.5)


class _Recorder:
    """A member that records what it was given and says perf for texts with 'fast'."""

    def __init__(self, name: str, field: str) -> None:
        self.name = name
        self.input_field = field
        self.seen: list[str] = []

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        self.seen.extend(texts)
        return [Prediction("perf" if "fast" in t else "non-perf", 1.0, {}) for t in texts]


def test_members_reading_different_fields_get_their_own_texts() -> None:
    a, b = _Recorder("a@1", "message"), _Recorder("b@1", "model_input")
    spec = {
        "members": [{"name": "a@1", "vote_only": True}, {"name": "b@1", "vote_only": True}],
        "combiner": {"kind": "mean"},
        "threshold": 0.5,
    }
    ens = EnsembleLabeler("", "ensemble@9", [a, b], spec)
    assert input_fields(ens) == ("message", "model_input")
    texts = {"message": ["make it fast", "docs"], "model_input": ["m1||diff", "m2||fast"]}
    found = run_labeler(ens, lambda f: texts[f])
    assert a.seen == texts["message"] and b.seen == texts["model_input"]
    assert [p.details["members"] for p in found] == [
        {"a@1": 1.0, "b@1": 0.0},
        {"a@1": 0.0, "b@1": 1.0},
    ]
    assert all(p_perf(p) == 0.5 and p.label == "non-perf" for p in found)
    # a plain labeler is given its one field
    single = _Recorder("c@1", "message")
    run_labeler(single, lambda f: texts[f])
    assert single.seen == texts["message"]
    with pytest.raises(ValueError, match="differ"):
        EnsembleLabeler("", "ensemble@9", [b, a], spec)
