"""``curator eval`` with several labelers: one table, written as JSON and Markdown too."""

from __future__ import annotations

import json
from pathlib import Path

from engines.labelers.heuristics import HeuristicLabeler
from engines.labelers.storing import label_and_store
from store import open_store
from store.sets import get_set, set_item_ids
from tests.teacher_server import FakeLLM

# key, message, final label (both annotators agree)
ITEMS = [
    ("k1", "Make the parser faster", "perf"),
    ("k2", "Speed up the hash join", "perf"),
    ("k3", "Fix typo in README", "non-perf"),
    ("k4", "Keep a cache of parsed templates", "non-perf"),  # keyword and teacher call it perf
    ("k5", "Rename a variable | pipe", "non-perf"),
]


def _ground_truth(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": k, "repo": f"r/{k}", "message": m}) + "\n" for k, m, _ in ITEMS)
    )
    assert cli("import", "items", str(items), "--set", "g").exit_code == 0
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "item,annotator,label\n"
        + "".join(f"{k},{a},{label}\n" for k, _, label in ITEMS for a in ("ann", "bea"))
    )
    assert cli("import", "votes", str(votes)).exit_code == 0


def test_one_table_for_several_labelers_as_text_json_and_markdown(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _ground_truth(cli, tmp_path)
    with FakeLLM() as llm:
        result = cli("teach", "g", "--model", "m", "--endpoint", llm.url, "--backoff", "0")
        assert result.exit_code == 0, result.output
    with open_store(tmp_path / "cli.db") as store:
        s = get_set(store, "g")
        assert s is not None
        label_and_store(store, HeuristicLabeler(), set_item_ids(store, s.id))

    out_json, out_md = tmp_path / "out" / "eval.json", tmp_path / "eval.md"
    args = ["eval", "g", "--labeler", "keyword@1", "--labeler", "heuristics@1"]
    result = cli(*args, "--labeler", "teacher:m", "--out", str(out_json), "--markdown", str(out_md))
    assert result.exit_code == 0, result.output
    text = result.output
    assert "teacher:m" in text and "F1" in text and "non-perf" in text
    assert "0.667" in text and "0.800" in text  # the teacher's perf precision and F1

    data = json.loads(out_json.read_text())
    assert [r["labeler"] for r in data["labelers"]] == ["keyword@1", "heuristics@1", "teacher:m"]
    teacher = data["labelers"][2]
    # The fake teacher says perf for k1, k2 and k4 (cache): TP 2, FP 1, TN 2.
    assert teacher["per_class"]["perf"]["precision"] == 2 / 3
    assert teacher["per_class"]["perf"]["recall"] == 1.0
    assert teacher["per_class"]["perf"]["fpr"] == 1 / 3
    assert teacher["accuracy"] == 4 / 5

    lines = out_md.read_text().splitlines()
    assert lines[0].startswith("Evaluation on `g` (5 items")
    assert lines[2].startswith("| labeler | items | perf P | perf R | perf F1 | perf FPR |")
    assert lines[3].startswith("|---|---:|")
    teacher_row = next(line for line in lines if line.startswith("| teacher:m "))
    assert teacher_row.split(" | ")[2:6] == ["0.667", "1.000", "0.800", "0.333"]
    assert len(lines) == 4 + 3

    assert json.loads(cli(*args, "--json").output)["labelers"][0]["labeler"] == "keyword@1"


def test_unwritable_output_is_a_one_line_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _ground_truth(cli, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("eval", "g", "--labeler", "keyword@1", "--out", str(blocker / "eval.json"))
    assert result.exit_code == 1
    assert "cannot write" in result.output


def test_an_unknown_latest_labeler_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _ground_truth(cli, tmp_path)
    result = cli("eval", "g", "--labeler", "student@latest")
    assert result.exit_code == 1
    assert "no predictions" in result.output
