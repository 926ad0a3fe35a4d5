"""A team's annotation commands end to end: labeled files in one step, set edit, next,
hidden gold items and the per-annotator report."""

from __future__ import annotations

import json
from pathlib import Path

from annotation.routing import serve_next, submit
from store import open_store
from store.items import find_by_id
from store.sets import get_set
from tests import raw_sql

ROWS = [
    {"idx": 1, "commit_message": "Speed up parsing with a lookup table", "target": 1},
    {"idx": 2, "commit_message": "Fix typo in README", "target": 0},
    {"idx": 3, "commit_message": "Cache compiled regexes to avoid recompiling", "target": 1},
    {"idx": 4, "commit_message": "Add a test for the parser", "target": 0},
    {"idx": 5, "commit_message": "Avoid a copy in the hot loop", "target": 1},
    {"idx": 6, "commit_message": "Rename a variable", "target": 0},
]


def write_jsonl(path: Path, rows: list[dict[str, object]], bad: list[str] = ()) -> Path:  # type: ignore[assignment]
    lines = [json.dumps(r) for r in rows]
    path.write_text("\n".join([*lines[:2], *bad, *lines[2:]]) + "\n", encoding="utf-8")
    return path


def labeled(cli, path: Path, set_name: str = "gt-train", *extra: str):  # type: ignore[no-untyped-def]
    return cli(
        "import", "items", str(path), "--set", set_name, "--label-field", "target",
        "--map", "1=perf,0=non-perf", "--annotator", "gold", *extra,
    )  # fmt: skip


