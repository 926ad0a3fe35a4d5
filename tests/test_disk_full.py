"""A full disk, for real: the database on a small tmpfs filled to its last bytes (see
tests/disk_full.py). Mining, voting, export and import end with one clear line, the
database passes integrity_check, and a rerun once space is freed ends with the clean
result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.releases.export import ExportOptions, export_release
from store import open_store
from tests import raw_sql
from tests.disk_full import ROOT, namespaces_allowed
from tests.gitrepo import GitRepo
from tests.release_data import annotated_store
from tests.test_mining_resume import TABLES, build_history, snapshot

pytestmark = pytest.mark.skipif(
    not namespaces_allowed(), reason="needs user and mount namespaces for a private tmpfs"
)


def full_disk(
    tmp_path: Path, db: Path, command: list[str], free: int, size: str = "16m"
) -> tuple[dict, Path]:
    """Run ``command`` on a copy of ``db`` with ``free`` bytes left, then again with
    space; the report and the copy of the database after both."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    out = tmp_path / "after.db"
    spec = tmp_path / "spec.json"
    command = [part.replace("{disk}", str(mount)) for part in command]
    spec.write_text(
        json.dumps(
            {
                "mount": str(mount),
                "size": size,
                "db": str(db),
                "free": free,
                "command": command,
                "rerun": None,
                "out": str(out),
            }
        )
    )
    done = subprocess.run(
        ["unshare", "-Urm", sys.executable, "-m", "tests.disk_full", str(spec)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    return json.loads(done.stdout), out


def assert_one_clear_line(report: dict) -> str:
    full = report["full"]
    assert full["rc"] != 0, full
    lines = full["stderr"].strip().splitlines()
    assert "Traceback" not in full["stderr"]
    assert lines[-1].startswith("error: "), lines
    assert any(word in lines[-1] for word in ("space", "full")), lines[-1]
    assert report["integrity_when_full"] == "ok"
    assert report["rerun"]["rc"] == 0, report["rerun"]
    assert report["integrity_after"] == "ok"
    return lines[-1]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seeded")
    with open_store(root / "seed.db") as store:
        annotated_store(store, n=30)
    return root / "seed.db"


def counts(db: Path) -> tuple[int, int]:
    with open_store(db) as store:
        return (
            int(raw_sql.scalar(store, "SELECT COUNT(*) FROM items")),  # type: ignore[arg-type]
            int(raw_sql.scalar(store, "SELECT COUNT(*) FROM votes")),  # type: ignore[arg-type]
        )


def test_voting_on_a_full_disk(seeded: Path, tmp_path: Path) -> None:
    with open_store(seeded) as store:
        key = str(raw_sql.scalar(store, "SELECT key FROM items ORDER BY id LIMIT 1"))
    before = counts(seeded)
    report, after = full_disk(
        tmp_path, seeded, ["vote", key, "perf", "--annotator", "zoe", "--set", "gt"], free=0
    )
    assert_one_clear_line(report)
    assert counts(after) == (before[0], before[1] + 1)  # the rerun's vote, once


def test_importing_items_on_a_full_disk(seeded: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    with items.open("w") as fh:
        for i in range(300):
            fh.write(json.dumps({"id": f"big-{i}", "message": f"change {i} " + "x" * 3000}) + "\n")
    before = counts(seeded)
    report, after = full_disk(tmp_path, seeded, ["import", "items", str(items)], free=200_000)
    assert_one_clear_line(report)
    assert counts(after) == (before[0] + 300, before[1])


def test_export_and_import_release_on_a_full_disk(seeded: Path, tmp_path: Path) -> None:
    report, _ = full_disk(
        tmp_path, seeded, ["export", "v1", "--out", "{disk}/releases"], free=48_000
    )
    line = assert_one_clear_line(report)
    assert "cannot be written (No space left on device)" in line
    # nothing of the release is left: not a partial folder, not a half-written v1
    assert [name for name in report["leftovers"] if name.startswith("releases")] == ["releases"]
    assert "v1" in report["rerun"]["stdout"]

    release = tmp_path / "release"
    with open_store(seeded) as store:
        export_release(store, release, ExportOptions("v1"))
    empty = tmp_path / "empty.db"
    open_store(empty).close()
    imported = tmp_path / "import"
    imported.mkdir()
    report, after = full_disk(imported, empty, ["import", "release", str(release / "v1")], free=0)
    assert_one_clear_line(report)
    assert counts(after)[0] == counts(seeded)[0]


def test_mining_on_a_full_disk_then_rerun_equals_a_clean_run(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    build_history(repo, 12)
    clean = tmp_path / "clean.db"
    mine = ["mine", "commits", str(repo.path), "--batch-size", "3"]
    assert CliRunner().invoke(app, [*mine, "--db", str(clean)]).exit_code == 0
    empty = tmp_path / "empty.db"
    open_store(empty).close()
    report, after = full_disk(tmp_path, empty, mine, free=0)
    assert_one_clear_line(report)
    assert snapshot(after) == snapshot(clean)
    assert set(TABLES) <= set(snapshot(after))
