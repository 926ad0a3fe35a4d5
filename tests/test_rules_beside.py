"""A trained model's scores come with the keyword rules' on the same items (dev set,
eval set, held-out slice, out of fold), and the CLI says when the model is below them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from annotation.importing import import_items_file, import_votes_file
from curator.training import TrainRequest, run_training
from engines.commits.representation import model_input
from engines.labelers.calibration import HOLDOUT_NEAR_TIE
from engines.labelers.student import TrainConfig, read_meta
from store import Store
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _f1(scores: dict) -> float:
    return scores["per_class"]["perf"]["f1"]


def test_out_of_fold_scores_come_with_the_rules_on_the_same_items(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    trained = cli("train", "--kind", "tfidf-lr", "--votes", "gt", "--json")
    assert trained.exit_code == 0, trained.output
    shown = json.loads(cli("models", "show", "tfidf-lr@1", "--json").stdout)
    rows = {(s["role"], s["rules"]): s for s in shown["scores"]}
    model, rules = rows[("out_of_fold", False)], rows[("out_of_fold", True)]
    assert model["labeler"] == "tfidf-lr@1" and rules["labeler"] == "keyword@5"
    assert rules["items"] == model["items"]
    # the same figure `curator eval` gives the rules over the set's settled labels
    evaluated = cli("eval", "gt", "--labeler", "keyword@5", "--json")
    assert evaluated.exit_code == 0, evaluated.output
    [scored] = json.loads(evaluated.stdout)["labelers"]
    assert rules["f1"] == _f1(scored)
    assert rules["items"] == scored["items_predicted"]
    plain = ANSI.sub("", cli("models", "show", "tfidf-lr@1").stdout)
    assert "keyword@5 (same items)" in plain


def _write_items(path: Path, rows: list[tuple[str, str]]) -> None:
    lines = [
        json.dumps(
            {
                "id": f"{path.stem}-{k}",
                "repo": f"https://example.org/{path.stem}/r{k % 3}",
                "sha": f"{k:040x}",
                "language": "python",
                "file": "m.py",
                "message": message,
                "diff": "@@ -1 +1 @@\n-a\n+b\n",
            }
        )
        for k, (message, _) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n")
    votes = path.with_suffix(".csv")
    votes.write_text(
        "item,annotator,label\n"
        + "".join(
            f"{path.stem}-{k},{who},{label}\n"
            for k, (_, label) in enumerate(rows)
            for who in ("ann", "bea")
        )
    )


def test_a_model_below_the_rules_on_its_dev_set_is_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # trained without the floor on votes that contradict the rules, scored on a dev set
    # the rules get right: no threshold mends a model that ranks the dev set backwards
    contrary = [(f"Speed up parser stage {k}", "non-perf") for k in range(12)]
    contrary += [(f"Update changelog entry {k}", "perf") for k in range(12)]
    _write_items(tmp_path / "train.jsonl", contrary)
    fair = [(f"Speed up parser stage {k}", "perf") for k in range(20, 28)]
    fair += [(f"Update changelog entry {k}", "non-perf") for k in range(20, 28)]
    _write_items(tmp_path / "dev.jsonl", fair)
    for name in ("train", "dev"):
        assert cli("import", "items", str(tmp_path / f"{name}.jsonl"), "--set", name).exit_code == 0
        assert cli("import", "votes", str(tmp_path / f"{name}.csv")).exit_code == 0
    trained = cli(
        "train", "--kind", "tfidf-lr", "--votes", "train", "--dev", "dev", "--rule-floor", "none"
    )
    assert trained.exit_code == 0, trained.output
    text = ANSI.sub("", trained.stdout)
    assert "keyword@5 (same items)" in text
    assert re.search(
        r"warning: tfidf-lr@1 is below keyword@5 on dev \(F1 [\d.]+ against 1\.000", text
    )


def test_the_held_out_slice_of_a_student_is_scored_beside_the_rules(store: Store) -> None:
    import_items_file(store, SAMPLE / "items.jsonl", "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")
    config = TrainConfig(epochs=1, max_length=32, batch_size=8, holdout=0.3, seed=3)
    outcome = run_training(
        store, TrainRequest(kind="student", vote_sets=("gt-sample",), config=config)
    )
    assert outcome.model is not None
    held, rules = outcome.metrics["holdout"], outcome.metrics["rules"]["holdout"]
    assert (
        held["items_predicted"]
        == rules["items_predicted"]
        == outcome.counts["held_out"]["perf"] + outcome.counts["held_out"]["non-perf"]
    )
    assert rules["labeler"] == "keyword@5"
    assert "training" in outcome.metrics and "holdout" not in outcome.metrics["training"]
    decision = read_meta(outcome.model.path)["decision"]
    if decision["chosen_on"] == "holdout":  # chosen there: near ties were counted as ties
        assert decision["near_tie"] == HOLDOUT_NEAR_TIE
    else:  # too few held-out votes to choose on: the default is kept, with no near ties
        assert decision["chosen_on"].startswith("default") and "near_tie" not in decision
