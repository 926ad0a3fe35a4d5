"""Text another tool stored as bytes that are not UTF-8 (SQLite keeps them as they came)
no longer stops a search: ``curator search fix`` used to end in ``database error: Could
not decode to UTF-8 column 'snippet(...)'`` for every query that matched that one row,
and ``search "" --set S`` on a bad path; the bad bytes now read as U+FFFD."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.search import SearchRequest, run_search
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items
from store.sets import NewSet, create_set
from tests import raw_sql


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "s.db")
    insert_imported_items(
        s,
        [
            ImportedItem(
                kind="commit",
                key=key,
                source="repo",
                language="python",
                path=f"src/{key}.py",
                payload={"message": f"fix {key}", "diff": "+x\n", "model_input": "x"},
                provenance={},
            )
            for key in ("good", "bad")
        ],
    )
    ids = [int(r[0]) for r in raw_sql.query(s, "SELECT id FROM items ORDER BY id")]
    create_set(s, NewSet(name="gt", kind="commit", labels=["perf", "non-perf"]), ids)
    conn = raw_sql.connection(s)
    with conn:
        bad = ids[1]
        conn.execute(
            "UPDATE commits SET message = CAST(X'6669782062616420ff80' AS TEXT) WHERE item_id = ?",
            (bad,),
        )
        conn.execute(
            "UPDATE items SET path = CAST(X'7372632fff2e7079' AS TEXT) WHERE id = ?", (bad,)
        )
    return s


def test_a_row_of_invalid_utf8_is_found_with_replacement_characters(store: Store) -> None:
    hits = {h.key: h for h in run_search(store, SearchRequest("fix", limit=10)).hits}
    assert set(hits) == {"good", "bad"}
    assert hits["bad"].snippet.replace("\ue000", "").replace("\ue001", "") == "fix bad \ufffd\ufffd"
    assert hits["bad"].path == "src/\ufffd.py"
    listed = run_search(store, SearchRequest("", set_name="gt")).hits
    assert [h.path for h in listed] == ["src/good.py", "src/\ufffd.py"]


def test_cli_search_reads_past_the_bad_row(store: Store) -> None:
    for args in (["fix"], ["", "--set", "gt"]):
        result = CliRunner().invoke(app, ["search", *args, "--json", "--db", str(store.path)])
        assert result.exit_code == 0, result.output
        assert '"key": "bad"' in result.stdout and '"key": "good"' in result.stdout


def test_an_export_names_the_item_whose_stored_text_cannot_be_read(
    store: Store, tmp_path: Path
) -> None:
    """`export prodigy` ended in a bare database error naming no item."""
    out = tmp_path / "tasks.jsonl"
    result = CliRunner().invoke(
        app, ["--db", str(store.path), "export", "prodigy", "gt", "--out", str(out)]
    )
    assert result.exit_code == 1, result.output
    line = " ".join(result.output.split())
    bad = raw_sql.scalar(store, "SELECT id FROM items WHERE key = 'bad'")
    assert f"item #{bad}" in line and "cannot be read" in line
    assert not out.exists()
