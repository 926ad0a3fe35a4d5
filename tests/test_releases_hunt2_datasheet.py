"""Names from the store (sets, sources, labelers) are shown in the datasheet and the
dataset card as written: a set named ``<b>x</b>`` or ``[x](http://...)`` used to land
in their Markdown tables raw, read as HTML or as a link by every Markdown renderer."""

from __future__ import annotations

from pathlib import Path

from curator.releases.export import ExportOptions, export_release
from store import open_store
from store.sets import NewSet, create_set
from tests import raw_sql
from tests.release_data import annotated_store


def test_names_are_escaped_in_the_datasheet_tables(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        annotated_store(store, n=20)
        first = raw_sql.scalar(store, "SELECT MIN(id) FROM items")
        for name in ("<b>bold</b>", "[x](http://evil.example)", "a*b*"):
            create_set(store, NewSet(name, "commit", ["perf", "non-perf"]), [first])
        export_release(store, tmp_path / "out", ExportOptions("v1"))
    for doc in ("DATASHEET.md", "README.md"):
        text = (tmp_path / "out" / "v1" / doc).read_text(encoding="utf-8")
        rows = [line for line in text.splitlines() if line.startswith("| ")]
        assert "| \\<b\\>bold\\</b\\> | commit |" in text
        assert "| \\[x\\](http://evil.example) | commit |" in text
        assert "| a\\*b\\* | commit |" in text
        assert not any("<b>" in row or "[x](" in row or "| a*b* |" in row for row in rows)
        # what the datasheet writes as Markdown itself stays so
        assert any("] at 95% |" in row and "| [" in row for row in rows)


def test_a_set_name_with_backticks_stays_one_code_span(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        annotated_store(store, n=20)
        first = raw_sql.scalar(store, "SELECT MIN(id) FROM items")
        create_set(store, NewSet("a`b", "commit", ["perf", "non-perf"]), [first])
        export_release(store, tmp_path / "out", ExportOptions("v1", sets=("a`b",)))
    text = (tmp_path / "out" / "v1" / "DATASHEET.md").read_text(encoding="utf-8")
    assert "Only items of the set ``a`b`` are included" in text
