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


def counts(db: Path) -> tuple[int, int]:
    with open_store(db) as store:
        return (
            int(raw_sql.scalar(store, "SELECT COUNT(*) FROM items")),  # type: ignore[arg-type]
            int(raw_sql.scalar(store, "SELECT COUNT(*) FROM votes")),  # type: ignore[arg-type]
        )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Every scenario, each on a full disk then with space, in one namespace and process;
    the report of each, with the paths of its inputs and of its database afterwards."""
    root = tmp_path_factory.mktemp("disk-full")
    seed = root / "seed.db"
    with open_store(seed) as store:
        annotated_store(store, n=30)
        key = str(raw_sql.scalar(store, "SELECT key FROM items ORDER BY id LIMIT 1"))
        export_release(store, root / "release", ExportOptions("v1"))
    empty = root / "empty.db"
    open_store(empty).close()
    items = root / "items.jsonl"
    with items.open("w") as fh:
        for i in range(300):
            fh.write(json.dumps({"id": f"big-{i}", "message": f"change {i} " + "x" * 3000}) + "\n")
    repo = GitRepo(root / "repo")
    build_history(repo, 12)
    mine = ["mine", "commits", str(repo.path), "--batch-size", "3"]
    assert CliRunner().invoke(app, [*mine, "--db", str(root / "clean-mined.db")]).exit_code == 0
    steps = {
        "vote": (seed, ["vote", key, "perf", "--annotator", "zoe", "--set", "gt"], 0),
        "items": (seed, ["import", "items", str(items)], 200_000),
        "export": (seed, ["export", "v1", "--out", "{disk}/releases"], 48_000),
        "import-release": (empty, ["import", "release", str(root / "release" / "v1")], 0),
        "mine": (empty, mine, 0),
    }
    mount = root / "small-disk"
    mount.mkdir()
    spec = {
        "mount": str(mount),
        "size": "16m",
        "scenarios": {
            name: {"db": str(db), "command": command, "free": free, "out": str(root / f"{name}.db")}
            for name, (db, command, free) in steps.items()
        },
    }
    (root / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run(
        ["unshare", "-Urm", sys.executable, "-m", "tests.disk_full", str(root / "spec.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    reports = json.loads(done.stdout)
    for name in steps:
        reports[name]["after"] = root / f"{name}.db"
    reports["paths"] = {"seed": seed, "clean-mined": root / "clean-mined.db"}
    return reports


def test_voting_on_a_full_disk(runs: dict[str, dict]) -> None:
    report = runs["vote"]
    assert_one_clear_line(report)
    before = counts(runs["paths"]["seed"])
    assert counts(report["after"]) == (before[0], before[1] + 1)  # the rerun's vote, once


def test_importing_items_on_a_full_disk(runs: dict[str, dict]) -> None:
    report = runs["items"]
    assert_one_clear_line(report)
    before = counts(runs["paths"]["seed"])
    assert counts(report["after"]) == (before[0] + 300, before[1])


def test_export_on_a_full_disk(runs: dict[str, dict]) -> None:
    report = runs["export"]
    line = assert_one_clear_line(report)
    assert "cannot be written (No space left on device)" in line
    # nothing of the release is left: not a partial folder, not a half-written v1
    assert [name for name in report["leftovers"] if name.startswith("releases")] == ["releases"]
    assert "release v1" in report["rerun"]["stdout"]


def test_importing_a_release_on_a_full_disk(runs: dict[str, dict]) -> None:
    report = runs["import-release"]
    assert_one_clear_line(report)
    assert counts(report["after"])[0] == counts(runs["paths"]["seed"])[0]


def test_mining_on_a_full_disk_then_rerun_equals_a_clean_run(runs: dict[str, dict]) -> None:
    report = runs["mine"]
    assert_one_clear_line(report)
    mined = snapshot(report["after"])
    assert mined == snapshot(runs["paths"]["clean-mined"])
    assert set(TABLES) <= set(mined) and mined["items"]
