"""A release is a Hugging Face dataset: ``datasets.load_dataset(DIR)`` with no other
argument loads it (the real ``datasets`` package), row for row what the JSONL holds; the
card is checked by ``curator validate`` like any file and survives ``import release``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from curator.releases.card import features
from curator.releases.import_release import import_release
from curator.releases.validate import validate_release
from store import open_store
from tests.release_data import annotated_store


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.db"
    with open_store(path) as store:
        annotated_store(store, n=30)
    return path


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def load(release: Path, tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    from datasets import load_dataset

    return load_dataset(str(release), *args, cache_dir=str(tmp_path / "hf-cache"))


def test_load_dataset_reads_a_split_release_row_for_row(
    cli, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    done = cli("export", "v1", "--split", "repo:60/20/20", "--seed", "3", "--out", str(tmp_path))
    assert done.exit_code == 0, done.output
    release = tmp_path / "v1"
    assert validate_release(release).ok
    dataset = load(release, tmp_path)  # no config, no data_files: the card says it all
    assert sorted(dataset) == ["dev", "test", "train"]
    for split in dataset:
        assert list(dataset[split]) == rows(release / f"commit.{split}.jsonl"), split
    assert dataset["train"].features["provenance"].__class__.__name__ == "Json"
    card = (release / "README.md").read_text()
    header = card.split("---\n")[1]
    assert "license: other" in header and "config_name: commit" in header
    assert "@misc{curator_release_v1," in card and "## Datasheet: release v1" in card
    manifest = json.loads((release / "manifest.json").read_text())
    assert "README.md" in manifest["files"]
    with open_store(tmp_path / "other.db") as other:
        imported = import_release(other, release)
    assert sum(imported.outcomes["commit"].values()) == 30 and imported.votes > 0


def test_an_unsplit_gzip_release_loads_as_train(cli, db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("export", "v2", "--gzip", "--out", str(tmp_path)).exit_code == 0
    release = tmp_path / "v2"
    import gzip

    expected = [
        json.loads(x)
        for x in gzip.decompress((release / "commit.jsonl.gz").read_bytes()).splitlines()
    ]
    dataset = load(release, tmp_path)
    assert list(dataset) == ["train"] and list(dataset["train"]) == expected


def test_an_empty_split_is_left_out_of_the_card_so_the_release_still_loads(
    cli, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    done = cli("export", "v3", "--split", "repo:98/1/1", "--seed", "3", "--out", str(tmp_path))
    assert done.exit_code == 0, done.output
    release = tmp_path / "v3"
    manifest = json.loads((release / "manifest.json").read_text())
    empty = [name for name, entry in manifest["files"].items() if entry.get("records") == 0]
    assert empty, "the split should leave a part without repositories"
    assert validate_release(release).ok
    header = (release / "README.md").read_text().split("---\n")[1]
    assert not any(name in header for name in empty)
    dataset = load(release, tmp_path)
    assert sum(len(dataset[split]) for split in dataset) == manifest["counts"]["records"]


def test_features_cover_every_field_of_every_kind() -> None:
    from curator.releases.schema import KINDS, record_schema

    for kind in KINDS:
        named = dict(features(kind))
        assert set(named) == set(record_schema(kind)["properties"])
        assert named["key"] == "string" and named["votes"] == "json"
    assert dict(features("ir"))["instructions"] == "int64"
    assert dict(features("kernel"))["shim_names"] == "list:string"


def data_rows(release: Path) -> dict[str, list[dict[str, Any]]]:
    """Each data file's records (through the reader validate and import use)."""
    from curator.releases.files import open_lines
    from curator.releases.manifest import data_files, load_manifest

    found = {}
    for name, entry in data_files(load_manifest(release)):
        with open_lines(release / name) as fh:
            found[f"{entry['kind']}.{entry['split']}"] = [json.loads(line) for line in fh]
    return found


def test_parquet_holds_the_same_rows_validates_imports_and_loads(
    cli, db: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    args = ("--split", "repo:60/20/20", "--seed", "3", "--created-at", "2030-01-01T00:00:00Z")
    assert cli("export", "j", *args, "--out", str(tmp_path)).exit_code == 0
    done = cli("export", "p", *args, "--format", "parquet", "--out", str(tmp_path))
    assert done.exit_code == 0, done.output
    jsonl, parquet = tmp_path / "j", tmp_path / "p"
    assert sorted(p.name for p in parquet.glob("*.parquet")) == [
        "commit.dev.parquet", "commit.test.parquet", "commit.train.parquet"
    ]  # fmt: skip
    assert data_rows(parquet) == data_rows(jsonl)
    manifests = [json.loads((r / "manifest.json").read_text()) for r in (jsonl, parquet)]
    assert manifests[0]["counts"] == manifests[1]["counts"]
    assert manifests[1]["filters"]["format"] == "parquet"
    assert validate_release(parquet).ok
    dataset = load(parquet, tmp_path)
    assert list(dataset["train"]) == data_rows(jsonl)["commit.train"]
    with open_store(tmp_path / "other.db") as other:
        imported = import_release(other, parquet)
    assert sum(imported.outcomes["commit"].values()) == 30
    again = cli("export", "p", *args, "--format", "parquet", "--out", str(tmp_path / "again"))
    assert again.exit_code == 0
    for path in parquet.glob("*.parquet"):  # deterministic bytes
        assert path.read_bytes() == (tmp_path / "again" / "p" / path.name).read_bytes()
    broken = parquet / "commit.dev.parquet"
    broken.write_bytes(broken.read_bytes()[:-40])
    report = validate_release(parquet)
    assert not report.ok
    assert any(f"{broken}: cannot be read to the end" in p for p in report.problems)
    bad = cli("export", "x", "--format", "parquet", "--gzip", "--out", str(tmp_path))
    assert bad.exit_code == 2 and "--gzip applies to JSONL" in bad.output
