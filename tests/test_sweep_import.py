"""Files a researcher brings to ``curator import items|votes``: spreadsheet exports
(``;``, byte-order marks, UTF-16, Latin-1), JSON that is not JSON Lines, repeated and
colliding ids, labeled files with odd fields; each problem one ``FILE:LINE`` line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotation.importing import FileImportError, import_items_file
from annotation.labeled_import import LabeledSpec, import_labeled_file
from curator.cli import app
from store import Store, open_store
from tests import raw_sql


def _model_input(message: str, diff: str, path: str | None = None) -> str:
    return f"{message}\n{diff}"


def run(db: Path, *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["--db", str(db), *args], env={"COLUMNS": "300"})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output, result.output
    return result


def errors(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in result.stderr.splitlines() if line.startswith("error: ")]


def scalar(db: Path, sql: str) -> object:
    with open_store(db) as store:
        return raw_sql.scalar(store, sql)


def messages(db: Path) -> dict[str, str]:
    with open_store(db) as store:
        rows = raw_sql.query(
            store, "SELECT i.key, c.message FROM items i JOIN commits c ON c.item_id = i.id"
        )
    return {str(row[0]): str(row[1]) for row in rows}


EXCEL = (
    b"\xef\xbb\xbfid;message;verdict;\r\n"
    b'c1;"speed up loop\r\nsecond line";yes;\r\n'
    b"c2;rename var;no;\r\n"
)


def test_an_excel_csv_with_semicolons_bom_crlf_and_a_trailing_column_goes_in(
    tmp_path: Path,
) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(EXCEL)
    db = tmp_path / "x.db"
    plain = run(db, "import", "items", str(path))
    assert plain.exit_code == 0, plain.output
    assert messages(db) == {"c1": "speed up loop\nsecond line", "c2": "rename var"}
    labeled = run(
        db, "import", "items", str(path), "--set", "gt", "--label-field", "verdict",
        "--map", "yes=perf,no=non-perf",
    )  # fmt: skip
    assert labeled.exit_code == 0, labeled.output
    assert scalar(db, "SELECT COUNT(*) FROM votes") == 2


def test_a_votes_csv_with_semicolons_goes_in(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "c1", "message": "m"}) + "\n")
    assert run(db, "import", "items", str(items), "--set", "gt").exit_code == 0
    votes = tmp_path / "votes.csv"
    votes.write_bytes(b'\xef\xbb\xbfitem;annotator;label;note;\r\nc1;Ann Lee;perf;"a;\r\nb";\r\n')
    result = run(db, "import", "votes", str(votes))
    assert result.exit_code == 0, result.output
    assert "ignored" not in result.stderr
    with open_store(db) as store:
        assert [
            tuple(r) for r in raw_sql.query(store, "SELECT annotator, label, note FROM votes")
        ] == [("Ann Lee", "perf", "a;\nb")]


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_utf16_with_its_byte_order_mark_is_read(tmp_path: Path, suffix: str) -> None:
    text = (
        'id,message\r\nc1,"café"\r\n'
        if suffix == "csv"
        else json.dumps({"id": "c1", "message": "café"}, ensure_ascii=False) + "\n"
    )
    path = tmp_path / f"u16.{suffix}"
    path.write_bytes(text.encode("utf-16"))
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 0, result.output
    assert messages(db) == {"c1": "café"}


def test_latin1_names_line_byte_and_column_and_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l1.csv"
    path.write_bytes("id,message\nc1,café\nc2,naïve\n".encode("latin-1"))
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:2: not UTF-8 text (byte 0xe9 at column 7); save the file as UTF-8,"
        f" e.g. iconv -f cp1252 -t utf-8 {path} > NEW",
        f"error: {path}:3: not UTF-8 text (byte 0xef at column 6)",
    ]
    assert scalar(db, "SELECT COUNT(*) FROM items") == 0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[{"id": "a", "message": "m"},\n {"id": "b", "message": "n"}]\n',
            "a JSON array, not JSON Lines (one object per line); convert it with: jq -c '.[]'",
        ),
        ('[{"id": "a", "message": "m"}]', "a JSON array, not JSON Lines"),
        (
            '{\n  "id": "a",\n  "message": "m"\n}\n{\n  "id": "b",\n  "message": "n"\n}\n',
            "objects spread over several lines, not JSON Lines (one object per line);"
            " convert it with: jq -c .",
        ),
    ],
)
def test_json_that_is_not_json_lines_is_one_error(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(text)
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert len(errors(result)) == 1
    assert errors(result)[0].startswith(f"error: {path}:1: {problem}")
    assert scalar(db, "SELECT COUNT(*) FROM items") == 0


@pytest.mark.parametrize(
    ("second", "problem"),
    [
        ({"id": "a", "message": "m"}, "id 'a' already on line 1 (the same record)"),
        ({"id": "a", "message": "other"}, "id 'a' already on line 1 (a different record)"),
        ({"id": 1.5, "message": "m"}, "'id' must be a string or a whole number, not 1.5"),
        ({"id": "b", "message": "  "}, "'message' is empty"),
    ],
)
def test_bad_second_line_is_named_and_nothing_is_stored(
    tmp_path: Path, store: Store, second: dict[str, object], problem: str
) -> None:
    path = tmp_path / "i.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ({"id": "a", "message": "m"}, second)))
    with pytest.raises(FileImportError) as info:
        import_items_file(store, path, "commit", _model_input, "gt")
    assert info.value.errors == [f"{path}:2: {problem}"]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0


def test_a_huge_repeated_id_is_shortened_so_the_problem_shows(tmp_path: Path, store: Store) -> None:
    key = "k" * 10_000
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps({"id": key, "message": "m"}) + "\n" + json.dumps({"id": key}) + "\n")
    with pytest.raises(FileImportError) as info:
        import_items_file(store, path, "commit", _model_input)
    (line,) = info.value.errors
    assert line.startswith(f"{path}:2: id ")
    assert len(line) - len(str(path)) < 150  # the id is cut, the reason is whole
    assert line.endswith("already on line 1 (a different record)")


def test_a_csv_row_is_named_by_the_line_it_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "ml.csv"
    path.write_text('id,message\n\nc1,"one\ntwo"\n\nc2,"multi\nline",extra\n')
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert errors(result) == [
        f"error: {path}:6: 3 fields, but the header has 2 (a ',' inside an unquoted value?)"
    ]


def test_a_label_field_missing_from_a_csv_header_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_text("id,message,verdict\nc1,m,yes\n")
    db = tmp_path / "x.db"
    result = run(
        db, "import", "items", str(path), "--set", "gt", "--label-field", "verdikt",
        "--map", "yes=perf,no=non-perf",
    )  # fmt: skip
    assert result.exit_code == 2
    assert errors(result) == [
        f"error: {path}: --label-field 'verdikt': no row of the file has a value there"
        " (the rows have 'id', 'message', 'verdict')"
    ]
    assert scalar(db, "SELECT COUNT(*) FROM sets") == 0


def test_labeled_rows_text_field_not_text_json_booleans_and_repeated_ids(tmp_path: Path) -> None:
    path = tmp_path / "lab.jsonl"
    rows = [
        {"id": "a", "msg": "faster loop", "t": True},
        {"id": "b", "msg": {"subject": "x"}, "t": False},
        {"id": "c", "msg": "rename", "t": False},
        {"id": "a", "msg": "faster loop", "t": True},
        {"id": "c", "msg": "something else", "t": False},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "x.db"
    result = run(
        db, "import", "items", str(path), "--set", "gt", "--label-field", "t",
        "--map", "true=perf,false=non-perf", "--text-field", "msg",
    )  # fmt: skip
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:2: 'msg' must be a string, not an object",
        f"error: {path}:4: id 'a' already on line 1 (the same message and label)",
        f"error: {path}:5: id 'c' already on line 3 (with a different message)",
    ]
    with open_store(db) as store:
        assert sorted(row[0] for row in raw_sql.query(store, "SELECT label FROM votes")) == [
            "non-perf",
            "perf",
        ]


def test_an_id_stored_with_another_message_is_a_warning(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    first = tmp_path / "first.jsonl"
    first.write_text(
        json.dumps({"id": "s1", "message": "Speed up the loop\n\nby caching", "repo": "r"})
        + "\n"
        + json.dumps({"id": "s2", "message": "fix typo", "repo": "r"})
        + "\n"
    )
    assert run(db, "import", "items", str(first)).exit_code == 0
    second = tmp_path / "second.jsonl"
    second.write_text(
        json.dumps({"id": "s1", "message": "speed up the loop  by caching"})
        + "\n"
        + json.dumps({"id": "s2", "message": "a different commit"})
        + "\n"
    )
    plain = run(db, "import", "items", str(second), "--json")
    warning = (
        f"warning: {second}:2: id 's2' is already stored as #2 with another message"
        " ('fix typo'); the stored item is kept"
    )
    assert plain.exit_code == 0
    assert [line for line in plain.stderr.splitlines() if line.startswith("warning")] == [warning]
    assert json.loads(plain.stdout)[0]["other_message"] == [warning.removeprefix("warning: ")]
    labeled = tmp_path / "labeled.csv"
    labeled.write_text("id,message,v\ns2,a different commit,1\nn1,new one,0\n")
    result = run(
        db, "import", "items", str(labeled), "--set", "gt", "--label-field", "v",
        "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    shown = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert shown[0].startswith(f"warning: {labeled}:2: id 's2' is already stored as #2")
    # only the new item lacks a repository; the stored one has its own
    assert shown[1].startswith(f"warning: {labeled}: 1 items have no repository")
    assert messages(db)["s2"] == "fix typo"


def test_a_votes_file_naming_an_internal_id_says_so(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "c1", "message": "m"}) + "\n")
    assert run(db, "import", "items", str(items), "--set", "gt").exit_code == 0
    votes = tmp_path / "votes.csv"
    votes.write_text("item,annotator,label\n#1,ann,perf\n")
    result = run(db, "import", "votes", str(votes))
    assert errors(result) == [
        f"error: {votes}:2: unknown item '#1' (a votes file names an item by its external"
        " id, not by #N)"
    ]


def test_an_interrupted_import_stores_nothing_and_progress_is_told(
    tmp_path: Path, store: Store
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"b{i}", "message": "m"}) + "\n" for i in range(4500))
    )
    told: list[tuple[int, int]] = []
    import_items_file(
        store, path, "commit", _model_input, progress=lambda done, n: told.append((done, n))
    )
    assert told == [(0, 4500), (2000, 4500), (4000, 4500), (4500, 4500)]

    again = tmp_path / "again.jsonl"
    again.write_text(
        "".join(json.dumps({"id": f"n{i}", "message": "m"}) + "\n" for i in range(4500))
    )
    calls: list[int] = []

    def interrupted_prelabel(items: list[object]) -> list[list[object]]:
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return [[] for _ in items]

    with pytest.raises(KeyboardInterrupt):
        import_items_file(store, again, "commit", _model_input, "gt", prelabel=interrupted_prelabel)  # type: ignore[arg-type]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items WHERE key LIKE 'n%'") == 0
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM sets") == 0


def test_a_repeated_vote_row_says_whether_it_is_the_same_vote(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "c1", "message": "m"}) + "\n")
    assert run(db, "import", "items", str(items), "--set", "gt").exit_code == 0
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "item,annotator,label\nc1,ann,perf\nc1,ann,perf\nc1,bob,perf\nc1,bob,non-perf\n"
    )
    result = run(db, "import", "votes", str(votes))
    assert errors(result) == [
        f"error: {votes}:3: ann votes on 'c1' again (line 2: the same vote); one vote per"
        " annotator and item in a file",
        f"error: {votes}:5: bob votes on 'c1' again (line 4: another vote); one vote per"
        " annotator and item in a file",
    ]
    assert scalar(db, "SELECT COUNT(*) FROM votes") == 0


def test_a_labeled_import_tells_progress_per_chunk(tmp_path: Path, store: Store) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text(
        "".join(
            json.dumps({"idx": i, "commit_message": f"m {i}", "target": i % 2}) + "\n"
            for i in range(2500)
        )
    )
    spec = LabeledSpec("gt", "target", {"1": "perf", "0": "non-perf"})
    told: list[tuple[int, int]] = []
    result = import_labeled_file(
        store, path, spec, _model_input, progress=lambda done, n: told.append((done, n))
    )
    assert (result.stored, result.votes, told) == (2500, 2500, [(2000, 2500), (2500, 2500)])


def test_a_table_saved_as_txt_is_told_to_be_renamed(tmp_path: Path) -> None:
    path = tmp_path / "votes.txt"
    path.write_bytes("item\tannotator\tlabel\r\nc1\tzed\tperf\r\n".encode("utf-16"))
    result = run(tmp_path / "x.db", "import", "votes", str(path))
    assert result.exit_code == 1
    (line,) = errors(result)
    assert line.startswith(f"error: {path}:1: not JSON Lines, and read as such since its name")
    assert line.endswith(
        "rename it to .csv (fields separated by commas or semicolons) or .tsv (tabs)"
    )


def test_spaces_around_a_jsonl_id_are_dropped_as_a_csv_cells_are(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": " a ", "message": "m"}) + "\n")
    assert run(db, "import", "items", str(items), "--set", "gt").exit_code == 0
    again = tmp_path / "again.csv"
    again.write_text("id,message\na,m\n")
    assert "0 new, 1 already stored" in run(db, "import", "items", str(again)).stdout
    votes = tmp_path / "votes.jsonl"
    votes.write_text(json.dumps({"item": "a ", "annotator": "ann", "label": "perf"}) + "\n")
    assert run(db, "import", "votes", str(votes)).exit_code == 0
    assert messages(db) == {"a": "m"}


def test_an_empty_file_says_so(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = tmp_path / "items.csv"
    items.write_text("id,message\r\n")
    result = run(db, "import", "items", str(items), "--set", "gt")
    assert result.exit_code == 0
    assert result.stderr.strip() == f"warning: {items}: no items in the file"
    votes = tmp_path / "votes.jsonl"
    votes.write_text("\n")
    said = run(db, "import", "votes", str(votes)).stderr.strip()
    assert said == f"warning: {votes}: no votes in the file; nothing imported"


def test_files_with_a_byte_order_mark_each_joined_into_one_are_read(tmp_path: Path) -> None:
    part = b"\xef\xbb\xbf" + json.dumps({"id": "a", "message": "m"}).encode() + b"\r\n"
    path = tmp_path / "joined.jsonl"
    path.write_bytes(part + part.replace(b'"a"', b'"b"'))
    db = tmp_path / "x.db"
    assert run(db, "import", "items", str(path)).exit_code == 0
    assert messages(db) == {"a": "m", "b": "m"}


def test_a_latin1_row_of_a_labeled_csv_is_left_out_alone(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_bytes(b'id,message,v\nc1,"fine\nbody",1\nc2,caf\xe9,0\nc3,ok,1\n')
    db = tmp_path / "x.db"
    result = run(
        db, "import", "items", str(path), "--set", "gt", "--label-field", "v",
        "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:4: not UTF-8 text (byte 0xe9 at column 7); save the file as UTF-8,"
        f" e.g. iconv -f cp1252 -t utf-8 {path} > NEW"
    ]
    assert messages(db) == {"c1": "fine\nbody", "c3": "ok"}


def test_one_bad_labeled_row_is_counted_in_the_singular(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    rows = [{"id": "a", "message": "m", "target": 1}, {"id": "b", "message": "n", "target": 9}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run(tmp_path / "x.db", "import", "items", str(path), "--set", "s",
                 "--label-field", "target", "--map", "1=perf,0=non-perf")  # fmt: skip
    assert "1 new" in result.stdout and "1 bad row left out" in result.stdout
