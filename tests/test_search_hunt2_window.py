"""The note on a ranking cut to the newest matches names the window actually ranked: a
larger --limit widens it, and the note used to say 1,000 all the same."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from curator.cli import app
from store import open_store
from store.items import ImportedItem, insert_imported_items
from store.search import RANK_WINDOW


def test_the_window_note_names_the_window_a_larger_limit_ranked(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    matches = RANK_WINDOW + 300
    with open_store(db) as store:
        insert_imported_items(
            store,
            [
                ImportedItem(
                    kind="commit",
                    key=f"c{i}",
                    source="repo",
                    language="python",
                    path="a.py",
                    payload={"message": f"cache number {i}", "diff": "+x\n", "model_input": "x"},
                    provenance={},
                )
                for i in range(matches)
            ],
        )
    runner = CliRunner()
    wide = RANK_WINDOW + 100
    result = runner.invoke(
        app, ["search", "cache", "--json", "--limit", str(wide), "--db", str(db)]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == (
        f"warning: more than {wide:,} items match: ranked among the newest {wide:,};"
        " narrow the query (a phrase, a column, --set) for a full ranking"
    )
    result = runner.invoke(app, ["search", "cache", "--json", "--db", str(db)])
    assert f"ranked among the newest {RANK_WINDOW:,};" in result.stderr
    everything = runner.invoke(
        app, ["search", "cache", "--json", "--limit", str(matches), "--db", str(db)]
    )
    assert everything.exit_code == 0 and everything.stderr == ""
