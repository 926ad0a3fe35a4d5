"""The decision a student keeps for commits it reads with a diff: how it is read,
applied (the diff threshold, the floor yielding), chosen or inherited when training,
and shown by ``curator train`` and ``curator models show``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from curator.adaptation import _curve_decision
from curator.diff_choice import choose_diff_decision
from engines.labelers.diff_decision import (
    DiffDecision,
    describe_diff_decision,
    diff_decision_of,
    has_diff,
    read_diff_decision,
    thresholds_for,
)
from engines.labelers.rule_floor import apply_floor, floor_block
from engines.labelers.student import hard_example
from engines.labelers.student.infer import StudentLabeler, update_meta
from engines.labelers.student.prior import packaged_prior

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-4", "--max-steps", "2")

PERF_WORDS = "Speed up the parser by caching the lookup table"
DIFF = "\n\ndiff --git a/src/x.c b/src/x.c\n@@ -1,2 +1,2 @@\n-int a;\n+long a;\n"


def test_only_well_formed_records_are_decisions() -> None:
    good = read_diff_decision({"threshold": 0.3, "floor_yields_below": 0.1, "chosen_on": "x"})
    assert good == DiffDecision(0.3, 0.1, "x")
    assert read_diff_decision({"threshold": 0.4}) == DiffDecision(0.4, None, "unrecorded")
    for bad in (None, [], {"threshold": "0.3"}, {"threshold": 1.5}, {"threshold": True}):
        assert read_diff_decision(bad) is None
    assert read_diff_decision({"threshold": 0.3, "floor_yields_below": -1}) == DiffDecision(
        0.3, None, "unrecorded"
    )
    assert diff_decision_of({"decision": {"threshold": 0.5}}) is None
    assert diff_decision_of({"decision": {"diff": {"threshold": 0.2}}}) is not None


def test_texts_with_a_diff_take_its_threshold_and_only_there_the_floor_yields() -> None:
    texts = [PERF_WORDS, PERF_WORDS + DIFF, PERF_WORDS + DIFF, "Fix a typo" + DIFF]
    assert [has_diff(t) for t in texts] == [False, True, True, True]
    raw = [0.05, 0.05, 0.5, 0.2]
    block = floor_block("keyword")
    assert apply_floor(raw, texts, block) == [1.0, 1.0, 1.0, 0.2]
    # below 0.1 the rules' match on a diff-read commit gives way; the message alone does not
    assert apply_floor(raw, texts, block, 0.1) == [1.0, 0.05, 1.0, 0.2]
    diff = DiffDecision(0.3, 0.1, "test")
    assert thresholds_for(texts, 0.6, diff) == [0.6, 0.3, 0.3, 0.3]
    assert thresholds_for(texts, 0.6, None) == [0.6] * 4
    shown = describe_diff_decision(diff) or ""
    assert "P(perf) >= 0.3" in shown and "at least 0.1" in shown and "(from test)" in shown


def test_a_diff_decision_is_chosen_on_diff_items_when_enough_else_inherited() -> None:
    inherited = DiffDecision(0.3, 0.1, "perf-prior@9: rounds")
    messages = [f"change {k}" for k in range(40)]
    labels = [k % 2 for k in range(40)]
    raw = [0.9 if y else 0.1 for y in labels]
    kept = choose_diff_decision(raw, messages, labels, None, "f1", None, inherited)
    assert kept == inherited.as_json()
    assert choose_diff_decision(raw, messages, labels, None, "f1", None, None) is None

    # read with a diff, the perf commits score 0.2 and the others 0.02: a threshold
    # chosen on them falls between, and the inherited yield is kept
    with_diff = [f"change {k}{DIFF}" for k in range(40)]
    raw = [0.2 if y else 0.02 for y in labels]
    chosen = choose_diff_decision(raw, with_diff, labels, None, "f1", "d", inherited)
    assert chosen is not None
    assert 0.02 < chosen["threshold"] <= 0.2 and chosen["f1"] == 1.0
    assert chosen["floor_yields_below"] == 0.1
    assert chosen["chosen_on"] == "dev:d: its 40 items with a diff" and chosen["n"] == 40

    # where the inherited threshold does as well as the best there, it stands
    level = [0.35 if y else 0.02 for y in labels]
    kept = choose_diff_decision(level, with_diff, labels, None, "f1", "d", inherited)
    assert kept is not None and kept["threshold"] == 0.3 and kept["f1"] == 1.0
    assert kept["chosen_on"].startswith("perf-prior@9: rounds; kept on dev:d: its 40 items")
    # a precision target is the dev set's to choose, whatever was inherited
    target = choose_diff_decision(level, with_diff, labels, None, "precision:0.9", "d", inherited)
    assert target is not None and target["threshold"] != 0.3

    # too few diff items of one class: the inheritance stands
    few = choose_diff_decision(raw[:6], with_diff[:6], labels[:6], None, "f1", "d", inherited)
    assert few == inherited.as_json()


def test_training_from_the_prior_inherits_its_diff_decision_and_predictions_use_it(
    split,
) -> None:  # type: ignore[no-untyped-def]
    trained = split("train", "--votes", "tr", *TINY, "--json")
    assert trained.exit_code == 0, trained.output
    path = Path(json.loads(trained.stdout)["path"])
    name = json.loads(trained.stdout)["model"]
    meta = json.loads((path / "curator_student.json").read_text())
    diff = meta["decision"]["diff"]
    packaged = packaged_prior()
    assert packaged is not None
    shipped = packaged.meta["diff_decision"]
    assert diff["threshold"] == shipped["threshold"]
    assert diff["floor_yields_below"] == shipped["floor_yields_below"]
    assert diff["chosen_on"].startswith(f"perf-prior@{packaged.meta['version']}: ")
    shown = " ".join(ANSI.sub("", split("models", "show", name).output).split())
    assert f"commits read with a diff: perf iff P(perf) >= {shipped['threshold']}" in shown

    # the threshold chart marks where commits with a diff were decided
    assert split("predict", "gt-eval", "--labeler", name).exit_code == 0
    chart = ANSI.sub("", split("chart", "threshold", "--set", "gt-eval", "--labeler", name).output)
    assert "chosen 0.30" in chart

    printed = " ".join(ANSI.sub("", split("train", "--votes", "tr", *TINY).output).split())
    assert "commits read with a diff: threshold 0.3, the rules yield below P(perf) 0.1" in printed

    # a warm start keeps its start's diff decision
    warm = split("train", "--votes", "tr", *TINY, "--from-model", name, "--json")
    assert warm.exit_code == 0, warm.output
    warm_meta = json.loads(
        (Path(json.loads(warm.stdout)["path"]) / "curator_student.json").read_text()
    )
    assert warm_meta["decision"]["diff"]["threshold"] == 0.3

    plain = split("train", "--votes", "tr", *TINY, "--prior", "none", "--json")
    plain_meta = json.loads(
        (Path(json.loads(plain.stdout)["path"]) / "curator_student.json").read_text()
    )
    assert "diff" not in plain_meta["decision"]

    # a learning curve's point settles its diff decision as a registered model does
    staged = StudentLabeler(path, "curve")
    assert _curve_decision(staged, [], None, [], "f1", (0.5, "s"), staged.diff) == (
        0.5,
        staged.diff,
    )
    few = [hard_example(f"commit {k}{DIFF}", k % 2) for k in range(12)]
    assert _curve_decision(staged, few, "d", [], "f1", (0.5, "s"), None)[1] is None
    assert _curve_decision(staged, few, "d", [], "f1", (0.5, "s"), staged.diff)[1] == staged.diff

    # the rules' match stays perf on the message; read with a diff, a decision whose floor
    # always yields and whose threshold nothing below 1.0 reaches calls it non-perf
    update_meta(
        path, decision={**meta["decision"], "diff": {"threshold": 1.0, "floor_yields_below": 1.0}}
    )
    labeler = StudentLabeler(path, "t")
    calls = labeler.predict([PERF_WORDS, PERF_WORDS + DIFF])
    assert [c.label for c in calls] == ["perf", "non-perf"]
    fields = labeler.predict_fields(
        {"model_input": [PERF_WORDS, PERF_WORDS + DIFF], "files": ["", ""]}
    )
    assert [c.label for c in fields] == ["perf", "non-perf"]