def test_a_labeled_jsonl_becomes_settled_items_and_bad_rows_stay_out(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = [
        '{"idx": 7, "commit_message": "Use a faster hash", "target": 9}',
        '{"idx": 8, "commit_message": ',
        '{"idx": 9, "target": 1}',
        '{"idx": 10, "commit_message": "bad \\ud800 text", "target": 1}',
    ]
    path = write_jsonl(tmp_path / "train.jsonl", ROWS, bad)
    result = labeled(cli, path)
    assert result.exit_code == 1  # some rows were left out...
    out = result.output
    assert f"{path}:3: label '9' is not in --map (1, 0)" in out
    assert f"{path}:4: malformed JSON" in out
    assert f"{path}:5: missing the text" in out
    assert f"{path}:6: field 'commit_message' holds a lone surrogate" in out
    assert "6 items have no repository" in out
    shown = json.loads(cli("set", "show", "gt-train", "--json").output)
    assert shown["decisions"]["unanimous"] == 6  # ...and the rest went in, settled
    assert shown["votes_per_item"] == 1 and shown["labels"] == ["perf", "non-perf"]
    again = labeled(cli, path, "gt-train", "--json")
    report = json.loads(again.output[again.output.index("[") :])
    assert report[0]["votes"] == 0 and report[0]["unchanged"] == 6 and report[0]["known"] == 6


def test_map_given_several_times_counts_every_pair(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the last --map replaced the earlier ones: every perf row was "not in --map (0)"
    path = write_jsonl(tmp_path / "train.jsonl", ROWS)
    result = cli(
        "import", "items", str(path), "--set", "gt-train", "--label-field", "target",
        "--map", "1=perf", "--map", "0=non-perf",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = json.loads(cli("set", "show", "gt-train", "--json").output)
    assert shown["decisions"]["unanimous"] == len(ROWS)
    twice = cli(
        "import", "items", str(path), "--set", "gt-2", "--label-field", "target",
        "--map", "1=perf", "--map", "1=non-perf",
    )  # fmt: skip
    assert twice.exit_code == 2
    assert "error: --map '1=non-perf': '1' is mapped twice" in twice.output


def test_a_csv_export_with_named_fields_imports_the_same_way(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "gold.csv"
    csv.write_text(
        'sha,msg,verdict,repo\n'
        'a1,"Speed up the\nparser",yes,https://example.org/x\n'
        'a2,Fix typo,no,https://example.org/y\n'
        'a3,Faster IO,maybe,https://example.org/y\n',
        encoding="utf-8",
    )  # fmt: skip
    result = cli(
        "import", "items", str(csv), "--set", "gt-csv", "--label-field", "verdict",
        "--map", "yes=perf,no=non-perf", "--text-field", "msg", "--id-field", "sha",
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"{csv}:5: label 'maybe' is not in --map (yes, no)" in result.output  # 2-line row
    assert "no repository" not in result.output
    shown = json.loads(cli("set", "show", "gt-csv", "--json").output)
    assert shown["progress"]["items"] == 2 and shown["decisions"]["unanimous"] == 2


def test_rows_failing_the_same_way_are_shown_five_times_with_the_fix(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # 0/1 values without --map: every row once printed its own line, with no hint
    many = [{"idx": i, "commit_message": f"change {i}", "target": i % 2} for i in range(400)]
    path = write_jsonl(tmp_path / "train.jsonl", many, ['{"idx": 900, "target": 1}'])
    result = cli("import", "items", str(path), "--set", "train", "--label-field", "target")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    outside = [line for line in lines if "is not one of the set's labels" in line]
    assert len(outside) == 5
    assert outside[0] == (
        f"error: {path}:1: label '0' is not one of the set's labels (perf, non-perf):"
        " give --map 1=perf,0=non-perf"
    )
    assert f"error: {path}:3: missing the text" in result.stderr  # another reason, shown too
    assert lines[-1] == (
        "... and 395 more rows failed the same way (label outside the set's labels)"
    )
    assert "nothing imported, no set created; 401 bad rows left out" in result.stdout.replace(
        "\n", " "
    )
    assert "train" not in cli("set", "list", "--json").stdout  # no empty set left behind
    fixed = cli(
        "import", "items", str(path), "--set", "train", "--label-field", "target",
        "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    assert fixed.exit_code == 1 and "400 labels recorded" in fixed.stdout.replace("\n", " ")


def test_a_map_is_suggested_from_the_values_seen(tmp_path: Path) -> None:
    from annotation.labeled_import import map_hint

    pair = ["perf", "non-perf"]
    assert map_hint(["No", "Yes", "No"], pair) == "give --map Yes=perf,No=non-perf"
    assert (
        map_hint(["false", "true"], ["non-perf", "perf"]) == "give --map true=perf,false=non-perf"
    )
    assert map_hint(["bug", "feature", "bug"], pair) == (
        "give --map VALUE=LABEL for the values seen (bug, feature), e.g. --map bug=perf"
    )


def test_set_edit_changes_votes_per_item_and_restates_items(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    labeled(cli, write_jsonl(tmp_path / "t.jsonl", ROWS))
    result = cli("set", "edit", "gt-train", "--votes-per-item", "2", "--open", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["blind"] is False
    shown = json.loads(cli("set", "show", "gt-train", "--json").output)
    assert shown["decisions"]["pending"] == 6  # one vote no longer settles them
    refused = cli("set", "edit", "gt-train", "--labels", "perf,other")
    assert refused.exit_code == 2 and "keep those labels" in refused.output
    assert cli("set", "edit", "gt-train", "--overlap", "some").exit_code == 2
    split = cli("set", "split", "--into", "a:50,b:50")
    assert "6 items have no repository" in split.output  # once silent: all in one part


def test_next_claims_routed_items_and_vote_ends_the_claim(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"c{i}", "message": f"change {i}"}) + "\n" for i in range(3))
    )
    cli("import", "items", str(items), "--set", "team", "--votes-per-item", "1")
    seen = []
    for who in ("ann", "ben", "cat"):
        got = json.loads(cli("next", "team", "--annotator", who, "--json").output)
        seen.append(got["item"]["key"])
    assert sorted(seen) == ["c0", "c1", "c2"]  # one slot each: three different items
    assert json.loads(cli("next", "team", "-a", "dan", "--json").output)["item"] is None
    assert cli("vote", seen[0], "perf", "--set", "team", "-a", "ann").exit_code == 0
    assert json.loads(cli("next", "team", "-a", "ann", "--json").output)["item"] is None
    quality = json.loads(cli("agree", "team", "--by-annotator", "--json").output)
    ann = quality["annotators"][0]
    assert ann["annotator"] == "ann" and ann["votes"] == 1
    assert ann["seconds_per_item"] is not None  # timed from the claim


def test_gold_items_are_served_hidden_and_never_count_as_votes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    labeled(cli, write_jsonl(tmp_path / "t.jsonl", ROWS))
    items = tmp_path / "eval.jsonl"
    items.write_text(
        "".join(json.dumps({"id": f"e{i}", "message": f"change {i}"}) + "\n" for i in range(10))
    )
    cli("import", "items", str(items), "--set", "gt-eval")
    result = cli("set", "gold", "gt-eval", "--from", "gt-train", "--rate", "0.2", "--json")
    assert json.loads(result.output)["gold_items"] == 2
    first = json.loads(cli("next", "gt-eval", "-a", "ann", "--json").output)["item"]
    assert cli("vote", first["key"], "perf", "--set", "gt-eval", "-a", "ann").exit_code == 0
    keys = [first["key"]]
    with open_store(tmp_path / "cli.db") as s:  # the rest as a front end would, in-process
        set_row = get_set(s, "gt-eval")
        assert set_row is not None
        while (served := serve_next(s, set_row, "ann")) is not None:
            item = find_by_id(s, served.entry.item_id)
            assert item is not None
            keys.append(item.key)
            submit(s, set_row, item.id, "ann", "perf")
    gold_keys = [k for k in keys if k.startswith("t:")]
    assert len(gold_keys) == 2 and keys[0].startswith("t:")  # mixed in at the rate
    shown = json.loads(cli("set", "show", "gt-eval", "--json").output)
    assert shown["progress"] == {"items": 10, "voted_items": 10, "votes": 10}
    with open_store(tmp_path / "cli.db") as s:
        gold_votes = raw_sql.scalar(
            s, "SELECT COUNT(*) FROM votes WHERE annotator = 'ann' AND item_id IN"
            " (SELECT item_id FROM gold_items)",
        )  # fmt: skip
    assert gold_votes == 0
    quality = json.loads(cli("agree", "gt-eval", "--by-annotator", "--json").output)
    ann = quality["annotators"][0]
    assert ann["gold_answered"] == 2 and 0 <= ann["gold_accuracy"] <= 1
    table = cli("agree", "gt-eval", "--by-annotator").output
    assert "gold accuracy" in table and "ann" in table


def test_set_create_split_vote_and_undo_speak_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "message": f"change {i}", "repo": f"r{i % 3}"}) + "\n"
            for i in range(9)
        )
    )
    cli("import", "items", str(items))
    made = json.loads(
        cli("set", "create", "s", "--sample", "4", "--overlap", "all", "--json").output
    )
    assert (made["items"], made["overlap"], made["votes_per_item"]) == (4, "all", 2)
    parts = json.loads(cli("set", "split", "--into", "a:50,b:50", "--json").output)
    assert sorted(p["name"] for p in parts) == ["a", "b"] and sum(p["items"] for p in parts) == 9
    voted = json.loads(cli("vote", "c1", "perf", "-a", "ann", "--json").output)
    assert voted["label"] == "perf" and voted["item"]["key"] == "c1"
    undone = json.loads(cli("undo", "-a", "ann", "--json").output)
    assert undone["undone_vote"] == voted["id"] and undone["now"] is None


def test_next_shows_the_claimed_items_subject(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "subjects.jsonl"
    subject = "Cache [bold]the[/] lookup"
    items.write_text(json.dumps({"id": "s1", "message": f"{subject}\n\nbody"}) + "\n")
    cli("import", "items", str(items), "--set", "subjects")
    text = cli("next", "subjects", "-a", "ann")
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[1].strip() == subject  # shown literally, not as markup
    data = json.loads(cli("next", "subjects", "-a", "bob", "--json").output)
    assert data["item"]["title"] == subject
