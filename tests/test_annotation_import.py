"""Importing items and votes: formats, set creation, errors naming file and line, no
partial imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.importing import FileImportError, import_items_file, import_votes_file
from store import Store
from store.sets import get_set, set_item_ids
from store.votes import live_votes_for_items
from tests import raw_sql


def _model_input(message: str, diff: str) -> str:
    return f"{message}\n{diff}"


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _items(tmp_path: Path, store: Store, n: int = 3, set_name: str | None = "gt") -> list[str]:
    rows = [
        {"id": f"x{i}", "message": f"msg {i}", "repo": f"r{i % 2}", "language": "c"}
        for i in range(n)
    ]
    import_items_file(
        store, _jsonl(tmp_path / "items.jsonl", rows), "commit", _model_input, set_name
    )
    return [r["id"] for r in rows]


def test_items_go_into_a_new_set(tmp_path: Path, store: Store) -> None:
    path = _jsonl(tmp_path / "i.jsonl", [{"id": 7, "message": "faster", "diff": "+x", "stars": 3}])
    result = import_items_file(store, path, "commit", _model_input, "gt", ["yes", "no"])
    assert (result.stored, result.known, result.added_to_set, result.set_created) == (1, 0, 1, True)
    found = get_set(store, "gt")
    assert found is not None and found.labels == ["yes", "no"]
    item = raw_sql.query(store, "SELECT key, source, provenance FROM items")[0]
    assert item[0] == "7" and item[1] == "import:i.jsonl"
    assert json.loads(item[2])["stars"] == 3
    assert raw_sql.scalar(store, "SELECT model_input FROM commits") == "faster\n+x"
    again = import_items_file(store, path, "commit", _model_input, "gt")
    assert (again.stored, again.known, again.added_to_set) == (0, 1, 0)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": "a", "message": "ok"}', "{not json"], "i.jsonl:2: malformed JSON"),
        (['{"id": "a", "message": "ok"}', '{"message": "no id"}'], "i.jsonl:2: missing 'id'"),
        (['{"id": "a"}'], "i.jsonl:1: missing 'message'"),
        (['{"id": "a", "message": "x"}', '{"id": "a", "message": "y"}'], "already on line 1"),
        (['["a list"]'], "i.jsonl:1: expected a JSON object"),
        (['{"id": "a", "message": "x", "stars": -1}'], "'stars' must be"),
    ],
)
def test_bad_item_lines_name_file_and_line_and_import_nothing(
    tmp_path: Path, store: Store, lines: list[str], message: str
) -> None:
    path = _jsonl(tmp_path / "i.jsonl", lines)
    with pytest.raises(FileImportError) as info:
        import_items_file(store, path, "commit", _model_input, "gt")
    assert any(message in e for e in info.value.errors)
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
    assert get_set(store, "gt") is None


def test_non_utf8_line_is_named(tmp_path: Path, store: Store) -> None:
    path = tmp_path / "i.jsonl"
    path.write_bytes(b'{"id": "a", "message": "ok"}\n{"id": "b", "message": "\xff"}\n')
    with pytest.raises(FileImportError, match=r"i\.jsonl:2: not UTF-8"):
        import_items_file(store, path, "commit", _model_input)


def test_votes_from_csv_and_jsonl(tmp_path: Path, store: Store) -> None:
    keys = _items(tmp_path, store)
    csv_path = tmp_path / "v.csv"
    csv_path.write_text(
        "item,annotator,label,category,note\n"
        f'{keys[0]},ann,perf,memory-inefficiency,"a note, with comma"\n'
        f"{keys[1]},ann,non-perf,,\n"
    )
    parsed = import_votes_file(store, csv_path)
    assert len(parsed.rows) == 2 and parsed.annotators == ["ann"]
    jsonl = _jsonl(tmp_path / "v.jsonl", [{"item": keys[0], "annotator": "bob", "label": "skip"}])
    import_votes_file(store, jsonl)
    gt = get_set(store, "gt")
    assert gt is not None
    live = live_votes_for_items(store, set_item_ids(store, gt.id))
    assert {(v.annotator, v.label) for v in live} == {
        ("ann", "perf"),
        ("ann", "non-perf"),
        ("bob", "skip"),
    }
    note = next(v.note for v in live if v.label == "perf")
    assert note == "a note, with comma"
    again = import_votes_file(store, csv_path)
    assert (len(again.rows), again.unchanged) == (0, 2)
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("item,annotator\nx0,ann\n", "v.csv:1: missing column 'label'"),
        ("item,annotator,label\nx0,ann,perf\nnope,ann,perf\n", "v.csv:3: unknown item 'nope'"),
        (
            "item,annotator,label\nx0,ann,perf\nx1,ann,fast\n",
            "v.csv:3: label 'fast' is not one of perf, non-perf, skip",
        ),
        ("item,annotator,label\nx0,,perf\n", "v.csv:2: missing 'annotator'"),
    ],
)
def test_bad_vote_files_name_the_line_and_import_nothing(
    tmp_path: Path, store: Store, content: str, message: str
) -> None:
    _items(tmp_path, store)
    path = tmp_path / "v.csv"
    path.write_text(content)
    with pytest.raises(FileImportError) as info:
        import_votes_file(store, path)
    assert any(message in e for e in info.value.errors), info.value.errors
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0


def test_malformed_vote_jsonl_line(tmp_path: Path, store: Store) -> None:
    keys = _items(tmp_path, store)
    path = _jsonl(
        tmp_path / "v.jsonl", [{"item": keys[0], "annotator": "a", "label": "perf"}, '{"item": ']
    )
    with pytest.raises(FileImportError, match=r"v\.jsonl:2: malformed JSON"):
        import_votes_file(store, path)
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0


def test_missing_file(tmp_path: Path, store: Store) -> None:
    with pytest.raises(FileImportError, match="no such file"):
        import_votes_file(store, tmp_path / "nothing.csv")


def test_a_file_without_ids_is_one_line_with_the_labeled_file_options(
    tmp_path: Path, store: Store
) -> None:
    rows = [{"idx": i, "commit_message": f"speed up {i}", "target": i % 2} for i in range(50)]
    path = _jsonl(tmp_path / "train.jsonl", rows)
    with pytest.raises(FileImportError) as caught:
        import_items_file(store, path, "commit", _model_input)
    assert len(caught.value.errors) == 1
    line = caught.value.errors[0]
    assert "train.jsonl: no line has an 'id'" in line and "'commit_message'" in line
    assert "--label-field" in line and "\n" not in line


def test_a_folder_is_named_as_one(tmp_path: Path, store: Store) -> None:
    (tmp_path / "votes.jsonl").mkdir()
    with pytest.raises(FileImportError, match=r"votes\.jsonl: a folder, not a JSONL or CSV"):
        import_votes_file(store, tmp_path / "votes.jsonl")


def test_kernel_items_are_pointed_to_their_miner(tmp_path: Path, store: Store) -> None:
    path = _jsonl(tmp_path / "k.jsonl", [{"id": "k1", "source": "__kernel void A() {}"}])
    with pytest.raises(FileImportError, match="curator mine kernels PATH"):
        import_items_file(store, path, "kernel", _model_input)
