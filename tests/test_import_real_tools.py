"""Files as the tools teams dump commits and labels with write them, brought in with
``curator import items|votes``: PyDriller (one row per commit or per changed file,
``json.dumps(default=str)`` or pandas' ``to_json``/``to_csv``), GitHub's REST and GraphQL
commit objects, gzip-compressed files, Python's ``NaN``, and labels spelled as a
spreadsheet or pandas spells them."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pydriller import Repository

from store import open_store
from tests import raw_sql
from tests.gitrepo import GitRepo
from tests.test_sweep_import import errors, run


def commits(db: Path) -> dict[str, dict[str, Any]]:
    """Each stored commit by its external id: what the items and commits tables hold."""
    with open_store(db) as store:
        rows = raw_sql.query(
            store,
            "SELECT i.key, i.source, i.path, c.sha, c.author_date, c.message, c.diff, c.file,"
            " c.files, c.model_input FROM items i JOIN commits c ON c.item_id = i.id",
        )
    return {str(row["key"]): dict(row) for row in rows}


def votes(db: Path) -> dict[str, str]:
    with open_store(db) as store:
        rows = raw_sql.query(
            store, "SELECT i.key, v.label FROM votes v JOIN items i ON i.id = v.item_id"
        )
    return {str(row[0]): str(row[1]) for row in rows}


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, default=str) + "\n" for row in rows))
    return path


def _history(tmp_path: Path) -> tuple[str, str]:
    """A repository of two commits: one adding two files, one that adds, deletes and
    modifies one each."""
    repo = GitRepo(tmp_path / "repo")
    first = repo.commit("initial", {"src/a.py": "x = 1\n", "old.txt": "gone\n"})
    second = repo.commit(
        "speed up the loop\n\nbody", {"src/a.py": "x = 2\n", "new.txt": "new\n", "old.txt": None}
    )
    return first, second


def _per_file_rows(tmp_path: Path) -> list[dict[str, Any]]:
    """One row per ``ModifiedFile``, as a PyDriller script collects them."""
    return [
        {
            "hash": commit.hash,
            "msg": commit.msg,
            "author_date": commit.author_date,
            "new_path": modified.new_path,
            "old_path": modified.old_path,
            "change_type": modified.change_type,
            "diff": modified.diff,
            "diff_parsed": modified.diff_parsed,
        }
        for commit in Repository(str(tmp_path / "repo")).traverse_commits()
        for modified in commit.modified_files
    ]


SECOND_DIFF = (
    "diff --git a/new.txt b/new.txt\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n"
    "diff --git a/old.txt b/old.txt\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
    "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
    "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
)


def test_a_pydriller_dump_of_one_row_per_file_is_one_commit_each(tmp_path: Path) -> None:
    _, second = _history(tmp_path)
    path = jsonl(tmp_path / "modified_files.jsonl", _per_file_rows(tmp_path))
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path), "--set", "mined-elsewhere")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr  # every diff names its file
    stored = commits(db)
    assert len(stored) == 2
    commit = stored[second]
    assert (commit["sha"], commit["message"]) == (second, "speed up the loop\n\nbody")
    assert commit["author_date"] == "2024-03-01 00:02:00+00:00"
    assert commit["diff"] == SECOND_DIFF
    assert (commit["file"], commit["path"]) == ("new.txt", "new.txt")
    # every file the commit changes, for the rules that read them (the test-only veto)
    assert len(json.loads(commit["files"])) == SECOND_DIFF.count("diff --git ") > 1
    assert "+++ b/src/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2" in commit["model_input"]


def test_pandas_to_json_and_to_csv_of_the_same_rows_read_the_same(tmp_path: Path) -> None:
    """pandas writes ``/`` as ``\\/``, a datetime as epoch milliseconds, a missing path as
    null (``to_json``) or an empty cell (``to_csv``, with its index as a nameless first
    column)."""
    row = {
        "hash": "ab12",
        "msg": "cache the parse\n\nbody",
        "new_path": "src/a.py",
        "diff": "@@ -1 +1 @@\n-x\n+y\n",
    }
    path = tmp_path / "pandas.jsonl"
    path.write_text(
        '{"hash":"ab12","msg":"cache the parse\\n\\nbody","author_date":1709251260000,'
        '"new_path":"src\\/a.py","old_path":null,"diff":"@@ -1 +1 @@\\n-x\\n+y\\n"}\n'
    )
    table = tmp_path / "pandas.csv"
    table.write_text(
        ",hash,msg,author_date,new_path,old_path,diff\n"
        '0,ab12,"cache the parse\n\nbody",2024-03-01 00:01:00+00:00,src/a.py,,'
        '"@@ -1 +1 @@\n-x\n+y\n"\n'
    )
    expected = (
        "diff --git a/src/a.py b/src/a.py\n--- /dev/null\n+++ b/src/a.py\n@@ -1 +1 @@\n-x\n+y\n"
    )
    for source, date in ((path, "2024-03-01T00:01:00+00:00"), (table, "2024-03-01 00:01:00+00:00")):
        db = tmp_path / f"{source.suffix[1:]}.db"
        result = run(db, "import", "items", str(source))
        assert result.exit_code == 0, result.output
        stored = commits(db)["ab12"]
        assert (stored["message"], stored["sha"], stored["diff"]) == (
            row["msg"],
            row["hash"],
            expected,
        )
        assert stored["author_date"] == date


def test_one_commits_file_rows_apart_are_still_an_id_twice(tmp_path: Path) -> None:
    rows = [
        {"hash": "c1", "msg": "m", "new_path": "a.py", "old_path": "a.py", "diff": "@@ -1 +1 @@\n"},
        {"hash": "c2", "msg": "n", "new_path": "b.py", "old_path": "b.py", "diff": "@@ -1 +1 @@\n"},
        {"hash": "c1", "msg": "m", "new_path": "c.py", "old_path": "c.py", "diff": "@@ -1 +1 @@\n"},
    ]
    path = jsonl(tmp_path / "shuffled.jsonl", rows)
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [f"error: {path}:3: id 'c1' already on line 1 (a different record)"]
    assert not db.exists() or commits(db) == {}


def _github_commit(sha: str, message: str, files: list[dict[str, Any]]) -> dict[str, Any]:
    """A commit as ``gh api repos/OWNER/NAME/commits/SHA`` returns it (fields trimmed)."""
    return {
        "sha": sha,
        "node_id": "C_kwDO",
        "commit": {
            "author": {"name": "Ada", "email": "ada@example.org", "date": "2024-03-01T10:00:00Z"},
            "message": message,
            "tree": {"sha": "0" * 40},
            "comment_count": 0,
        },
        "html_url": f"https://github.com/octo/widgets/commit/{sha}",
        "author": {"login": "ada", "id": 1},
        "committer": None,
        "parents": [{"sha": "1" * 40}],
        "stats": {"total": 3, "additions": 2, "deletions": 1},
        "files": files,
    }


def test_github_rest_commits_go_in_with_a_diff_per_file(tmp_path: Path) -> None:
    sha = "a" * 40
    files = [
        {
            "filename": "src/fast.c",
            "previous_filename": "src/slow.c",
            "status": "renamed",
            "patch": "@@ -1 +1 @@\n-int slow;\n+int fast;",
        },
        {"filename": "logo.png", "status": "modified"},  # binary: no patch
        {"filename": "NEWS", "status": "added", "patch": "@@ -0,0 +1 @@\n+faster"},
    ]
    path = jsonl(tmp_path / "gh.jsonl", [_github_commit(sha, "Vectorize the hot loop", files)])
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 0, result.output
    stored = commits(db)[sha]
    assert stored["message"] == "Vectorize the hot loop"
    assert (stored["sha"], stored["author_date"]) == (sha, "2024-03-01T10:00:00Z")
    assert stored["source"] == "https://github.com/octo/widgets"
    assert stored["file"] == "src/fast.c"
    assert stored["diff"] == (
        "diff --git a/src/slow.c b/src/fast.c\n--- a/src/slow.c\n+++ b/src/fast.c\n"
        "@@ -1 +1 @@\n-int slow;\n+int fast;\n"
        "diff --git a/NEWS b/NEWS\n--- /dev/null\n+++ b/NEWS\n@@ -0,0 +1 @@\n+faster\n"
    )


def test_gh_api_paginate_output_is_one_error_with_the_jq_command(tmp_path: Path) -> None:
    path = tmp_path / "commits.json"
    page = [_github_commit("b" * 40, "m", [])]
    path.write_text(json.dumps(page) + json.dumps(page))  # what `gh api --paginate` prints
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:1: 2 JSON arrays in a row, not JSON Lines (one object per line);"
        f" convert it with: jq -c '.[]' {path} > NEW.jsonl"
    ]


def test_a_graphql_commit_node_goes_in_by_its_oid(tmp_path: Path) -> None:
    node = {"oid": "c" * 40, "message": "Avoid a copy", "authoredDate": "2024-03-01T10:00:00Z"}
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(jsonl(tmp_path / "graphql.jsonl", [node])))
    assert result.exit_code == 0, result.output
    stored = commits(db)["c" * 40]
    assert (stored["message"], stored["sha"]) == ("Avoid a copy", "c" * 40)


def test_python_nan_is_a_missing_value_not_a_database_error(tmp_path: Path) -> None:
    """``json.dumps`` of a DataFrame's rows writes a missing cell as ``NaN``."""
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"id": "c1", "message": "speed up", "diff": NaN, "file": NaN, "date": NaN}\n'
        '{"id": "c2", "message": "fix", "diff": "@@ -1 +1 @@\\n-a\\n+b", "file": "x.py"}'
    )
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 0, result.output
    stored = commits(db)
    assert (stored["c1"]["diff"], stored["c1"]["file"], stored["c1"]["path"]) == ("", None, None)
    assert stored["c2"]["path"] == "x.py"


