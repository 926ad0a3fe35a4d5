"""Reports under hostile but realistic use: the per-annotator report after votes moved to
another set, gold items that became members, the learning chart of a named model, and
agree / adjudicate / audit / eval / chart on degenerate sets."""

from __future__ import annotations

import json
from pathlib import Path

from store import open_store
from store.models import register_model
from store.sets import get_set
from tests import raw_sql


def _items(path: Path, keys: list[str]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": k, "message": f"change {k}", "repo": "r"}) + "\n" for k in keys),
        encoding="utf-8",
    )
    return path


def _votes(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text(
        "item,annotator,label\n" + "".join(f"{i},{a},{lab}\n" for i, a, lab in rows),
        encoding="utf-8",
    )
    return path


def test_by_annotator_counts_only_live_votes_of_the_set(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    keys = [f"c{i}" for i in range(6)]
    items = _items(tmp_path / "items.jsonl", keys)
    cli("import", "items", str(items), "--set", "gt", "--labels", "perf,non-perf")
    cli("import", "items", str(items), "--set", "other", "--labels", "good,bad")
    rows = [(k, who, "perf") for k in keys for who in ("ann", "ben")]
    assert cli("import", "votes", str(_votes(tmp_path / "v.csv", rows))).exit_code == 0
    for k in keys[:2]:  # ann's vote on c0, c1 now counts in `other`, not in gt
        assert cli("vote", k, "good", "--set", "other", "-a", "ann").exit_code == 0
    plain = json.loads(cli("agree", "gt", "--json").output)
    assert plain["votes"] == 10
    quality = json.loads(cli("agree", "gt", "--by-annotator", "--json").output)
    by_name = {q["annotator"]: q for q in quality["annotators"]}
    assert by_name["ann"]["votes"] == 4 and by_name["ben"]["votes"] == 6
    assert sum(w["answers"] for w in by_name["ann"]["windows"]) == 4
    for k in keys:  # every vote of ann moved: she is no longer in the report
        cli("vote", k, "bad", "--set", "other", "-a", "ann")
    quality = json.loads(cli("agree", "gt", "--by-annotator", "--json").output)
    assert [q["annotator"] for q in quality["annotators"]] == ["ben"]


def test_gold_items_that_became_members_do_not_count_toward_the_rate(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = _items(tmp_path / "src.jsonl", [f"s{i}" for i in range(10)])
    cli("import", "items", str(source), "--set", "src", "--votes-per-item", "1")
    rows = [(f"s{i}", "ann", "perf" if i % 2 else "non-perf") for i in range(10)]
    assert cli("import", "votes", str(_votes(tmp_path / "v.csv", rows))).exit_code == 0
    cli("import", "items", str(_items(tmp_path / "gt.jsonl", [f"g{i}" for i in range(20)])),
        "--set", "gt")  # fmt: skip
    first = json.loads(cli("set", "gold", "gt", "--from", "src", "--rate", "0.2", "--json").output)
    assert first["gold_items"] == 4
    with open_store(tmp_path / "cli.db") as s:
        gt = get_set(s, "gt")
        assert gt is not None
        gold = [
            str(r[0])
            for r in raw_sql.query(
                s,
                "SELECT i.key FROM gold_items AS g JOIN items AS i ON i.id = g.item_id"
                " WHERE g.set_id = ? ORDER BY g.position",
                (gt.id,),
            )
        ]
    joined = _items(tmp_path / "join.jsonl", gold[:2])  # two gold items become members
    assert cli("import", "items", str(joined), "--set", "gt").exit_code == 0
    again = json.loads(cli("set", "gold", "gt", "--from", "src", "--rate", "0.2", "--json").output)
    # 22 members at 0.2: 4 hidden gold items wanted; 2 of the first 4 are members now
    assert again["gold_items"] == 4 and again["added"] == 2


def _curve(eval_set: str, f1: float) -> dict[str, object]:
    return {
        "from_model": "student@1",
        "eval": eval_set,
        "start": {"n": 0, "order": "uncertain", "f1": 0.5},
        "points": [{"n": 50, "order": "uncertain", "f1": f1}],
    }


def test_chart_learning_draws_the_model_named_by_labeler(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("import", "items", str(_items(tmp_path / "i.jsonl", ["a"])), "--set", "gt")
    with open_store(tmp_path / "cli.db") as s:
        for n, eval_set in enumerate(["first-eval", "second-eval", None]):
            staged = tmp_path / f"staged{n}"
            staged.mkdir()
            params = {"learning_curve": _curve(eval_set, 0.7)} if eval_set else {}
            register_model(s, "student", "base", params, {}, staged)
    newest = cli("chart", "learning", "--width", "120")
    assert newest.exit_code == 0 and "student@2" in newest.output  # newest with a curve
    named = cli("chart", "learning", "--labeler", "student@1", "--width", "120")
    assert named.exit_code == 0 and "first-eval" in named.output
    assert "student@1" in named.output
    family = cli("chart", "learning", "--labeler", "student", "--width", "120")
    assert family.exit_code == 0 and "second-eval" in family.output
    bare = cli("chart", "learning", "--labeler", "student@3")
    assert bare.exit_code == 1 and bare.output.strip() == (
        "error: student@3 has no learning curve (`curator train --curve ...`)"
    )
    missing = cli("chart", "learning", "--labeler", "student@9")
    assert missing.exit_code == 1 and "no model 'student@9'" in missing.output
    assert "student@1, student@2, student@3" in missing.output
    clash = cli("chart", "learning", "--labeler", "student@1", "--family", "tfidf-lr")
    assert clash.exit_code == 2 and "give one of the two" in clash.output
    no_set = cli("chart", "learning", "--set", "gt")
    assert no_set.exit_code == 2 and "the learning chart reads no set" in no_set.output
    ignored = cli("chart", "labels", "--set", "gt", "--labeler", "student@1")
    assert ignored.exit_code == 2 and "--labeler is for the threshold and learning" in (
        ignored.output
    )


def _same_labels_set(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Set `same`: two annotators, every vote `perf`; keyword@5 predicted every item."""
    keys = [f"s{i}" for i in range(6)]
    items = _items(tmp_path / "same.jsonl", keys)
    assert cli("import", "items", str(items), "--set", "same").exit_code == 0
    rows = [(k, who, "perf") for k in keys for who in ("ann", "ben")]
    assert cli("import", "votes", str(_votes(tmp_path / "same.csv", rows))).exit_code == 0


def test_one_label_only_leaves_kappa_undefined_everywhere(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _same_labels_set(cli, tmp_path)
    table = cli("agree", "same")
    assert table.exit_code == 0 and "nan" not in table.output.lower()
    found = json.loads(cli("agree", "same", "--json").output, parse_constant=_no_constant)
    assert found["fleiss_kappa"] is None and found["krippendorff_alpha"] is None
    assert found["cohen_kappa"][0]["cohen_kappa"] is None
    judged = json.loads(cli("adjudicate", "same", "--json").output, parse_constant=_no_constant)
    assert judged["summary"]["unanimous"] == 6
    assert {a["cohen_kappa_with_final"] for a in judged["annotators"]} == {None}
    chart = cli("chart", "agreement", "--set", "same")
    assert chart.exit_code == 1 and "with one label only, kappa and alpha are undefined" in (
        chart.output
    )


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} is not JSON")


def test_threshold_chart_resolves_latest_and_svg_dash_prints(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _same_labels_set(cli, tmp_path)
    assert cli("predict", "same", "--labeler", "keyword@latest").exit_code == 0
    latest = cli("chart", "threshold", "--set", "same", "--labeler", "keyword@latest")
    assert latest.exit_code == 0, latest.output
    assert "6 settled items" in latest.output
    printed = cli("chart", "labels", "--set", "same", "--svg", "-")
    assert printed.exit_code == 0 and printed.output.startswith("<svg")
    assert not Path("-").exists()


def test_simulate_names_a_missing_label_field_and_counts_bad_rows(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"commit_message": f"speed up {i}" if i % 2 else f"typo {i}", "target": i % 2}
            for i in range(40)]  # fmt: skip
    clean = tmp_path / "eval.jsonl"
    clean.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for row in rows[:9]:
        row["target"] = 7
    path = tmp_path / "lab.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    base = ["simulate", "active-learning", str(path), "--eval", str(clean), "--seeds", "1"]
    cli("import", "items", str(_items(tmp_path / "i.jsonl", ["a"])), "--set", "gt")  # a db
    missing = cli(*base, "--votes", "20", "--no-store")
    assert missing.exit_code == 1
    assert missing.output.strip().splitlines() == [
        f"error: {path}: no row has a value in the label field 'label':"
        " name the file's label field with --label-field"
    ]
    opts = ["--label-field", "target", "--map", "1=perf,0=non-perf", "--no-store"]
    capped = cli(*base, *opts, "--votes", "20")
    assert capped.exit_code == 0, capped.output
    assert capped.output.count("is not in --map; row skipped") == 5
    assert f"{path}: 4 more rows skipped" in capped.output


def test_windows_keep_the_order_of_votes_given_at_one_time(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    keys = [f"w{i:02d}" for i in range(20)]
    cli("import", "items", str(_items(tmp_path / "w.jsonl", keys)), "--set", "gt")
    rows = [(k, who, "perf") for k in keys for who in ("ben", "cat")]
    rows += [(k, "ann", "perf" if i < 10 else "non-perf") for i, k in enumerate(keys)]
    assert cli("import", "votes", str(_votes(tmp_path / "v.csv", rows))).exit_code == 0
    quality = json.loads(cli("agree", "gt", "--by-annotator", "--json").output)
    ann = next(q for q in quality["annotators"] if q["annotator"] == "ann")
    # one import, one timestamp: the file's order is the only order there is
    assert [w["rate"] for w in ann["windows"]] == [1.0, 1.0, 0.0, 0.0]
    assert ann["drifting_since"] is not None


def test_the_agreement_chart_draws_annotators_who_always_disagree(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    keys = [f"d{i}" for i in range(8)]
    cli("import", "items", str(_items(tmp_path / "items.jsonl", keys)), "--set", "gt")
    rows = [(k, "ann", "perf" if i % 2 else "non-perf") for i, k in enumerate(keys)]
    rows += [(k, "ben", "non-perf" if i % 2 else "perf") for i, k in enumerate(keys)]
    assert cli("import", "votes", str(_votes(tmp_path / "v.csv", rows))).exit_code == 0
    assert json.loads(cli("agree", "gt", "--json").output)["fleiss_kappa"] < -0.2
    drawn = cli("chart", "agreement", "--set", "gt")
    assert drawn.exit_code == 0, drawn.output
    assert "Agreement in gt" in drawn.output
