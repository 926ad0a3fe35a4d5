"""Importing items and votes: formats, set creation, errors naming file and line, no
partial imports."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from annotation.importing import (
    FileImportError,
    import_items_file,
    import_votes_file,
    imported_set,
)
from store import Store, open_store
from store.sets import create_set, get_set, set_item_ids
from store.votes import live_votes_for_items
from tests import raw_sql


def _model_input(message: str, diff: str, path: str | None = None) -> str:
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
    assert parsed.votes == 2 and parsed.annotators == ["ann"]
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
    assert (again.votes, again.unchanged) == (0, 2)
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


def test_stars_come_from_csv_digits_and_fit_in_64_bits(tmp_path: Path, store: Store) -> None:
    # a CSV's "5" was refused as no integer; true and 10**23 went in, and the huge one
    # later broke `export --format parquet` with an OverflowError
    csv_path = tmp_path / "it.csv"
    csv_path.write_text("id,message,repo,stars\nc1,hello,r,5\nc2,hi,r,\n")
    assert import_items_file(store, csv_path, "commit", _model_input).stored == 2
    provenance = dict(raw_sql.query(store, "SELECT key, provenance FROM items ORDER BY key"))
    assert json.loads(str(provenance["c1"]))["stars"] == 5  # a number, as JSON gives it
    assert "stars" not in json.loads(str(provenance["c2"]))  # a blank cell: not known
    path = _jsonl(
        tmp_path / "s.jsonl",
        [
            {"id": "s1", "message": "m", "stars": True},
            {"id": "s2", "message": "m", "stars": 10**23},
            {"id": "s3", "message": "m", "stars": 2**63 - 1},
            {"id": "s4", "message": "m", "stars": "many"},
        ],
    )
    with pytest.raises(FileImportError) as info:
        import_items_file(store, path, "commit", _model_input)
    assert info.value.errors == [
        f"{path}:1: 'stars' must be a whole number from 0 to {2**63 - 1}, not true",
        f"{path}:2: 'stars' must be a whole number from 0 to {2**63 - 1}, not {10**23}",
        f"{path}:4: 'stars' must be a whole number from 0 to {2**63 - 1}, not 'many'",
    ]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 2


def test_vote_fields_that_are_no_text_are_named_by_line(tmp_path: Path, store: Store) -> None:
    # "annotator": true was stored as the annotator "True", a note object as its JSON
    keys = _items(tmp_path, store)
    path = _jsonl(
        tmp_path / "v.jsonl",
        [
            {"item": keys[0], "annotator": True, "label": "perf"},
            {"item": keys[1], "annotator": "ann", "label": "perf", "note": {"x": 1}},
            {"item": keys[2], "annotator": "ann", "label": ["perf"]},
            {"item": keys[2], "annotator": "ann", "label": "perf", "category": None},
        ],
    )
    with pytest.raises(FileImportError) as info:
        import_votes_file(store, path)
    assert info.value.errors == [
        f"{path}:1: 'annotator' must be a string, not true",
        f"{path}:2: 'note' must be a string, not an object",
        f"{path}:3: 'label' must be a string, not a list",
    ]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0


def _import_items(store: Store, path: Path) -> str:
    result = import_items_file(store, path, "commit", _model_input, "NEW")
    return "created" if result.set_created else "joined"


def _import_labeled(store: Store, path: Path) -> str:
    from annotation.labeled_import import LabeledSpec, import_labeled_file

    spec = LabeledSpec(set_name="NEW", label_field="t", mapping={"1": "perf", "0": "non-perf"})
    result = import_labeled_file(store, path, spec, _model_input)
    assert not result.errors, result.errors
    return "created" if result.set_created else "joined"


def _import_prodigy(store: Store, path: Path) -> str:
    from curator.interop import import_file

    return "created" if import_file(store, "prodigy", path, "NEW").set_created else "joined"


@pytest.mark.parametrize("importer", [_import_items, _import_labeled, _import_prodigy])
def test_an_import_joins_the_set_another_import_just_created(
    tmp_path: Path, importer: Callable[[Store, Path], str]
) -> None:
    # two imports naming one new set at once: the second failed with "a set named 'NEW'
    # already exists", having looked for the set before it waited for the write lock
    rows = [{"id": "c2", "message": "m", "t": 1, "text": "m", "meta": {"id": "c2"}}]
    path = _jsonl(tmp_path / "i2.jsonl", rows)
    db = tmp_path / "race.db"
    with open_store(db) as first, open_store(db) as second:
        outcome: list[object] = []
        with first.transaction():  # the other import holds the write lock...
            worker = threading.Thread(
                target=lambda: outcome.append(_call(importer, second, path)), daemon=True
            )
            worker.start()
            time.sleep(0.5)  # ...while this one reads its file and waits for the lock
            create_set(first, imported_set("NEW", "commit", None, "items.jsonl", 1))
        worker.join(timeout=30)
        assert outcome == ["joined"]
        found = get_set(second, "NEW")
        assert found is not None and len(set_item_ids(second, found.id)) == 1


def _call(importer: Callable[[Store, Path], str], store: Store, path: Path) -> object:
    try:
        return importer(store, path)
    except Exception as exc:  # the assertion shows what went wrong in the thread
        return exc
