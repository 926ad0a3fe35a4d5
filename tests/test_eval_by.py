"""``curator eval --by repo|language``: each labeler scored on each repository or language
of a set, checked against scores computed here from the sample's own files."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from engines.labelers.keyword import KeywordLabeler
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"


@pytest.fixture
def gt(cli):  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    return cli


def majority_labels() -> dict[str, str]:
    """The sample's final labels by strict majority (ties are conflicts, left out)."""
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    with (SAMPLE / "votes.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            votes[row["item"]][row["label"]] += 1
    final = {}
    for item, counts in votes.items():
        (top, n), *rest = counts.most_common()
        if not rest or rest[0][1] < n:
            final[item] = top
    return final


def expected_f1(field: str) -> dict[str, tuple[int, float | None]]:
    """Items with a final label and keyword@latest's perf F1, per value of ``field``."""
    items = [json.loads(line) for line in (SAMPLE / "items.jsonl").open(encoding="utf-8")]
    final = majority_labels()
    items = [item for item in items if item["id"] in final]
    calls = KeywordLabeler().predict([item["message"] for item in items])
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for item, call in zip(items, calls, strict=True):
        truth = final[item["id"]]
        counts[item[field]]["n"] += 1
        if call.label == "perf":
            counts[item[field]]["tp" if truth == "perf" else "fp"] += 1
        elif truth == "perf":
            counts[item[field]]["fn"] += 1
    found = {}
    for group, c in counts.items():
        scored = 2 * c["tp"] + c["fp"] + c["fn"]
        found[group] = (c["n"], 2 * c["tp"] / scored if scored else None)
    return found


@pytest.mark.parametrize(("by", "field"), [("repo", "repo"), ("language", "language")])
def test_each_group_is_scored_on_its_own_items(gt, by: str, field: str) -> None:  # type: ignore[no-untyped-def]
    result = gt("eval", "gt", "--labeler", "keyword@latest", "--by", by, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["by"]["field"] == by
    groups = data["by"]["groups"]
    expected = expected_f1(field)
    assert set(groups) == set(expected) and len(groups) > 1
    for group, (n, f1) in expected.items():
        (scores,) = groups[group]
        assert scores["labeler"] == KeywordLabeler().name
        assert scores["items_with_final_label"] == n
        got = scores["per_class"]["perf"]["f1"]
        assert (got is None and f1 is None) or got == pytest.approx(f1), group
    whole = data["labelers"][0]["items_with_final_label"]
    assert sum(g[0]["items_with_final_label"] for g in groups.values()) == whole


def test_the_table_and_the_markdown_file_show_every_labeler_per_group(gt, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert gt("predict", "gt", "--labeler", "heuristics@1").exit_code == 0
    md = tmp_path / "eval.md"
    args = ("--labeler", "keyword@latest", "--labeler", "heuristics@1", "--by", "language")
    result = gt("eval", "gt", *args, "--markdown", str(md), "--no-confusion")
    assert result.exit_code == 0, result.output
    assert "perf F1 by language" in result.output
    lines = [line for line in result.output.splitlines() if line.startswith(("│ cpp", "│ java"))]
    assert len(lines) == 2 and all(line.count("│") == 6 for line in lines), lines
    text = md.read_text(encoding="utf-8")
    assert "By language: perf F1" in text
    assert "| group | items | perf | keyword@5 | heuristics@1 |" in text
    assert {"| cpp |", "| java |", "| python |"} <= {
        row[: row.index(" |", 2) + 2] for row in text.splitlines() if row.startswith("| ")
    }


def test_an_unknown_field_is_refused_in_one_line(gt) -> None:  # type: ignore[no-untyped-def]
    result = gt("eval", "gt", "--labeler", "keyword@latest", "--by", "stars")
    assert result.exit_code == 2  # the command line is wrong
    assert "--by 'stars': use repo or language" in result.output
    assert "Traceback" not in result.output


def test_repository_names_are_shown_as_text(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    hostile = "[bold red]evil[/] \x1b[31mrepo"
    items = tmp_path / "items.jsonl"
    rows = [
        {"id": f"h-{n}", "repo": hostile if n < 2 else "plain/repo", "message": message}
        for n, message in enumerate(["Speed up the parser", "Fix a typo", "Add docs"])
    ]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "item,annotator,label\nh-0,ann,perf\nh-1,ann,non-perf\nh-2,ann,non-perf\n",
        encoding="utf-8",
    )
    assert cli("import", "items", str(items), "--set", "h", "--votes-per-item", "1").exit_code == 0
    assert cli("import", "votes", str(votes)).exit_code == 0
    result = cli("eval", "h", "--labeler", "keyword@latest", "--by", "repo", "--no-confusion")
    assert result.exit_code == 0, result.output
    assert "[bold red]evil[/]" in result.output and "\x1b" not in result.output
    data = json.loads(
        cli("eval", "h", "--labeler", "keyword@latest", "--by", "repo", "--json").output
    )
    assert set(data["by"]["groups"]) == {hostile, "plain/repo"}


def test_a_group_a_labeler_never_predicted_shows_the_missing_glyph(gt) -> None:  # type: ignore[no-untyped-def]
    assert gt("predict", "gt", "--labeler", "heuristics@1", "--limit", "3").exit_code == 0
    args = ("--labeler", "keyword@latest", "--labeler", "heuristics@1", "--by", "repo")
    data = json.loads(gt("eval", "gt", *args, "--json").output)
    groups = data["by"]["groups"]
    unseen = [g for g, scores in groups.items() if scores[1]["items_predicted"] == 0]
    assert unseen and len(unseen) < len(groups)
    table = gt("eval", "gt", *args, "--no-confusion").output
    for group in unseen:
        (row,) = [line for line in table.splitlines() if line.startswith(f"│ {group}")]
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert cells[-1] == "-" and cells[-2] != "-", cells