def test_an_infinity_in_a_text_field_is_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "c1", "message": "m", "file": Infinity}\n')
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [f"error: {path}:1: 'file' must be a string, not Infinity"]


def test_gzip_compressed_jsonl_and_csv_are_read(tmp_path: Path) -> None:
    packed = tmp_path / "items.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"id": "c1", "message": "speed up"}\n'))
    table = tmp_path / "items.csv.gz"
    table.write_bytes(gzip.compress(b"\xef\xbb\xbfid;message\r\nc2;faster\r\n"))
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(packed), str(table), "--set", "gt")
    assert result.exit_code == 0, result.output
    assert {key: row["message"] for key, row in commits(db).items()} == {
        "c1": "speed up",
        "c2": "faster",
    }


def test_a_truncated_gzip_file_is_one_error_and_stores_nothing(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"id": f"c{i}", "message": "m" * 50}) + "\n" for i in range(300))
    packed = gzip.compress(rows.encode())
    path = tmp_path / "items.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    found = errors(result)
    assert len(found) == 1
    assert found[0].startswith(f"error: {path}:")
    assert "not a whole gzip file (" in found[0]
    assert not db.exists() or commits(db) == {}


def test_labels_as_pandas_and_spreadsheets_write_them(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    booleans = tmp_path / "bools.csv"
    booleans.write_text("id,message,is_perf\r\nc1,speed up,True\r\nc2,typo,FALSE\r\n")
    floats = tmp_path / "floats.csv"
    floats.write_text("id,message,is_perf\nc3,faster,1.0\nc4,docs,0.0\n")
    spelled = tmp_path / "spelled.csv"
    spelled.write_text("id,message,label\nc5,cache, Perf \nc6,rename,NON-PERF\n")
    for path, field, mapping in (
        (booleans, "is_perf", "true=perf,false=non-perf"),
        (floats, "is_perf", "1=perf,0=non-perf"),
    ):
        result = run(
            db, "import", "items", str(path), "--set", "gt", "--label-field", field,
            "--map", mapping,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    result = run(db, "import", "items", str(spelled), "--set", "gt", "--label-field", "label")
    assert result.exit_code == 0, result.output
    assert votes(db) == {
        "c1": "perf",
        "c2": "non-perf",
        "c3": "perf",
        "c4": "non-perf",
        "c5": "perf",
        "c6": "non-perf",
    }


def test_float_labels_without_a_map_are_told_the_map_to_give(tmp_path: Path) -> None:
    path = tmp_path / "floats.csv"
    path.write_text("id,message,is_perf\nc3,faster,1.0\n")
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path), "--set", "gt", "--label-field", "is_perf")
    assert errors(result) == [
        f"error: {path}:2: label '1.0' is not one of the set's labels (perf, non-perf):"
        " give --map 1.0=perf"
    ]


