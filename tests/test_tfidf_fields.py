"""Fielded TF-IDF models: message, changed lines and rule flag read apart, and what a
model that reads them keeps when it is saved, loaded and trained by ``curator train``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.commits.representation import model_input
from engines.labelers import tfidf
from engines.labelers.base import NON_PERF, PERF
from engines.labelers.tfidf_fields import RuleFlag, changed_lines, messages

DIFF_HEAD = "diff --git a/src/x.c b/src/x.c\n--- a/src/x.c\n+++ b/src/x.c\n@@ -1,3 +1,3 @@\n"


def _commit(message: str, removed: str, added: str) -> str:
    return model_input(message, f"{DIFF_HEAD} keep\n-{removed}\n+{added}\n")


def test_fields_split_a_text_into_its_message_and_its_changed_lines() -> None:
    text = _commit("Tidy the parser", "old_call(a);", "new_call(a, b);")
    assert messages([text, "just a message", None]) == ["Tidy the parser", "just a message", ""]
    assert changed_lines([text, "just a message"]) == ["-old_call(a);\n+new_call(a, b);", ""]


def _corpus() -> tuple[list[str], list[int], list[str]]:
    """Messages that say nothing either way; only the diffs tell the classes apart."""
    texts, labels, groups = [], [], []
    for i in range(48):
        perf = i % 2 == 0
        added = f"buf.reserve(n{i % 5}); lookup_cache[k] = v;" if perf else f"log_warn(msg{i % 5});"
        texts.append(_commit(f"Update module{i % 6} handling", f"old{i % 4}(x);", added))
        labels.append(int(perf))
        groups.append(f"repo{i % 6}")
    return texts, labels, groups


def test_a_fielded_model_learns_from_the_diff_when_messages_say_nothing(tmp_path: Path) -> None:
    texts, labels, groups = _corpus()
    model = tfidf.fit("lr", texts, labels, features="fields", rule_version=2)
    tfidf.save(model, tmp_path / "m", {"kind": "lr", "input_field": "model_input"})
    labeler = tfidf.TfidfLabeler(tmp_path / "m", "tfidf-lr@1")
    fresh = [
        _commit("Update module9 handling", "old9(x);", "out.reserve(n7); lookup_cache[q] = w;"),
        _commit("Update module9 handling", "old9(x);", "log_warn(msg7);"),
    ]
    assert [p.label for p in labeler.predict(fresh)] == [PERF, NON_PERF]
    oof = tfidf.out_of_fold("lr", texts, labels, groups, features="fields", rule_version=2)
    assert min(s for s, y in zip(oof, labels, strict=True) if y) > max(
        s for s, y in zip(oof, labels, strict=True) if not y
    )


def test_a_fielded_model_trains_on_messages_without_any_diff() -> None:
    texts = ["speed up the parser", "fix a typo", "reduce allocations", "update docs"] * 3
    labels = [1, 0, 1, 0] * 3
    model = tfidf.fit("svm", texts, labels, features="fields", rule_version=None)
    scores = tfidf.positive_scores(model, ["speed up the parser", "fix a typo"])
    assert scores[0] > scores[1]


def test_the_rule_flag_reads_its_pinned_list_and_refuses_an_unknown_one() -> None:
    flag = RuleFlag(2).fit([])
    column = flag.transform(["Speed up the parser", "Fix a typo", _commit("Fix a typo", "a", "b")])
    assert column.toarray().ravel().tolist() == [1.0, 0.0, 0.0]
    with pytest.raises(LookupError, match="keyword@99"):
        RuleFlag(99).fit([])
    with pytest.raises(ValueError, match="features"):
        tfidf.build_pipeline("lr", features="tokens")


def test_curator_train_reads_commits_with_diffs_in_fields(split) -> None:  # type: ignore[no-untyped-def]
    """The sample commits carry diffs: ``curator train --kind tfidf-lr`` reads message ||
    diff in fields, with the rule flag of its floor's list, and records both."""
    result = split("train", "--kind", "tfidf-lr", "--votes", "tr", "--json")
    assert result.exit_code == 0, result.output
    meta = tfidf.read_meta(json.loads(result.stdout)["path"])
    assert meta["input"]["field"] == "model_input"
    assert meta["features"] == "fields"
    assert meta["rule_floor"]["labeler"] == f"keyword@{meta['rule_flag']}"
    off = split("train", "--kind", "tfidf-lr", "--votes", "tr", "--input", "message", "--json")
    assert tfidf.read_meta(json.loads(off.stdout)["path"])["features"] == "text"
    shown = split("models", "show", "tfidf-lr@1")
    assert shown.exit_code == 0, shown.output
    assert "read in fields: message, changed lines, rule flag" in shown.stdout
    assert "read in fields" not in split("models", "show", "tfidf-lr@2").stdout
