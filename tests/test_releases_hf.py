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


def test_features_cover_every_field_of_every_kind() -> None:
    from curator.releases.schema import KINDS, record_schema

    for kind in KINDS:
        named = dict(features(kind))
        assert set(named) == set(record_schema(kind)["properties"])
        assert named["key"] == "string" and named["votes"] == "json"
    assert dict(features("ir"))["instructions"] == "int64"
    assert dict(features("kernel"))["shim_names"] == "list:string"
