"""Shared fixtures: temporary repositories, stores, and the CLI runner."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from store import Store, open_store
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _no_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads the developer's own ~/.config/curator/config.toml."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo(tmp_path / "repo")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "test.db") as s:
        yield s


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Invoke ``curator ARGS`` in-process against a fresh database; returns the result."""
    monkeypatch.setenv("CURATOR_DB", str(tmp_path / "cli.db"))
    monkeypatch.setenv("CURATOR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(app, list(args), catch_exceptions=False)

    return invoke


@pytest.fixture
def split(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    """gt-sample imported with its votes, then split by repository into tr, gt-dev, gt-eval."""
    sample = ROOT / "sample_data" / "annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    made = cli("set", "split", "--from-set", "gt-sample", "--into", "tr:60,gt-dev:20,gt-eval:20")
    assert made.exit_code == 0, made.output
    return cli


@pytest.fixture(scope="session")
def sample_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The sample repository built from the recipe, with the builder's per-commit report."""
    import json

    dest = tmp_path_factory.mktemp("sample") / "sample-repo"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "sample_data" / "build_commit_repo.py"), "--json", str(dest)],
        check=True,
        capture_output=True,
        text=True,
    )
    start = proc.stdout.index("[")
    end = proc.stdout.rindex("]") + 1
    return dest, json.loads(proc.stdout[start:end])
