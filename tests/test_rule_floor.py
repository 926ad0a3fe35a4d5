"""The keyword rules as a floor under trained labelers: what the floor reads, that a
trained TF-IDF model and a tiny student record it and apply it (and only it: texts the
rules are silent on keep the model's probability), that ``--rule-floor none`` turns it
off, and how the CLI shows and refuses it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from annotation.importing import import_items_file, import_votes_file
from curator.training import TrainRequest, run_training
from engines.commits.representation import model_input
from engines.labelers import tfidf
from engines.labelers.rule_floor import (
    apply_floor,
    describe_floor,
    floor_block,
    message_part,
    recorded_floor,
    rule_fires,
)
from engines.labelers.student import TrainConfig
from store import Store
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RULED = "Speed up the tokenizer by caching lookups"
SILENT = "Update the contributor list"


def test_the_floor_reads_the_message_not_the_diff() -> None:
    diff = "diff --git a/x.c b/x.c\n@@ -1 +1 @@\n-slow\n+faster path\n"
    text = model_input("Fix a typo\n\nIn the docs.", diff)
    assert message_part(text) == "Fix a typo\n\nIn the docs."  # a body's blank line stays
    assert not rule_fires(text)  # "faster" is in the diff only
    assert rule_fires(model_input(RULED, diff))
    assert message_part(RULED) == RULED
    assert apply_floor([0.2, 0.3], [RULED, SILENT]) == [1.0, 0.3]


def test_a_model_keeps_the_list_version_it_was_trained_with() -> None:
    """Version 2 added "redundant copy"; a model floored by keyword@1 must not see it."""
    text = "Remove redundant graph copy in bridges()"
    old = {"labeler": "keyword@1", "reads": "message"}
    assert apply_floor([0.2], [text], old) == [0.2]
    assert apply_floor([0.2], [text], {"labeler": "keyword@5", "reads": "message"}) == [1.0]
    assert apply_floor([0.2], [text]) == [1.0]  # no record: the current list


def test_floor_records() -> None:
    block = floor_block("keyword")
    assert block is not None and re.fullmatch(r"keyword@\d+", block["labeler"])
    assert floor_block("none") is None
    assert recorded_floor({"rule_floor": block}) == block and recorded_floor({}) is None
    with pytest.raises(ValueError, match="rule floor 'regex'"):
        floor_block("regex")


def _import(store: Store) -> None:
    import_items_file(store, SAMPLE / "items.jsonl", "commit", model_input, "gt-sample")
    import_votes_file(store, SAMPLE / "votes.csv")


def test_tfidf_records_and_applies_the_floor_by_default(store: Store) -> None:
    _import(store)
    outcome = run_training(store, TrainRequest(kind="tfidf-lr", vote_sets=("gt-sample",)))
    assert outcome.model is not None and outcome.model.path
    assert outcome.model.params["rule_floor"] == floor_block("keyword")
    labeler = tfidf.TfidfLabeler(outcome.model.path, "x")
    raw = tfidf.positive_scores(labeler.model, [RULED, SILENT])
    assert raw[0] < 1.0  # the model alone is not certain...
    assert labeler.probabilities([RULED, SILENT]) == [1.0, raw[1]]  # ...the rules are
    assert labeler.predict([RULED])[0].label == "perf"


def test_rule_floor_none_leaves_the_model_alone(store: Store) -> None:
    _import(store)
    config = TrainConfig(rule_floor="none")
    outcome = run_training(
        store, TrainRequest(kind="tfidf-lr", vote_sets=("gt-sample",), config=config)
    )
    assert outcome.model is not None and outcome.model.path
    assert outcome.model.params["rule_floor"] is None
    labeler = tfidf.TfidfLabeler(outcome.model.path, "x")
    assert labeler.floor is None
    assert labeler.probabilities([RULED]) == tfidf.positive_scores(labeler.model, [RULED])


def test_cli_shows_the_floor_and_refuses_an_unknown_rule(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    bad = cli("train", "--kind", "tfidf-lr", "--votes", "gt", "--rule-floor", "regex")
    assert bad.exit_code == 2
    assert "--rule-floor must be one of keyword, none, not 'regex'" in ANSI.sub("", bad.output)
    trained = cli("train", "--kind", "tfidf-lr", "--votes", "gt")
    assert trained.exit_code == 0, trained.output
    assert "rule floor: keyword@5 (messages it matches are perf)" in trained.stdout
    shown = cli("models", "show", "tfidf-lr@1", "--json")
    assert json.loads(shown.stdout)["rule_floor"]["labeler"] == "keyword@5"
    plain = cli("models", "show", "tfidf-lr@1")
    assert "rule floor: keyword@5" in plain.stdout
    assert "newer" not in plain.stdout  # trained on the current list: nothing to say


def test_a_floor_of_an_older_list_says_a_newer_one_is_packaged() -> None:
    from engines.labelers.keyword import packaged_terms

    current = f"keyword@{packaged_terms().version}"
    old = describe_floor({"labeler": "keyword@1", "reads": "message"})
    assert old == (
        f"keyword@1 (messages it matches are perf); {current} is newer: retrain to put it"
        " under the model"
    )
    assert describe_floor({"labeler": current}) == f"{current} (messages it matches are perf)"
    assert describe_floor(None) == "none"


def test_items_fixture_has_ruled_and_silent_texts() -> None:
    """The sample set gives the floor something to do in the tests above."""
    rows = [json.loads(x) for x in (SAMPLE / "items.jsonl").read_text().splitlines() if x]
    fired = sum(rule_fires(r["message"]) for r in rows)
    assert 0 < fired < len(rows)


def test_floor_block_names_the_current_keyword_list(tmp_path: Path) -> None:
    from engines.labelers.keyword import load_terms

    assert floor_block("keyword") == {
        "labeler": f"keyword@{load_terms().version}",
        "reads": "message",
        "vetoes": "test-only",
    }
