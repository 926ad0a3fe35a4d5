"""TF-IDF baselines: fitting, repository-grouped out-of-fold scores, saving and loading,
and their accuracy on the shared labeled commit messages when those are present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.labelers import tfidf
from engines.labelers.base import NON_PERF, PERF
from tests.conftest import SHARED_DATA

PERF_WORDS = ["speed up", "faster", "reduce allocations in", "cache", "avoid copying in"]
OTHER_WORDS = ["fix typo in", "update docs for", "rename", "add test for", "bump version of"]
DATA = SHARED_DATA / "perf-commit-messages"


def _corpus(n: int = 60) -> tuple[list[str], list[int], list[str]]:
    texts, labels, groups = [], [], []
    for i in range(n):
        perf = i % 2 == 0
        words = PERF_WORDS if perf else OTHER_WORDS
        texts.append(f"{words[i % len(words)]} module{i % 7} handler")
        labels.append(int(perf))
        groups.append(f"repo{i % 6}")
    return texts, labels, groups


@pytest.mark.parametrize("kind", tfidf.KINDS)
def test_fit_save_load_predict(kind: str, tmp_path: Path) -> None:
    texts, labels, _ = _corpus()
    model = tfidf.fit(kind, texts, labels)
    tfidf.save(model, tmp_path / "m", {"kind": kind, "input_field": "message"})
    labeler = tfidf.TfidfLabeler(tmp_path / "m", f"tfidf-{kind}@1")
    assert labeler.input_field == "message"
    got = labeler.predict(["speed up module3 handler", "fix typo in module3 handler", ""])
    assert [p.label for p in got[:2]] == [PERF, NON_PERF]
    assert all(0.5 <= p.score <= 1.0 for p in got) and "p_perf" in got[0].details
    with pytest.raises(TypeError):
        labeler.predict("one string")  # type: ignore[arg-type]


def test_out_of_fold_never_predicts_an_item_with_a_model_that_saw_its_repository() -> None:
    texts, labels, groups = _corpus()
    # a text that is perf only in repo0: a model trained with repo0 would know it
    texts = [f"quirk{g}" if g == "repo0" else t for t, g in zip(texts, groups, strict=True)]
    labels = [1 if g == "repo0" else y for y, g in zip(labels, groups, strict=True)]
    scores = tfidf.out_of_fold("lr", texts, labels, groups, folds=5)
    assert len(scores) == len(texts)
    # repo0's "quirk" token is unseen in its own fold, so no confident perf call from it
    repo0 = [s for s, g in zip(scores, groups, strict=True) if g == "repo0"]
    full = tfidf.positive_scores(tfidf.fit("lr", texts, labels), [texts[0]])[0]
    assert max(repo0) < full


def test_out_of_fold_refuses_a_class_with_one_example() -> None:
    with pytest.raises(ValueError, match="two examples"):
        tfidf.out_of_fold("svm", ["a", "b", "c"], [1, 0, 0])


def test_fit_refuses_one_class_and_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="both classes"):
        tfidf.fit("lr", ["a", "b"], [1, 1])
    with pytest.raises(ValueError, match="unknown"):
        tfidf.family("forest")


def _read(path: Path) -> tuple[list[str], list[int]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r["commit_message"] for r in rows], [int(r["target"]) for r in rows]


@pytest.mark.skipif(not DATA.is_dir(), reason=f"labeled commit messages not found at {DATA}")
def test_tfidf_beats_chance_clearly_on_the_shared_test_split() -> None:
    train_x, train_y = _read(DATA / "train.jsonl")
    test_x, test_y = _read(DATA / "test.jsonl")
    model = tfidf.fit("lr", train_x, train_y)
    predicted = [int(p >= 0.5) for p in tfidf.positive_scores(model, test_x)]
    tp = sum(1 for t, p in zip(test_y, predicted, strict=True) if t == p == 1)
    fp = sum(1 for t, p in zip(test_y, predicted, strict=True) if t == 0 and p == 1)
    fn = sum(1 for t, p in zip(test_y, predicted, strict=True) if t == 1 and p == 0)
    f1 = 2 * tp / (2 * tp + fp + fn)
    assert f1 > 0.75
