"""Decision thresholds, calibration and input recording: the pure functions
(threshold search, ECE, reliability bins, input mismatch), then trained TF-IDF models
and tiny students that record what they read and decide at their stored threshold, and
the warnings ``curator predict`` and ``curator eval`` print."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from annotation.importing import import_items_file, import_votes_file
from curator.training import TrainRequest, run_training
from engines.commits.representation import model_input
from engines.labelers import tfidf
from engines.labelers.base import NON_PERF, PERF
from engines.labelers.calibration import (
    HOLDOUT_NEAR_TIE,
    choose_threshold,
    decide,
    expected_calibration_error,
    parse_objective,
    reliability,
    verdict,
)
from engines.labelers.inputs import describe, diffs_learned, input_mismatch, resolve_field
from engines.labelers.registry import load_labeler
from engines.labelers.rule_floor import floor_block
from engines.labelers.student import StudentLabeler, TrainConfig, read_meta
from engines.labelers.student.data import hard_example, stratified_holdout
from engines.labelers.student.prior import packaged_prior
from store import Store
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = TrainConfig(epochs=1, batch_size=8, max_length=32, max_steps=2, layers=1, lr=1e-4)


# --- the pure functions -------------------------------------------------------------


def test_ece_of_a_perfectly_calibrated_set_is_zero_and_bins_say_so() -> None:
    probs, labels = [], []
    for p, n, positives in ((0.15, 20, 3), (0.55, 20, 11), (0.95, 20, 19)):
        probs += [p] * n
        labels += [1] * positives + [0] * (n - positives)
    assert expected_calibration_error(probs, labels) == pytest.approx(0.0, abs=1e-9)
    bins = reliability(probs, labels)
    assert len(bins) == 10 and [b["n"] for b in bins] == [0, 20, 0, 0, 0, 20, 0, 0, 0, 20]
    assert bins[1]["observed"] == pytest.approx(0.15) and bins[0]["mean_p"] is None
    # everything predicted 0.9 but only half perf: off by 0.4
    assert expected_calibration_error([0.9] * 10, [1, 0] * 5) == pytest.approx(0.4)
    assert reliability([1.0], [1])[-1]["n"] == 1  # the last bin holds 1.0


def test_precision_objective_picks_the_lowest_threshold_reaching_it() -> None:
    # highest scores first: precision 1, 1, 2/3, 3/4, 3/5, 4/6 as the threshold drops
    probs = [0.95, 0.9, 0.8, 0.7, 0.6, 0.4]
    labels = [1, 1, 0, 1, 0, 1]
    t, met = choose_threshold(probs, labels, "precision:0.75")
    assert met and 0.6 < t <= 0.7  # calls the top four perf: precision 3/4
    t, met = choose_threshold(probs, labels, "precision:0.9")
    assert met and 0.8 < t <= 0.9
    t, met = choose_threshold(probs, [0, 0, 0, 1, 0, 0], "precision:0.9")
    assert not met  # never reached: the threshold of the best precision (1/4) instead
    assert 0.6 < t <= 0.7


def test_f1_objective_takes_the_best_f1_and_breaks_ties_towards_half() -> None:
    probs = [0.1, 0.2, 0.3, 0.35, 0.9]
    labels = [0, 0, 1, 1, 1]
    t, _ = choose_threshold(probs, labels, "f1")
    assert 0.2 < t <= 0.3  # all three positives, no false alarm
    # separable with a gap holding 0.5: exactly 0.5
    assert choose_threshold([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1])[0] == 0.5
    # one class only or no data: the default
    assert choose_threshold([0.3, 0.7], [1, 1]) == (0.5, False)
    assert choose_threshold([], []) == (0.5, False)


def test_near_ties_go_to_the_threshold_nearest_half() -> None:
    # 10 perf, 30 not: nine perf items at 0.9, one at 0.1, one non-perf item at 0.45
    probs = [0.9] * 9 + [0.1] + [0.45] + [0.05] * 29
    labels = [1] * 10 + [0] * 30
    # calling everything from 0.1 up: 10 right, 1 false alarm, F1 20/21 = 0.952 (the best);
    # from 0.5 up: 9 right, 1 missed, F1 18/19 = 0.947, within 0.005 of it
    exact, met = choose_threshold(probs, labels, "f1")
    assert met and 0.05 < exact <= 0.1
    assert choose_threshold(probs, labels, "f1", near_tie=0.01) == (0.5, True)
    assert choose_threshold(probs, labels, "f1", near_tie=0.001)[0] == exact
    block = decide(probs, labels, "f1", "holdout", near_tie=0.01)
    assert block["threshold"] == 0.5 and block["near_tie"] == 0.01
    assert block["f1"] == 18 / 19  # the scores are those at the threshold taken
    assert "near_tie" not in decide(probs, labels, "f1", "holdout")
    # a precision objective is not an F1 choice: near ties change nothing there
    by_precision = choose_threshold(probs, labels, "precision:0.9")
    assert by_precision[0] == exact  # 10 of 11 called are perf
    assert choose_threshold(probs, labels, "precision:0.9", near_tie=0.5) == by_precision


def test_too_few_items_keep_the_fallback_and_enough_are_chosen_on() -> None:
    # 12 perf of 40: every perf item scores above 0.3 (two non-perf ones too)
    probs = [0.9] * 10 + [0.32, 0.31] + [0.35, 0.34] + [0.1] * 26
    labels = [1] * 12 + [0] * 28
    chosen = decide(probs, labels, "f1", "holdout", None, (0.8, "from student@1"))
    assert chosen["chosen_on"] == "holdout" and 0.1 < chosen["threshold"] <= 0.31
    assert chosen["recall"] == 1.0
    few = decide(probs[:20], labels[:20], "f1", "holdout", None, (0.8, "from student@1"))
    assert few["threshold"] == 0.8 and few["objective_met"] is None  # nothing chosen here
    assert few["chosen_on"] == "from student@1 (holdout: 20 items, 12 perf, too few to choose on)"
    assert few["n"] == 20 and few["recall"] == 10 / 12  # the slice's scores at the fallback
    # nine of a class among 60 items is too few as well; without a fallback it is chosen
    nine = decide(probs[3:] + [0.1] * 23, labels[3:] + [0] * 23, "f1", "holdout", None, (0.8, "x"))
    assert nine["threshold"] == 0.8
    assert decide(probs[:20], labels[:20], "f1", "dev")["threshold"] < 0.8


def test_decision_block_holds_threshold_scores_and_calibration() -> None:
    block = decide([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], "f1", "dev:gt-dev")
    assert block["threshold"] == 0.5 and block["chosen_on"] == "dev:gt-dev"
    assert (block["n"], block["f1"], block["precision"], block["recall"]) == (4, 1.0, 1.0, 1.0)
    assert block["ece"] == pytest.approx(0.15) and len(block["reliability"]) == 10
    empty = decide([], [], "precision:0.9")
    assert empty["threshold"] == 0.5 and empty["chosen_on"].startswith("default")
    with pytest.raises(ValueError, match="precision:P"):
        parse_objective("precision:1.5")
    with pytest.raises(ValueError):
        parse_objective("recall")
    assert parse_objective("precision:0.9") == ("precision", 0.9)


def test_the_floor_s_items_and_the_model_s_own_calibration_are_told_apart() -> None:
    # two rule matches (one of them perf) at 1.0, and two items the model decided
    block = decide([1.0, 1.0, 0.2, 0.8], [1, 0, 0, 1], "f1", "holdout", [True, True, False, False])
    assert block["ece"] == pytest.approx((0.5 * 2 + 0.2 + 0.2) / 4)
    assert block["floor"] == {
        "n": 2,
        "observed": 0.5,
        "model_n": 2,
        "model_ece": pytest.approx(0.2),
    }
    assert "floor" not in decide([0.2, 0.8], [0, 1])


def test_verdict_applies_the_threshold_and_keeps_the_belief_in_the_label() -> None:
    high = verdict(0.8, 0.9)
    assert (high.label, high.score, high.details) == (NON_PERF, pytest.approx(0.2), {"p_perf": 0.8})
    assert verdict(0.8, 0.5).label == PERF and verdict(0.9, 0.9).label == PERF
    assert verdict(0.3, 0.2).score == pytest.approx(0.3)


def test_input_resolution_and_mismatch_lines() -> None:
    assert resolve_field("auto", 0) == "message" and resolve_field("auto", 3) == "model_input"
    assert resolve_field("message", 3) == "message"
    with pytest.raises(ValueError):
        resolve_field("diff", 1)
    learned_diffs = {"field": "model_input", "examples_with_diff": 5, "examples_without_diff": 5}
    line = input_mismatch("student@3", {**learned_diffs, "diff_dropout": 0.3}, "model_input", 10, 4)
    assert line and "4 of 10 items here have no diff" in line and "dropout 0.3" in line
    assert input_mismatch("student@3", learned_diffs, "model_input", 10, 0) is None
    forced = input_mismatch("student@3", learned_diffs, "message", 10, 0)
    assert forced == "student@3 learned from message || diff; it reads messages only here"
    never = {"field": "model_input", "examples_with_diff": 0, "examples_without_diff": 9}
    assert "no training example had a diff" in (
        input_mismatch("s@1", never, "model_input", 10, 0) or ""
    )
    # a messages-only model reading messages is fine, whatever the items hold
    assert input_mismatch("s@1", {"field": "message"}, "message", 10, 0) is None
    assert input_mismatch("old@1", {"field": "model_input"}, "model_input", 10, 10) is None


def test_stratified_holdout_keeps_both_classes_on_both_sides() -> None:
    examples = [hard_example(f"t{i}", int(i % 4 == 0)) for i in range(40)]
    train, held = stratified_holdout(examples, 0.15, seed=1)
    assert len(train) + len(held) == 40 and {e.label for e in held} == {0, 1}
    assert sum(e.label for e in held) == round(10 * 0.15) or sum(e.label for e in held) == 2
    assert stratified_holdout(examples, 0.15, seed=1) == (train, held)  # seeded
    assert stratified_holdout(examples[:10], 0.15) == (examples[:10], [])  # too few
    assert stratified_holdout(examples, 0.0) == (examples, [])


# --- trained models -----------------------------------------------------------------


def _items_file(tmp_path: Path, keep_diff: Any) -> Path:
    """The sample items with the diff kept where ``keep_diff(n)`` says so, else blank."""
    rows = [json.loads(x) for x in (SAMPLE / "items.jsonl").read_text().splitlines() if x]
    for n, row in enumerate(rows):
        if not keep_diff(n):
            row["diff"] = ""
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _import(store: Store, tmp_path: Path, keep_diff: Any) -> None:
    import_items_file(store, _items_file(tmp_path, keep_diff), "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")


def test_a_student_on_messages_only_learns_and_reads_messages(store: Store, tmp_path: Path):
    """Without the perf prior (which learned from diffs) a student that saw no diff
    reads messages."""
    _import(store, tmp_path, lambda n: False)
    plain = replace(TINY, prior="none")
    outcome = run_training(store, TrainRequest(vote_sets=("gt-sample",), config=plain))
    assert outcome.model is not None
    params = outcome.model.params
    assert params["input"]["field"] == "message" and params["input"]["requested"] == "auto"
    assert (
        params["input"]["examples_with_diff"] == 0 and params["config"]["input_field"] == "message"
    )
    meta = read_meta(outcome.model.path or "")
    assert meta["input"] == params["input"] and meta["input_field"] == "message"
    # the keyword rules' floor: recorded, and applied to what the rules match only
    assert meta["rule_floor"] == params["rule_floor"] == floor_block("keyword")
    student = StudentLabeler(outcome.model.path or "", "s", batch_size=8)
    ruled, silent = "Speed up the tokenizer by caching lookups", "Update the contributor list"
    model_only = student.model_probabilities([ruled, silent])
    assert model_only[0] < 1.0
    assert student.probabilities([ruled, silent]) == [1.0, model_only[1]]
    # a held-out slice of six votes is too few to choose on: the default is kept
    assert meta["decision"] == params["decision"]
    assert params["decision"]["chosen_on"] == (
        "default (holdout: 6 items, 3 perf, too few to choose on)"
    )
    assert params["decision"]["threshold"] == 0.5
    held = outcome.counts["held_out"]
    assert held["perf"] >= 1 and held["non-perf"] >= 1
    assert outcome.counts["train_total"] == sum(outcome.counts["train"].values())
    labeler = load_labeler(store, outcome.model.name)
    assert labeler.input_field == "message"
    assert labeler.threshold == params["decision"]["threshold"]  # type: ignore[attr-defined]


def test_a_student_from_the_prior_reads_diffs_its_own_votes_lacked(
    store: Store, tmp_path: Path
) -> None:
    """The packaged prior learned from message || diff, so a student that starts from it
    reads message || diff even when none of its votes had a diff, records why, and is
    not warned about diffs it will see."""
    _import(store, tmp_path, lambda n: False)
    outcome = run_training(store, TrainRequest(vote_sets=("gt-sample",), config=TINY))
    assert outcome.model is not None
    record = outcome.model.params["input"]
    shipped = packaged_prior()
    assert shipped is not None and shipped.meta["examples_with_diff"] > 0
    assert record["field"] == "model_input" and record["examples_with_diff"] == 0
    assert record["prior_examples_with_diff"] == shipped.meta["examples_with_diff"]
    assert record["diff_dropout"] == 0.0  # no example of its own had a diff to drop
    assert f"its prior learned from {shipped.meta['examples_with_diff']:,} diffs" in describe(
        record
    )
    assert input_mismatch("s", record, "model_input", 10, 0) is None
    assert load_labeler(store, outcome.model.name).input_field == "model_input"
    assert resolve_field("auto", 0, 5) == "model_input" and resolve_field("message", 0, 5) == (
        "message"
    )
    # without that record, diffs a model never saw are still warned of
    unseen = {k: v for k, v in record.items() if k != "prior_examples_with_diff"}
    assert "no training example had a diff" in (
        input_mismatch("s", unseen, "model_input", 10, 0) or ""
    )


def test_a_warm_start_reads_what_the_model_it_starts_from_read(
    store: Store, tmp_path: Path
) -> None:
    """Warm-started on votes without diffs, a student keeps the reading of the model it
    starts from: message || diff after one that read diffs (through the prior here),
    recording how many that model learned from; messages after one that read messages."""
    _import(store, tmp_path, lambda n: False)
    reader = run_training(store, TrainRequest(vote_sets=("gt-sample",), config=TINY))
    plain = run_training(
        store, TrainRequest(vote_sets=("gt-sample",), config=replace(TINY, prior="none"))
    )
    assert reader.model is not None and plain.model is not None
    assert plain.model.params["input"]["field"] == "message"
    warm = replace(TINY, layers=None)
    after_reader = run_training(
        store, TrainRequest(vote_sets=("gt-sample",), config=warm, from_model=reader.model.name)
    )
    after_plain = run_training(
        store, TrainRequest(vote_sets=("gt-sample",), config=warm, from_model=plain.model.name)
    )
    assert after_reader.model is not None and after_plain.model is not None
    record = after_reader.model.params["input"]
    started = diffs_learned(reader.model.params["input"])
    assert started == reader.model.params["input"]["prior_examples_with_diff"] > 0
    assert record["field"] == "model_input" and record["examples_with_diff"] == 0
    assert record["start_examples_with_diff"] == started
    assert "prior_examples_with_diff" not in record  # a warm start does not apply the prior
    assert f"the model it started from learned from {started:,} diffs" in describe(record)
    assert input_mismatch("s", record, "model_input", 10, 0) is None
    assert load_labeler(store, after_reader.model.name).input_field == "model_input"
    assert after_plain.model.params["input"]["field"] == "message"
    assert "start_examples_with_diff" not in after_plain.model.params["input"]
    assert diffs_learned(plain.model.params["input"]) == 0
    # an explicit --input still decides
    told = run_training(
        store,
        TrainRequest(
            vote_sets=("gt-sample",),
            config=replace(warm, input_field="message"),
            from_model=reader.model.name,
        ),
    )
    assert told.model is not None and told.model.params["input"]["field"] == "message"


def test_a_student_on_mixed_inputs_reads_message_and_diff_with_dropout(
    store: Store, tmp_path: Path
):
    _import(store, tmp_path, lambda n: n % 2 == 0)
    outcome = run_training(store, TrainRequest(vote_sets=("gt-sample",), config=TINY))
    assert outcome.model is not None
    record = outcome.model.params["input"]
    assert record["field"] == "model_input" and record["diff_dropout"] == 0.3
    skipped = outcome.counts.get("prior_learned", {}).get("skipped", 0)  # the prior's own
    gathered = (
        outcome.counts["train_total"]
        + skipped
        + sum(v for k, v in outcome.counts["held_out"].items() if k != "fraction")
    )
    assert record["examples_with_diff"] + record["examples_without_diff"] == gathered
    assert 15 <= record["examples_with_diff"] <= 20 and record["examples_without_diff"] >= 15
    assert load_labeler(store, outcome.model.name).input_field == "model_input"


def test_a_stored_threshold_decides_for_the_labeler(store: Store, tmp_path: Path) -> None:
    _import(store, tmp_path, lambda n: True)
    outcome = run_training(store, TrainRequest(kind="tfidf-lr", vote_sets=("gt-sample",)))
    assert outcome.model is not None and outcome.model.path
    decision = outcome.model.params["decision"]
    assert decision["chosen_on"] == "out_of_fold" and decision["objective"] == "f1"
    record = outcome.model.params["input"]
    assert (
        record["field"] == "model_input"
        and record["message_copies"] == outcome.counts["train_total"]
    )
    texts = ["Speed up the parser by caching tokens", "Fix a typo in the README"]
    p = tfidf.TfidfLabeler(outcome.model.path, "x").probabilities(texts)
    for threshold in (p[0], p[0] + 1e-4):  # at p: perf; just above: non-perf
        tfidf.update_meta(outcome.model.path, decision={**decision, "threshold": threshold})
        first = load_labeler(store, outcome.model.name).predict(texts)[0]
        assert first.label == (PERF if threshold <= p[0] else NON_PERF)
        assert first.details["p_perf"] == pytest.approx(p[0], abs=1e-6)
        assert first.score == pytest.approx(p[0] if first.label == PERF else 1 - p[0], abs=1e-6)


def test_precision_objective_is_recorded(store: Store, tmp_path: Path) -> None:
    _import(store, tmp_path, lambda n: True)
    config = TrainConfig(threshold_objective="precision:0.9")
    outcome = run_training(
        store, TrainRequest(kind="tfidf-svm", vote_sets=("gt-sample",), config=config)
    )
    assert outcome.model is not None
    assert outcome.model.params["decision"]["objective"] == "precision:0.9"


# --- the CLI: thresholds in predict and eval, mismatch warnings ----------------------


def _json(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_predict_and_eval_use_the_threshold_and_warn_on_diffless_items(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    items = _items_file(tmp_path, lambda n: n % 2 == 0)
    assert cli("import", "items", str(items), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    made = cli("set", "split", "--from-set", "gt-sample", "--into", "tr:60,gt-dev:20,gt-eval:20")
    assert made.exit_code == 0, made.output
    trained = _json(
        cli(
            "train",
            "--kind",
            "tfidf-lr",
            "--votes",
            "tr",
            "--dev",
            "gt-dev",
            "--rule-floor",
            "none",
            "--json",
        )
    )
    path = Path(trained["path"])
    meta = tfidf.read_meta(path)
    assert meta["decision"]["chosen_on"] == "dev:gt-dev" and meta["input"]["field"] == "model_input"
    tfidf.update_meta(path, decision={**meta["decision"], "threshold": 1.0})  # nothing reaches it

    predicted = cli("predict", "gt-eval", "--labeler", "tfidf-lr@1", "--json")
    assert predicted.exit_code == 0, predicted.output
    warning = ANSI.sub("", predicted.stderr)
    assert "warning: tfidf-lr@1 learned from message || diff;" in warning
    assert re.search(r"\d+ of \d+ items here have no diff", warning)
    assert json.loads(predicted.stdout)["labels"] == {
        NON_PERF: json.loads(predicted.stdout)["predicted"]
    }

    scored = cli("eval", "gt-eval", "--labeler", "tfidf-lr@1", "--labeler", "keyword@1", "--json")
    assert scored.exit_code == 0, scored.output
    assert "tfidf-lr@1 learned from message || diff" in ANSI.sub("", scored.stderr)
    assert "keyword@1" not in ANSI.sub("", scored.stderr)  # rule labelers are not checked
    result = json.loads(scored.stdout)["labelers"][0]
    assert result["per_class"][PERF]["recall"] == 0.0  # the threshold decided

    forced = cli("predict", "gt-dev", "--labeler", "tfidf-lr@1", "--input", "message")
    assert forced.exit_code == 0, forced.output
    assert "it reads messages only here" in ANSI.sub("", forced.stderr)


def test_a_messages_only_model_predicts_without_a_warning(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    items = _items_file(tmp_path, lambda n: False)
    assert cli("import", "items", str(items), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    trained = _json(cli("train", "--kind", "tfidf-lr", "--votes", "gt-sample", "--json"))
    assert trained["model"] == "tfidf-lr@1"
    predicted = cli("predict", "--labeler", "tfidf-lr@1")
    assert predicted.exit_code == 0, predicted.output
    assert "warning" not in predicted.stderr
    bad = cli("train", "--kind", "tfidf-lr", "--votes", "gt-sample", "--threshold-objective", "x")
    assert bad.exit_code == 2 and "precision:P" in ANSI.sub("", bad.stderr)


def test_diff_dropout_swaps_in_the_message_alone_at_its_rate() -> None:
    import random

    from engines.labelers.student.train import _epoch_ids

    full = [[1, 2, 3, 4]] * 1000
    messages = {i: [1, 2] for i in range(0, 1000, 2)}  # every other example has a diff
    none = _epoch_ids(full, messages, 0.0, random.Random(0))
    assert none == full
    ids = _epoch_ids(full, messages, 0.3, random.Random(0))
    swapped = [i for i, x in enumerate(ids) if x == [1, 2]]
    assert set(swapped) <= set(messages) and 120 <= len(swapped) <= 180  # about 30% of 500
    assert _epoch_ids(full, messages, 0.3, random.Random(0)) == ids  # seeded


def test_a_threshold_chosen_on_the_held_out_slice_counts_near_ties(
    store: Store, tmp_path: Path, cli
) -> None:  # type: ignore[no-untyped-def]
    """With 60 held-out votes (enough to choose on) and no dev set, the student's
    threshold is chosen with near ties counted as ties, recorded and shown."""
    perf = ["Cache the parsed header {n}", "Avoid a copy in loop {n}", "Reuse buffer {n}"]
    other = ["Fix typo in docs {n}", "Add test for option {n}", "Rename helper {n}"]
    items = tmp_path / "items.jsonl"
    votes = tmp_path / "votes.csv"
    with items.open("w", encoding="utf-8") as out, votes.open("w", encoding="utf-8") as v:
        v.write("item,annotator,label,category,note\n")
        for n in range(120):
            words = (perf if n % 2 else other)[n % 3]
            item = {"id": f"g{n}", "repo": "acme/x", "sha": f"{n:040x}", "diff": ""}
            out.write(json.dumps({**item, "message": words.format(n=n)}) + "\n")
            v.write(f"g{n},ann,{'perf' if n % 2 else 'non-perf'},,\n")
    import_items_file(store, items, "commit", model_input, "gen", votes_per_item=1)
    import_votes_file(store, votes)
    config = replace(TINY, holdout=0.5)
    outcome = run_training(store, TrainRequest(vote_sets=("gen",), config=config))
    assert outcome.model is not None
    decision = outcome.model.params["decision"]
    assert decision["chosen_on"] == "holdout" and decision["n"] == 60
    assert decision["near_tie"] == HOLDOUT_NEAR_TIE
    shown = cli("models", "show", outcome.model.name, "--db", str(tmp_path / "test.db"))
    assert shown.exit_code == 0, shown.output
    assert f"F1 within {HOLDOUT_NEAR_TIE:g} of the best counted as tied" in shown.stdout
