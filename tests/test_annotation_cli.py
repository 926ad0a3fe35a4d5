"""The annotation commands end to end on the sample data, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"


@pytest.fixture
def gt(cli):  # type: ignore[no-untyped-def]
    result = cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt-eval")
    assert result.exit_code == 0, result.output
    assert "40 new" in result.output
    result = cli("import", "votes", str(SAMPLE / "votes.csv"))
    assert result.exit_code == 0, result.output
    return cli


def test_agree_json_names_its_figures(gt) -> None:  # type: ignore[no-untyped-def]
    result = gt("agree", "gt-eval", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["items"] == 40
    assert data["raters"] == ["alice", "bob", "carol"]
    assert 0.6 < data["fleiss_kappa"] <= 1.0
    assert 0.6 < data["krippendorff_alpha"] <= 1.0
    pairs = {(p["rater_a"], p["rater_b"]): p for p in data["cohen_kappa"]}
    assert set(pairs) == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}
    assert data["items_coded_by_two_or_more"] == 40
    assert set(data["per_label"]) == {"perf", "non-perf"}
    table = gt("agree", "gt-eval")
    assert "Cohen's kappa per pair" in table.output and "Fleiss' kappa" in table.output


def test_adjudicate_then_settle_a_conflict_then_eval(gt) -> None:  # type: ignore[no-untyped-def]
    result = gt("adjudicate", "gt-eval", "--json")
    data = json.loads(result.output)
    conflicts = [i for i in data["items"] if i["status"] == "conflict"]
    assert data["summary"]["conflict"] == len(conflicts) >= 1
    item = conflicts[0]["item_id"]
    skipped = gt("vote", f"#{item}", "skip", "--annotator", "dana", "--adjudicate")
    assert skipped.exit_code == 1 and "skip settles nothing" in skipped.output
    assert len(skipped.output.strip().splitlines()) == 1
    settle = gt("vote", f"#{item}", "non-perf", "--annotator", "dana", "--adjudicate")
    assert settle.exit_code == 0, settle.output
    plain = gt("undo", "--annotator", "dana")  # dana only adjudicated
    assert plain.exit_code == 1 and plain.output.strip().endswith("add --adjudicate")
    after = json.loads(gt("adjudicate", "gt-eval", "--json").output)
    assert after["summary"]["adjudicated"] == 1
    assert after["summary"]["conflict"] == len(conflicts) - 1
    evaluation = gt("eval", "gt-eval", "--labeler", "keyword@5", "--json")
    assert evaluation.exit_code == 0, evaluation.output
    scores = json.loads(evaluation.output)["labelers"][0]
    assert scores["items_missing_prediction"] == 0
    assert scores["items_predicted"] == scores["items_with_final_label"] >= 39
    assert set(scores["per_class"]) == {"perf", "non-perf"}
    text = gt("eval", "gt-eval", "--labeler", "keyword@5")
    assert "Confusion matrix" in text.output
    # a labeler that labeled none of the set gets its one-line warning, not a matrix of zeros
    both = gt("eval", "gt-eval", "--labeler", "keyword@5", "--labeler", "keyword@4")
    assert both.exit_code == 0, both.output
    flat = " ".join(both.output.split())
    assert "keyword@4 has labeled none" in flat
    assert "Confusion matrix of keyword@5" in flat and "Confusion matrix of keyword@4" not in flat


def test_vote_undo_and_bad_input_exit_codes(gt) -> None:  # type: ignore[no-untyped-def]
    ok = gt("vote", "ex-001", "perf", "--annotator", "erin", "--note", "[bold red]x[/] \x1b[31m")
    assert ok.exit_code == 0
    assert gt("vote", "ex-001", "fast", "--annotator", "erin").exit_code == 1
    assert gt("vote", "no-such", "perf", "--annotator", "erin").exit_code == 1
    assert gt("vote", "ex-001", "perf").exit_code == 2  # no annotator
    undo = gt("undo", "--annotator", "erin")
    assert undo.exit_code == 0 and "now: no vote" in undo.output
    assert gt("undo", "--annotator", "erin").exit_code == 1
    adjudication = json.loads(gt("adjudicate", "gt-eval", "--json").output)
    assert all("erin" not in i["votes"] for i in adjudication["items"])


def test_untrusted_notes_print_literally(gt) -> None:  # type: ignore[no-untyped-def]
    result = gt("adjudicate", "gt-eval")
    assert result.exit_code == 0
    assert "\x1b" not in result.output


def test_set_create_split_list_show(gt) -> None:  # type: ignore[no-untyped-def]
    made = gt(
        "set", "create", "gt-dev", "--sample", "8", "--stratify", "language,keyword", "--seed", "7"
    )
    assert made.exit_code == 0, made.output
    other = gt("set", "create", "pool", "--exclude-repos-of", "gt-dev", "--seed", "7")
    assert other.exit_code == 0, other.output
    shown = json.loads(gt("set", "show", "gt-dev", "--json").output)
    assert shown["params"]["draw"]["seed"] == 7
    assert shown["progress"]["items"] == 8
    listed = json.loads(gt("set", "list", "--json").output)
    assert {s["name"] for s in listed} == {"gt-eval", "gt-dev", "pool"}
    split = gt("set", "split", "--into", "a:50,b:50", "--from-set", "gt-eval", "--seed", "1")
    assert split.exit_code == 0, split.output
    assert gt("set", "create", "gt-dev", "--sample", "1").exit_code == 1
    assert gt("set", "create", "x", "--stratify", "colour").exit_code == 1
    assert gt("set", "show", "nope").exit_code == 1


def test_audit_draw_and_report(gt) -> None:  # type: ignore[no-untyped-def]
    drawn = gt(
        "audit",
        "draw",
        "audit-kw",
        "--from-labeler",
        "keyword@5",
        "--positive",
        "--stratify",
        "language",
        "--seed",
        "2",
    )
    assert drawn.exit_code == 0, drawn.output
    report = json.loads(gt("audit", "report", "audit-kw", "--json").output)
    assert report["labeler"] == "keyword@5"
    # the sample's keyword positives: Cochran with correction gives every one of them
    assert report["sample"] == report["population"]
    assert report["judged"] > 0
    assert 0.0 <= report["wilson_low"] <= report["precision"] <= report["wilson_high"] <= 1.0
    assert gt("audit", "report", "gt-eval").exit_code == 1


def test_import_errors_exit_1_and_name_the_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "message": "fine"}\n{oops\n')
    result = cli("import", "items", str(bad))
    assert result.exit_code == 1
    assert "bad.jsonl:2: malformed JSON" in result.output
    assert "nothing imported" in result.output


def test_eval_before_any_vote_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "g").exit_code == 0
    result = cli("eval", "g", "--labeler", "keyword@5", "--json")
    assert result.exit_code == 1
    assert "no settled items yet" in result.output
    assert "{" not in result.output


def test_no_output_option_writes_over_the_database(gt, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`--out`/`--markdown` naming the store (or its journal, or a link to it) would
    replace the database with a report; each is refused before anything is written."""
    db = tmp_path / "cli.db"
    before = db.read_bytes()
    link = tmp_path / "report.json"
    link.symlink_to(db)
    for option, target in [
        ("--out", str(db)),
        ("--markdown", str(tmp_path / "x" / ".." / "cli.db")),
        ("--out", str(link)),
        ("--out", str(db) + "-wal"),
    ]:
        result = gt("eval", "gt-eval", "--labeler", "keyword@5", option, target)
        assert result.exit_code == 2, (option, target, result.output)
        assert "that is the database" in " ".join(result.output.split())
    assert db.read_bytes() == before and link.is_symlink()
    assert gt("stats").exit_code == 0
    ok = gt("eval", "gt-eval", "--labeler", "keyword@5", "--out", str(tmp_path / "e.json"))
    assert ok.exit_code == 0 and (tmp_path / "e.json").exists()
