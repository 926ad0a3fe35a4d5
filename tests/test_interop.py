"""Prodigy and Label Studio: their files (sample_data/interop/, written from each tool's
documented format) import as sets and votes, a set exports in their format, and a
round trip ours -> theirs -> ours keeps every vote, annotator, category and note."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from store import open_store
from store.sets import get_set
from store.votes import live_votes_in_set

ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT / "sample_data" / "interop"
SAMPLE = ROOT / "sample_data" / "annotation"

Vote = tuple[str, str, str, str, str | None, str | None]


def live(db: Path, set_name: str) -> set[Vote]:
    """(item, annotator, role, label, category, note) of every live vote in the set."""
    with open_store(db, create=False) as store:
        found = get_set(store, set_name)
        assert found is not None
        from store.items import item_summaries

        votes = live_votes_in_set(store, found.id)
        keys = {i: s["key"] for i, s in item_summaries(store, [v.item_id for v in votes]).items()}
        return {(keys[v.item_id], v.annotator, v.role, v.label, v.category, v.note) for v in votes}


def set_keys(db: Path, set_name: str) -> list[str]:
    with open_store(db, create=False) as store:
        from store.items import item_summaries
        from store.sets import set_item_ids

        found = get_set(store, set_name)
        assert found is not None
        ids = set_item_ids(store, found.id)
        summaries = item_summaries(store, ids)
        return [summaries[i]["key"] for i in ids]


def test_prodigy_binary_and_choice_tasks_become_votes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("import", "prodigy", str(INTEROP / "prodigy.jsonl"), "--set", "perf-review")
    assert done.exit_code == 0, done.output
    assert "4 new items" in done.stdout and "6 votes from 2 annotators" in done.stdout
    category = "inefficient-algorithm-data-structure/suboptimal-data-structures"
    assert live(tmp_path / "cli.db", "perf-review") == {
        ("pd-1", "alice", "annotator", "perf", None, None),
        ("pd-1", "bob", "annotator", "perf", None, None),
        ("pd-2", "alice", "annotator", "non-perf", None, None),  # reject of PERF
        ("pd-2", "bob", "annotator", "skip", None, None),  # ignore
        ("pd-3", "alice", "annotator", "perf", category, None),
        ("pd-3", "bob", "annotator", "non-perf", None, "heap insert is O(log n)"),
    }
    assert set_keys(tmp_path / "cli.db", "perf-review") == ["pd-1", "pd-2", "pd-3", "pd-4"]
    again = cli("import", "prodigy", str(INTEROP / "prodigy.jsonl"), "--set", "perf-review")
    assert "0 votes" in again.stdout and "6 already recorded" in again.stdout


def test_label_studio_annotations_become_votes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("import", "label-studio", str(INTEROP / "label-studio.json"), "--set", "ls")
    assert done.exit_code == 0, done.output
    assert live(tmp_path / "cli.db", "ls") == {
        (
            "ls-1",
            "carol@example.org",
            "annotator",
            "perf",
            "memory-inefficiency/unnecessary-memory-allocation",
            None,
        ),
        ("ls-1", "dan@example.org", "annotator", "perf", None, "allocation moved out of the loop"),
        ("ls-2", "carol@example.org", "annotator", "non-perf", None, None),
        ("ls-2", "label-studio-user-2", "annotator", "skip", None, None),  # was_cancelled
    }
    assert set_keys(tmp_path / "cli.db", "ls") == ["ls-1", "ls-2", "ls-3"]


@pytest.fixture
def voted(cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """gt-sample with three annotators' votes, plus an adjudicator's vote with a note."""
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    adjudicated = cli(
        "vote",
        "ex-002",
        "perf",
        "--set",
        "gt-sample",
        "--adjudicate",
        "--annotator",
        "judge",
        "--category",
        "inefficient-i-o",
        "--note",
        'settled: "cache" in the title',
    )
    assert adjudicated.exit_code == 0, adjudicated.output
    return tmp_path / "cli.db"


@pytest.mark.parametrize(
    ("fmt", "extra"), [("prodigy", []), ("prodigy", ["--binary"]), ("label-studio", [])]
)
def test_round_trip_keeps_every_vote(
    cli, voted: Path, tmp_path: Path, fmt: str, extra: list[str]
) -> None:  # type: ignore[no-untyped-def]
    before = live(voted, "gt-sample")
    assert any(v[4] for v in before) and any(v[3] == "skip" for v in before)
    out = tmp_path / ("tasks.jsonl" if fmt == "prodigy" else "tasks.json")
    exported = cli("export", fmt, "gt-sample", "--out", str(out), *extra)
    assert exported.exit_code == 0, exported.output
    other = tmp_path / "other.db"
    done = cli("--db", str(other), "import", fmt, str(out), "--set", "gt-sample")
    assert done.exit_code == 0, done.output
    assert live(other, "gt-sample") == before
    assert set_keys(other, "gt-sample") == set_keys(voted, "gt-sample")


def test_an_export_to_dash_goes_to_standard_output(
    cli, voted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """``--out -`` is standard output, as for ``eval`` and ``chart``; it wrote a file
    named ``-``, which the next such export then refused to replace."""
    monkeypatch.chdir(tmp_path)
    for fmt in ("prodigy", "label-studio", "prodigy"):
        done = cli("export", fmt, "gt-sample", "--out", "-")
        assert done.exit_code == 0, done.output
        assert not (tmp_path / "-").exists()
        if fmt == "prodigy":
            tasks = [json.loads(x) for x in done.stdout.splitlines()]
        else:
            tasks = json.loads(done.stdout)
        assert len({t["meta"]["id"] if fmt == "prodigy" else t["id"] for t in tasks}) == 40
        assert "40 items" in done.stderr


def test_exports_follow_each_tool_s_shape(cli, voted: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("export", "prodigy", "gt-sample", "--out", str(tmp_path / "p.jsonl")).exit_code == 0
    lines = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    judged = [x for x in lines if x.get("_annotator_id") == "gt-sample-judge"]
    assert len(judged) == 1 and judged[0]["meta"]["role"] == "adjudicator"
    assert judged[0]["accept"] == ["perf", "inefficient-i-o"] and judged[0]["answer"] == "accept"
    for line in lines:
        assert isinstance(line["_input_hash"], int) and -(2**31) <= line["_task_hash"] < 2**31
        assert {o["id"] for o in line["options"]} >= {"perf", "non-perf"}
    assert (
        cli("export", "label-studio", "gt-sample", "--out", str(tmp_path / "ls.json")).exit_code
        == 0
    )
    tasks = json.loads((tmp_path / "ls.json").read_text())
    assert len(tasks) == 40 and all({"id", "data", "annotations"} <= set(t) for t in tasks)
    config = ET.fromstring((tmp_path / "ls.label-config.xml").read_text())
    label = config.find("Choices[@name='label']")
    assert label is not None and [c.get("value") for c in label] == ["perf", "non-perf"]
    binary = cli("export", "prodigy", "nope", "--out", str(tmp_path / "x.jsonl"))
    assert binary.exit_code == 1 and "no set named 'nope'" in binary.output


def test_an_export_never_overwrites_the_database_a_folder_or_a_file_unasked(  # type: ignore[no-untyped-def]
    cli, voted: Path, tmp_path: Path
) -> None:
    before = voted.read_bytes()[:16]
    over_db = cli("export", "prodigy", "gt-sample", "--out", str(voted), "--force")
    assert over_db.exit_code == 2 and "is the database" in over_db.output
    assert voted.read_bytes()[:16] == before and live(voted, "gt-sample")
    kept = tmp_path / "kept.jsonl"
    kept.write_text("mine\n")
    kept.chmod(0o644)
    refused = cli("export", "prodigy", "gt-sample", "--out", str(kept))
    assert refused.exit_code == 2 and "already exists (use --force" in refused.output
    assert kept.read_text() == "mine\n"
    assert cli("export", "prodigy", "gt-sample", "--out", str(kept), "--force").exit_code == 0
    assert kept.read_text() != "mine\n" and kept.stat().st_mode & 0o777 == 0o644
    (tmp_path / "pair.label-config.xml").mkdir()
    pair = cli("export", "label-studio", "gt-sample", "--out", str(tmp_path / "pair.json"))
    assert pair.exit_code == 2 and "pair.label-config.xml is a folder" in pair.output
    assert not (tmp_path / "pair.json").exists()  # neither half written


def test_bad_lines_are_named_and_nothing_is_stored(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.jsonl"
    good = (INTEROP / "prodigy.jsonl").read_text().splitlines()
    bad.write_text(
        "\n".join(
            [
                good[0],
                good[1].replace('"accept"', '"maybe"'),
                good[2].replace('"PERF"', '"FAST"'),
                "{not json",
            ]
        )
        + "\n"
    )
    done = cli("import", "prodigy", str(bad), "--set", "perf-review")
    assert done.exit_code == 1
    # unreadable lines and a label the set lacks, named in one run (once: one per run)
    assert f"{bad}:2: answer must be one of accept, reject, ignore" in done.output
    assert f"{bad}:3: label 'FAST' is not one of perf, non-perf" in done.output
    assert f"{bad}:4: malformed JSON" in done.output
    assert "nothing imported" in done.output
    with open_store(tmp_path / "cli.db") as store:
        assert get_set(store, "perf-review") is None  # the transaction rolled back
    broken = tmp_path / "broken.json"
    broken.write_text(
        '[{"data": {"text": "x"}, "annotations": [{"result": []}]},'
        ' {"id": 12, "data": {"text": "y", "item": "i"}, "annotations": [{"result": []}]}]'
    )
    ls = cli("import", "label-studio", str(broken), "--set", "ls")
    assert ls.exit_code == 1
    assert f"{broken}: task at position 1: a task needs an 'id' or data.item" in ls.output
    assert f"{broken}: task at position 1 annotation 1: an annotation needs" in ls.output
    assert f"{broken}: task 12 (position 2) annotation 1: an annotation needs" in ls.output
    assert os.path.exists(tmp_path / "cli.db")


@pytest.mark.parametrize("name", ["zo\x1b[31me", "zo\u202ee", "zo\ne"])
def test_annotator_names_with_control_characters_are_refused_in_either_format(
    cli, tmp_path: Path, name: str
) -> None:  # type: ignore[no-untyped-def]
    lines = (INTEROP / "prodigy.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["_annotator_id"] = record["_session_id"] = f"perf-review-{name}"
    prodigy = tmp_path / "prodigy.jsonl"
    prodigy.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    done = cli("import", "prodigy", str(prodigy), "--set", "perf-review")
    assert done.exit_code == 1
    assert f"{prodigy}:2: annotator name {name!a} holds the control" in done.output
    tasks = json.loads((INTEROP / "label-studio.json").read_text())
    tasks[0]["annotations"][1]["completed_by"] = {"id": 2, "email": f"{name}@example.org"}
    studio = tmp_path / "label-studio.json"
    studio.write_text(json.dumps(tasks))
    ls = cli("import", "label-studio", str(studio), "--set", "ls")
    assert ls.exit_code == 1
    where = f"{studio}: task 7 (position 1) annotation 2: "
    assert f"{where}annotator name {name + '@example.org'!a} holds the control" in ls.output
    with open_store(tmp_path / "cli.db") as store:  # neither import stored anything
        assert get_set(store, "perf-review") is None and get_set(store, "ls") is None


def _studio_task(**changes: object) -> list[dict[str, object]]:
    """One Label Studio task (id 41) with one annotation, with ``changes`` applied at
    dotted paths (``data.repo``, ``annotation.completed_by``)."""
    annotation: dict[str, object] = {
        "completed_by": 3,
        "result": [{"value": {"choices": ["perf"]}}],
    }
    task: dict[str, object] = {
        "id": 41,
        "data": {"text": "Speed up parser", "item": "ls-41"},
        "annotations": [annotation],
    }
    for path, value in changes.items():
        where, _, name = path.rpartition(".")
        target = {"annotation": annotation, "data": task["data"], "": task}[where]
        assert isinstance(target, dict)
        target[name] = value
    return [task]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"data.text": "fast\ud800"}, "data/text"),
        ({"data.item": "ls-\ud800"}, "data/item"),
        ({"data.repo": "\udc00"}, "data/repo"),
        ({"data.diff": "+\ud83d"}, "data/diff"),
        ({"annotation.completed_by": {"id": 3, "email": "\ud800@x.org"}}, "completed_by/email"),
        (
            {
                "annotation.result": [
                    {"value": {"choices": ["perf"]}},
                    {"value": {"text": ["\udfff"]}},
                ]
            },
            "result/1/value/text/0",
        ),
    ],
)
def test_a_lone_surrogate_in_a_label_studio_task_is_named_by_task(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, changes: dict[str, object], field: str
) -> None:
    # was "error: unexpected UnicodeEncodeError ..." naming no file, task or field
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(_studio_task(**changes)))  # json escapes them as \udXXX
    done = cli("import", "label-studio", str(path), "--set", "ls")
    assert done.exit_code == 1 and "unexpected" not in done.output
    assert f"error: {path}: task 41 (position 1): field '" in done.output
    assert f"{field}' holds a lone surrogate" in done.output
    with open_store(tmp_path / "cli.db") as store:
        assert get_set(store, "ls") is None


def test_wrong_types_in_prodigy_lines_are_all_named_at_once(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # each was stored as JSON text ('["p1"]' as a key, 7 as annotator "7", a "boss" role
    # as an annotator), and the first bad line hid the others until it was fixed
    def line(meta: dict[str, object], **extra: object) -> str:
        task = {"text": "t", "meta": meta, "answer": "accept", "label": "perf"}
        return json.dumps({**task, "_annotator_id": "perf-review-ann", **extra})

    path = tmp_path / "p.jsonl"
    path.write_text(
        "\n".join(
            [
                line({"id": ["p1"]}),
                line({"id": "p2", "repo": {"a": 1}}),
                line({"id": "p3", "language": ["x"]}),
                line({"id": "p4"}, _annotator_id=7),
                line({"id": "p5", "role": "boss"}),
                line({"id": "p6"}, label="FAST"),
                line({"id": "p7", "note": {"x": 1}}),
                line({"id": "p8"}),
            ]
        )
        + "\n"
    )
    done = cli("import", "prodigy", str(path), "--set", "perf-review")
    assert done.exit_code == 1
    *errors, last = done.stderr.splitlines()
    assert last == f"error: {path}: nothing imported"
    assert sorted(errors) == [
        f"error: {path}:1: 'meta.id' must be a string, not a list",
        f"error: {path}:2: 'meta.repo' must be a string, not an object",
        f"error: {path}:3: 'meta.language' must be a string, not a list",
        f"error: {path}:4: '_annotator_id' must be a string, not 7",
        f"error: {path}:5: 'meta.role' must be annotator or adjudicator, not \"boss\"",
        f"error: {path}:6: label 'FAST' is not one of perf, non-perf",
        f"error: {path}:7: 'meta.note' must be a string, not an object",
    ]
    with open_store(tmp_path / "cli.db") as store:
        assert get_set(store, "perf-review") is None


def test_wrong_types_in_label_studio_tasks_are_all_named_at_once(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tasks = [
        *_studio_task(**{"annotation.completed_by": True}),
        *_studio_task(id=42, **{"data.item": None}),
        *_studio_task(id=None, **{"data.item": None}),
        *_studio_task(id=44, **{"data.item": ["x"], "annotation.ground_truth": "no"}),
        *_studio_task(
            id=45, **{"data.item": "ls-45", "annotation.result": [{"value": {"choices": ["FAST"]}}]}
        ),
        *_studio_task(
            id=46, **{"data.item": "ls-46", "annotation.result": [{"value": {"text": [{"x": 1}]}}]}
        ),
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    done = cli("import", "label-studio", str(path), "--set", "ls")
    assert done.exit_code == 1
    errors = [x for x in done.stderr.splitlines() if x.startswith(f"error: {path}: task")]
    assert sorted(errors) == sorted(
        f"error: {path}: {line}"
        for line in [
            "task 41 (position 1) annotation 1: 'completed_by' must be a user id (a number)"
            " or an object, not true",
            "task at position 3: a task needs an 'id' or data.item (the item's external id)",
            "task 44 (position 4): 'data.item' must be a string, not a list",
            "task 44 (position 4) annotation 1: 'ground_truth' must be true or false, not \"no\"",
            "task 45 (position 5) annotation 1: choice 'FAST' is neither a label (perf, non-perf)"
            " nor a category",
            "task 46 (position 6) annotation 1: 'value.text' must be a list of strings, not of"
            " an object",
        ]
    )  # task 42 has no data.item but an id: it is read as label-studio:42
    with open_store(tmp_path / "cli.db") as store:
        assert get_set(store, "ls") is None


def test_label_studio_annotators_follow_one_rule(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # {"id": 5} was "5", 5 was "label-studio-user-5": one user under two names
    by = [
        ({"id": 5}, None),
        (5, None),
        ({"id": 6, "email": "eve@example.org"}, None),
        (7, "gus@example.org, 7"),
        ({"id": 8}, "hal, 8"),
    ]
    tasks = []
    for n, (completed_by, username) in enumerate(by, start=1):
        task = _studio_task(
            id=n, **{"data.item": f"u-{n}", "annotation.completed_by": completed_by}
        )
        if username:
            task[0]["annotations"][0]["created_username"] = username  # type: ignore[index]
        tasks += task
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    done = cli("import", "label-studio", str(path), "--set", "ls")
    assert done.exit_code == 0, done.output
    assert {(v[0], v[1]) for v in live(tmp_path / "cli.db", "ls")} == {
        ("u-1", "label-studio-user-5"),
        ("u-2", "label-studio-user-5"),
        ("u-3", "eve@example.org"),
        ("u-4", "gus@example.org"),
        ("u-5", "hal"),
    }
