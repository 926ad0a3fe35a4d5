"""``curator eval`` as a new user meets it: a labeler that never names perf scores an F1
of 0 (not a dash that reads like "not scored"), and a set with nothing to score says
why (no items, votes still missing, conflicts) with the command that settles it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import one_error as _error

ROWS = [
    {"id": "e-1", "repo": "https://e.org/a/one", "message": "rename the helper"},
    {"id": "e-2", "repo": "https://e.org/a/one", "message": "move code to a module"},
    {"id": "e-3", "repo": "https://e.org/a/two", "message": "update the changelog"},
]


def _import(cli, tmp_path: Path, name: str, per_item: int) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / f"{name}.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    made = cli("import", "items", str(items), "--set", name, "--votes-per-item", str(per_item))
    assert made.exit_code == 0, made.output


def test_a_labeler_that_misses_every_perf_item_scores_f1_zero(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _import(cli, tmp_path, "g", 1)
    for item, label in (("e-1", "perf"), ("e-2", "perf"), ("e-3", "non-perf")):
        assert cli("vote", item, label, "--annotator", "ann").exit_code == 0
    assert cli("predict", "g", "--labeler", "keyword@5").exit_code == 0
    data = json.loads(cli("eval", "g", "--labeler", "keyword@5", "--by", "repo", "--json").stdout)
    (whole,) = data["labelers"]
    assert whole["items_predicted"] == 3
    perf = whole["per_class"]["perf"]
    # was: f1 null (a dash in the tables, models list and the --by table) for a labeler
    # that found none of the two perf commits
    assert (perf["precision"], perf["recall"], perf["f1"]) == (None, 0.0, 0.0)
    (one,) = data["by"]["groups"]["https://e.org/a/one"]
    assert one["per_class"]["perf"]["f1"] == 0.0
    (two,) = data["by"]["groups"]["https://e.org/a/two"]
    assert two["per_class"]["perf"]["f1"] is None  # no perf item, none predicted: undefined
    # was: two identical rows when two names resolve to one labeler
    twice = cli("eval", "g", "--labeler", "keyword@5", "--labeler", "keyword@latest", "--json")
    assert [r["labeler"] for r in json.loads(twice.stdout)["labelers"]] == ["keyword@5"]
    table = cli("eval", "g", "--labeler", "keyword@5", "--no-confusion")
    row = next(x for x in table.stdout.splitlines() if "keyword@5" in x and "perf" in x)
    assert [c.strip() for c in row.split("│")][3:6] == ["-", "0.000", "0.000"]


def test_a_set_with_nothing_to_score_says_why(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli("import", "items", str(empty), "--set", "none").exit_code == 0
    # was: "has no settled items yet: vote, then `curator adjudicate`" for each of these
    line = _error(cli("eval", "none", "--labeler", "keyword@5"))
    assert line == "error: set 'none' holds no items: nothing to score"
    _import(cli, tmp_path, "two", 2)
    for item in ("e-1", "e-2", "e-3"):
        assert cli("vote", item, "perf", "--annotator", "ann").exit_code == 0
    line = _error(cli("eval", "two", "--labeler", "keyword@5"))
    assert line == (
        "error: set 'two' has no settled items yet: 3 wait for more votes (it needs 2 per"
        " item; `curator set edit two --votes-per-item 1` if one vote is enough)"
    )
    for item in ("e-1", "e-2", "e-3"):
        assert cli("vote", item, "non-perf", "--annotator", "bob").exit_code == 0
    line = _error(cli("eval", "two", "--labeler", "keyword@5"))
    assert (
        line
        == "error: set 'two' has no settled items yet: 3 are conflicts (`curator adjudicate two`)"
    )
