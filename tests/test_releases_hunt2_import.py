"""Edited releases whose manifest was recomputed: a record whose label would not come
back from what the import stores (its votes settle another label, or none; a predicted
label without its labeler; votes on a label that is not adjudicated; one annotator's two
votes) is refused with FILE:LINE, instead of being stored without a word and exported
back with another label or none."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curator.releases.export import ExportOptions, export_release
from store import open_store
from tests import raw_sql
from tests.release_data import annotated_store
from tests.test_releases_tamper import import_fails, reseal


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hunt2")
    with open_store(root / "source.db") as store:
        annotated_store(store, n=20)
        export_release(store, root / "out", ExportOptions("v1", labels="adjudicated"))
    return root / "out" / "v1"


def _edit(release: Path, change: Callable[[list[dict[str, Any]]], None]) -> int:
    """Apply ``change`` to the commit records, reseal, and return the first changed line."""
    path = release / "commit.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    before = [json.dumps(r, sort_keys=True) for r in records]
    change(records)
    path.write_text(
        "".join(
            json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
            for r in records
        )
    )
    reseal(release)
    after = [json.dumps(r, sort_keys=True) for r in records]
    return next(n for n, (a, b) in enumerate(zip(before, after, strict=True), 1) if a != b)


def _flip(records: list[dict[str, Any]]) -> None:
    first = records[0]
    first["label"] = "non-perf" if first["label"] == "perf" else "perf"


def _no_votes(records: list[dict[str, Any]]) -> None:
    records[0]["votes"] = []


def _twice(records: list[dict[str, Any]]) -> None:
    records[0]["votes"].append(dict(records[0]["votes"][0]))


def _predicted_with_votes(records: list[dict[str, Any]]) -> None:
    records[0]["label_source"] = "predicted"


def _no_source(records: list[dict[str, Any]]) -> None:
    records[0]["label_source"] = None
    records[0]["votes"] = []


CASES = [
    (_flip, "is not what its votes settle"),
    (_no_votes, "is not what its votes settle (nothing; votes: none)"),
    (_twice, "has two votes on the item"),
    (_predicted_with_votes, "label_source 'predicted' carries votes"),
    (_no_source, "has no label_source"),
]


@pytest.mark.parametrize(("change", "said"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_label_the_import_would_not_keep_is_named(
    cli,  # type: ignore[no-untyped-def]
    made: Path,
    tmp_path: Path,
    change: Callable[[list[dict[str, Any]]], None],
    said: str,
) -> None:
    release = tmp_path / "v1"
    shutil.copytree(made, release)
    line = _edit(release, change)
    assert cli("validate", str(release)).exit_code == 0  # well formed: the import decides
    err = import_fails(cli, release, tmp_path / "refused.db")
    first = err.splitlines()[0]
    assert first.startswith(f"error: {release}/commit.jsonl:{line}: "), err
    assert said in first


def test_an_untouched_release_still_imports_and_exports_the_same(
    cli,  # type: ignore[no-untyped-def]
    made: Path,
    tmp_path: Path,
) -> None:
    result = cli("import", "release", str(made), "--db", str(tmp_path / "new.db"))
    assert result.exit_code == 0, result.output
    with open_store(tmp_path / "new.db") as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") > 0
        export_release(store, tmp_path / "again", ExportOptions("v1", labels="adjudicated"))
    again = (tmp_path / "again" / "v1" / "commit.jsonl").read_bytes()
    assert again == (made / "commit.jsonl").read_bytes()


def test_a_database_inside_the_release_is_refused_before_it_is_made(
    cli,  # type: ignore[no-untyped-def]
    made: Path,
    tmp_path: Path,
) -> None:
    """`--db RELEASE/x.db` used to import and leave the database in the release folder,
    a file its manifest does not list: the release no longer validated."""
    release = tmp_path / "v1"
    shutil.copytree(made, release)
    for db in (release / "x.db", release / "sub" / ".." / "y.db"):
        result = cli("import", "release", str(release), "--db", str(db))
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: --db {db} lies inside the release {release}")
    assert sorted(p.name for p in release.iterdir()) == sorted(p.name for p in made.iterdir())
    assert cli("validate", str(release)).exit_code == 0