def test_a_votes_label_in_capitals_is_the_sets_label(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    items = jsonl(tmp_path / "items.jsonl", [{"id": "c1", "message": "m"}])
    assert run(db, "import", "items", str(items), "--set", "gt").exit_code == 0
    path = tmp_path / "votes.csv"
    path.write_text("item,annotator,label\r\nc1,ann, PERF \r\n")
    result = run(db, "import", "votes", str(path), "--set", "gt")
    assert result.exit_code == 0, result.output
    assert votes(db) == {"c1": "perf"}


def test_a_table_pandas_wrote_in_its_default_orient_is_one_error(tmp_path: Path) -> None:
    """``df.to_json(PATH)`` writes the whole table as one object of columns."""
    path = tmp_path / "table.json"
    path.write_text('{"id":{"0":"c1","1":"c2"},"message":{"0":"speed up","1":"typo"}}')
    db = tmp_path / "x.db"
    for args in ((), ("--set", "gt", "--label-field", "label")):
        result = run(db, "import", "items", str(path), *args)
        assert result.exit_code == 1
        assert errors(result) == [
            f"error: {path}:1: a whole table in one object, as pandas' DataFrame.to_json"
            " writes it (orient='columns'); write one object per line instead:"
            " df.to_json(PATH, orient='records', lines=True)"
        ]


def test_label_studio_json_min_and_csv_exports_say_to_export_json(tmp_path: Path) -> None:
    flat = tmp_path / "min.json"
    flat.write_text(
        json.dumps(
            [{"id": 7, "text": "t", "label": "perf", "annotator": "a@b.org", "lead_time": 1}]
        )
    )
    table = tmp_path / "ls.csv"
    table.write_text("annotation_id,annotator,id,label,text\n31,a@b.org,7,perf,t\n")
    db = tmp_path / "x.db"
    result = run(db, "import", "label-studio", str(flat), "--set", "ls")
    assert result.exit_code == 1
    assert errors(result)[0] == (
        f"error: {flat}: task 7 (position 1): a task is an object with a 'data' object (this"
        " one is flat, with 'annotator': Label Studio's JSON-MIN export); export the project"
        " as JSON instead"
    )
    result = run(db, "import", "label-studio", str(table), "--set", "ls")
    assert result.exit_code == 1
    assert errors(result)[0] == (
        f"error: {table}:1: not JSON (Label Studio's CSV or TSV export?); export the project"
        " as JSON, a list of tasks"
    )


def test_a_date_in_epoch_milliseconds_becomes_an_iso_date(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id":"c1","message":"m","date":1709251260000}\n')
    db = tmp_path / "x.db"
    assert run(db, "import", "items", str(path)).exit_code == 0
    assert commits(db)["c1"]["author_date"] == "2024-03-01T00:01:00+00:00"


def test_excels_sep_line_names_the_delimiter_and_lines_keep_their_numbers(
    tmp_path: Path,
) -> None:
    """Excel reads (and some tools write) ``sep=;`` before the header; a European
    spreadsheet writes 1.0 as ``1,0``."""
    path = tmp_path / "export.csv"
    path.write_bytes(
        b'sep=;\r\nid;message;verdict\r\nc1;"speed up, twice\r\nbody";1,0\r\n\r\nc2;x;0;extra\r\n'
    )
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:6: 4 fields, but the header has 3 (a ';' inside an unquoted value?)"
    ]
    path.write_bytes(path.read_bytes().replace(b";extra", b""))
    result = run(
        db, "import", "items", str(path), "--set", "gt", "--label-field", "verdict",
        "--map", "1=perf,0=non-perf",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert commits(db)["c1"]["message"] == "speed up, twice\nbody"
    assert votes(db) == {"c1": "perf", "c2": "non-perf"}


def test_a_csv_diff_keeps_the_space_of_its_last_context_line(tmp_path: Path) -> None:
    """A hunk ending in an unchanged empty line ends in a line holding one space."""
    diff = "@@ -1,2 +1,2 @@\n-a\n+b\n \n"
    path = tmp_path / "rows.csv"
    path.write_text(f'id,message,diff\nc1, speed up ,"{diff}"\n')
    db = tmp_path / "x.db"
    assert run(db, "import", "items", str(path)).exit_code == 0
    stored = commits(db)["c1"]
    assert (stored["message"], stored["diff"]) == ("speed up", diff)


def test_doccanos_list_of_labels_is_the_rows_label_when_it_holds_one(tmp_path: Path) -> None:
    path = tmp_path / "doccano.jsonl"
    rows = [
        {"id": 1, "text": "speed up the parser", "label": ["perf"], "Comments": []},
        {"id": 2, "text": "fix a typo", "label": ["non-perf"], "Comments": []},
        {"id": 3, "text": "both", "label": ["perf", "non-perf"], "Comments": []},
        {"id": 4, "text": "not yet labelled", "label": [], "Comments": []},
    ]
    db = tmp_path / "x.db"
    result = run(
        db, "import", "items", str(jsonl(path, rows)), "--set", "gt", "--label-field", "label"
    )
    assert votes(db) == {"1": "perf", "2": "non-perf"}
    assert errors(result) == [
        f"error: {path}:3: the label field 'label' holds 2 labels (perf, non-perf); a row"
        " takes one",
        f"error: {path}:4: missing the label field 'label'",
    ]


def test_a_pydriller_commit_row_with_its_modified_files_nested_reads_the_same(
    tmp_path: Path,
) -> None:
    _, second = _history(tmp_path)
    rows = [
        {
            "hash": commit.hash,
            "msg": commit.msg,
            "author_date": commit.author_date,
            "modified_files": [
                {"new_path": m.new_path, "old_path": m.old_path, "diff": m.diff}
                for m in commit.modified_files
            ],
        }
        for commit in Repository(str(tmp_path / "repo")).traverse_commits()
    ]
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(jsonl(tmp_path / "nested.jsonl", rows)))
    assert result.exit_code == 0, result.output
    stored = commits(db)[second]
    assert (stored["diff"], stored["file"]) == (SECOND_DIFF, "new.txt")


def test_a_pydriller_file_whose_diff_is_no_text_is_named(tmp_path: Path) -> None:
    """A file's ``diff`` that is an object was dropped without a word when its rows were
    joined into one commit; it is the row's bad field, as on any other row."""
    rows = [
        {"hash": "ab12", "msg": "m", "new_path": "a.c", "diff": "@@ -1 +1 @@\n-x\n+y\n"},
        {"hash": "ab12", "msg": "m", "new_path": "b.c", "diff": {"added": []}},
        {"hash": "cd34", "msg": "m", "modified_files": [{"new_path": "c.c", "diff": ["@@"]}]},
    ]
    path = jsonl(tmp_path / "bad.jsonl", rows)
    db = tmp_path / "x.db"
    result = run(db, "import", "items", str(path))
    assert result.exit_code == 1
    assert errors(result) == [
        f"error: {path}:1: 'diff' must be a string, not an object",
        f"error: {path}:3: 'diff' must be a string, not a list",
    ]
