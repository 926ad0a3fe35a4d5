"""``curator train --weak LABELER``: a labeler's stored predictions on unvoted commits as
weighted training examples (TF-IDF sample weights, the student's weighted loss)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engines.labelers import tfidf
from store import open_store
from store.labeling_inputs import commit_item_ids
from store.predictions import add_predictions
from store.records import PredictionRow
from store.teaching import commit_texts
from tests.ensemble_data import load_corpus

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def weak_corpus(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The corpus with an invented labeler ``flip@1`` that says the opposite of the
    messages' real class on every unvoted commit (so what is learned is visibly its)."""
    load_corpus(cli, tmp_path / "data")
    with open_store(tmp_path / "cli.db") as store:
        ids = commit_item_ids(store, unvoted_only=True)
        texts = commit_texts(store, ids, "message")
        rows = []
        for i in ids:
            perf_like = any(
                w in texts[i] for w in ("Speed", "alloc", "bitwise", "copying", "faster", "Hoist")
            )
            label = "non-perf" if perf_like else "perf"
            rows.append((i, PredictionRow("flip@1", label, 0.9 if i % 5 else 0.6, {})))
        add_predictions(store, rows)
    return cli, len(ids), sum(1 for i in ids if i % 5)


def test_weak_only_tfidf_learns_the_weak_labels(weak_corpus) -> None:  # type: ignore[no-untyped-def]
    cli, unvoted, confident = weak_corpus
    assert unvoted == 24
    trained = _json(
        cli(
            "train",
            "--kind",
            "tfidf-lr",
            "--weak",
            "flip@latest",
            "--eval",
            "dev",
            "--rule-floor",
            "none",
            "--json",
        )  # no rule floor: what is scored is what the model learned
    )
    counts = trained["counts"]
    assert counts["origins"] == {"weak": confident}
    assert (
        counts["weak"]["labeler"] == "flip@1"
        and counts["weak"]["below_confidence"] == 24 - confident
    )
    assert counts["weak"]["weight"] == 0.3
    # it learned the inverted labels: on dev (real labels) it is mostly wrong (dev is the
    # eval set here: a dev set would choose the decision threshold and undo the flip)
    assert trained["metrics"]["eval"]["accuracy"] < 0.3

    limited = _json(
        cli("train", "--kind", "tfidf-lr", "--weak", "flip@1", "--weak-limit", "6", "--json")
    )
    assert limited["counts"]["origins"] == {"weak": 6}


def test_weak_examples_join_human_votes_with_their_weight(weak_corpus) -> None:  # type: ignore[no-untyped-def]
    cli = weak_corpus[0]
    human = _json(cli("train", "--kind", "tfidf-lr", "--votes", "tr", "--dev", "dev", "--json"))
    both = _json(
        cli(
            "train", "--kind", "tfidf-lr", "--votes", "tr", "--weak", "flip@1",
            "--weak-weight", "1", "--weak-min-confidence", "0.5", "--dev", "dev", "--json",
        )
    )  # fmt: skip
    assert set(both["counts"]["origins"]) == {"human", "weak"}
    assert both["counts"]["origins"]["weak"] == 24
    # the weak labels contradict the votes, and pull the model's dev accuracy down
    assert both["metrics"]["dev"]["accuracy"] < human["metrics"]["dev"]["accuracy"]
    zero = _json(
        cli(
            "train", "--kind", "tfidf-lr", "--votes", "tr", "--weak", "flip@1",
            "--weak-weight", "0", "--dev", "dev", "--json",
        )
    )  # fmt: skip
    assert zero["counts"]["origins"] == {"human": human["counts"]["train_total"]}
    assert zero["metrics"]["dev"]["accuracy"] == human["metrics"]["dev"]["accuracy"]
    only_zero = cli("train", "--kind", "tfidf-lr", "--weak", "flip@1", "--weak-weight", "0")
    assert only_zero.exit_code == 1 and "no training examples" in ANSI.sub("", only_zero.stderr)
    missing = cli("train", "--kind", "tfidf-lr", "--weak", "nobody@1")
    assert missing.exit_code == 1 and "no predictions by nobody@1" in ANSI.sub("", missing.stderr)


def test_weak_labels_that_give_no_example_say_why(weak_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli = weak_corpus[0]
    with open_store(tmp_path / "cli.db") as store:  # a labeler heard only on voted commits
        voted = [i for i in commit_item_ids(store) if i not in commit_item_ids(store, True)]
        add_predictions(store, [(i, PredictionRow("voted@1", "perf", 0.9, {})) for i in voted])
    for weak, extra, why in (
        ("voted@1", (), f"{len(voted)} on commits someone voted on or in --dev/--eval"),
        ("flip@1", ("--weak-min-confidence", "0.95"), "24 scored below 0.95"),
    ):
        result = cli("train", "--kind", "tfidf-lr", "--votes", "tr", "--weak", weak, *extra)
        assert result.exit_code == 0, result.output
        warning = " ".join(ANSI.sub("", result.stderr).split())
        assert f"warning: --weak {weak}: none of its " in warning and f"({why})" in warning
    teacher = cli("train", "--kind", "tfidf-lr", "--votes", "tr", "--weak", "teacher:x")
    message = ANSI.sub("", teacher.stderr)
    assert teacher.exit_code == 1 and "curator predict" not in message
    assert "`curator teach --unlabeled --model x`" in message


def test_tfidf_sample_weight_changes_the_fit() -> None:
    texts = ["fast path", "fast lane", "slow docs", "slow notes", "fast docs"]
    labels = [1, 1, 0, 0, 0]
    probe = ["fast docs"]
    light = tfidf.fit("lr", texts, labels, sample_weight=[1, 1, 1, 1, 0.01])
    heavy = tfidf.fit("lr", texts, labels, sample_weight=[1, 1, 1, 1, 50])
    assert tfidf.positive_scores(heavy, probe)[0] < tfidf.positive_scores(light, probe)[0] - 0.1


def test_student_loss_is_the_weighted_mean() -> None:
    torch = pytest.importorskip("torch")
    from engines.labelers.student.train import soft_cross_entropy, weighted_soft_cross_entropy

    logits = torch.tensor([[0.0, 2.0], [1.0, -1.0]])
    targets = torch.tensor([1.0, 1.0])
    first = soft_cross_entropy(logits[:1], targets[:1])
    weighted = weighted_soft_cross_entropy(logits, targets, torch.tensor([1.0, 0.0]))
    assert float(weighted) == pytest.approx(float(first))
    even = weighted_soft_cross_entropy(logits, targets, torch.tensor([0.3, 0.3]))
    assert float(even) == pytest.approx(float(soft_cross_entropy(logits, targets)))
