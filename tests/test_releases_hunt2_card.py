"""The dataset card shows how to load only the configs its header has: a kind with no
records has no config (``datasets`` refuses a split of no rows), yet the card used to
print ``load_dataset(..., "kernel")`` for it, and for a release of no records at all the
loading recipe of a dataset that does not load."""

from __future__ import annotations

from pathlib import Path

from curator.releases.export import ExportOptions, export_release
from store import open_store
from tests.release_data import annotated_store


def test_the_card_loads_only_kinds_with_records(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as store:
        annotated_store(store, n=20)
        export_release(store, tmp_path / "out", ExportOptions("mixed", kinds=("commit", "kernel")))
        export_release(store, tmp_path / "out", ExportOptions("none", kinds=("kernel",)))
    mixed = (tmp_path / "out" / "mixed" / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("path/to/mixed", "commit")' in mixed
    assert '"kernel")' not in mixed and "config_name: kernel" not in mixed
    empty = (tmp_path / "out" / "none" / "README.md").read_text(encoding="utf-8")
    assert "load_dataset(" not in empty
    assert "This release holds no records: there is nothing for `datasets` to load." in empty
