"""The manifest's ``created_at`` is one format, UTC with a ``Z``, whatever time
``--created-at`` was given in (it used to be copied as typed: ``2026-01-01``,
``20260101T000000``, ``...+05:00``), and a ``SOURCE_DATE_EPOCH`` past what a date can
hold is one usage error (it used to end in ``unexpected OverflowError``, or be called
"not whole seconds")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curator.releases.export import ExportUsageError, creation_time
from store import open_store
from tests.release_data import annotated_store


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2026-01-01", "2026-01-01T00:00:00Z"),
        ("20260101T000000", "2026-01-01T00:00:00Z"),
        ("2026-01-01T05:00:00+05:00", "2026-01-01T00:00:00Z"),
        ("2026-01-01T00:00:00.750Z", "2026-01-01T00:00:00Z"),
    ],
)
def test_created_at_is_stored_in_utc(given: str, stored: str) -> None:
    assert creation_time(given) == stored


@pytest.mark.parametrize("epoch", ["99999999999999", "99999999999999999999"])
def test_an_epoch_out_of_range_is_a_usage_error(
    epoch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    with pytest.raises(ExportUsageError, match=f"SOURCE_DATE_EPOCH='{epoch}' is out of range"):
        creation_time()


def test_cli_export_with_a_huge_epoch_is_one_line(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "s.db"
    with open_store(db) as store:
        annotated_store(store, n=20)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "99999999999999999999")
    result = cli("export", "v1", "--db", str(db), "--out", str(tmp_path / "rel"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: SOURCE_DATE_EPOCH='99999999999999999999' is out")
    assert "OverflowError" not in result.output
    assert not (tmp_path / "rel" / "v1").exists()
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    made = cli(
        "export", "v2", "--db", str(db), "--out", str(tmp_path / "rel"),
        "--created-at", "2026-01-01T01:00:00+01:00",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    manifest = json.loads((tmp_path / "rel" / "v2" / "manifest.json").read_text())
    assert manifest["created_at"] == "2026-01-01T00:00:00Z"
