"""``curator validate`` on damaged releases: each damage fails with a precise one-line
message, and ``curator import release`` refuses the release without storing anything."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from curator.releases.export import ExportOptions, export_release
from store import open_store
from tests import raw_sql
from tests.release_data import annotated_store


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    with open_store(root / "source.db") as store:
        annotated_store(store, n=30)
        export_release(store, root / "plain", ExportOptions("v1"))
        export_release(store, root / "packed", ExportOptions("v1", gzip=True))
    return root


@pytest.fixture
def release(pristine: Path, tmp_path: Path) -> Path:
    target = tmp_path / "v1"
    shutil.copytree(pristine / "plain" / "v1", target)
    return target


def edit_line(path: Path, number: int, change) -> None:  # type: ignore[no-untyped-def]
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = change(lines[number - 1])
    path.write_text("".join(lines))


def errors(cli, release: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """The problems ``validate --json`` lists (the plain form prints them one per line)."""
    result = cli("validate", str(release), "--json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert not data["valid"]
    plain = cli("validate", str(release))
    assert plain.exit_code == 1 and "error:" in plain.stderr and "valid (" not in plain.stdout
    return data["problems"]


def test_a_pristine_release_is_valid(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("validate", str(release), "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["valid"] and data["records"] == 30 and data["problems"] == []


def test_a_line_that_breaks_the_schema_is_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    edit_line(release / "commit.jsonl", 7, lambda line: line.replace('"added":3', '"added":"3"'))
    found = errors(cli, release)
    assert found[0] == f"{release}/commit.jsonl:7: field 'added': '3' is not of type 'integer'"
    assert any("sha256" in line for line in found)


def test_malformed_json_and_extra_fields_are_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    edit_line(release / "commit.jsonl", 3, lambda line: line[:40] + "\n")
    edit_line(release / "commit.jsonl", 5, lambda line: line.replace("{", '{"extra":1,', 1))
    found = errors(cli, release)
    assert found[0].startswith(f"{release}/commit.jsonl:3: malformed JSON")
    assert found[1] == f"{release}/commit.jsonl: 1 more bad lines after the first"


def test_a_tampered_but_well_formed_line_fails_on_checksum_and_counts(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    edit_line(
        release / "commit.jsonl", 2, lambda line: line.replace('"label":null', '"label":"perf"')
    )
    found = errors(cli, release)
    said = json.loads((release / "manifest.json").read_text())["files"]["commit.jsonl"]["bytes"]
    assert f"{release}/commit.jsonl: {said + 2} bytes, manifest.json says {said}" in found
    assert any(line.startswith(f"{release}/commit.jsonl: sha256 ") for line in found)
    # the counts point at what changed: one more perf label than the manifest says
    assert any(line.startswith(f"{release}/manifest.json: counts.by_label says") for line in found)


def test_a_missing_file_is_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    (release / "schema" / "commit.schema.json").unlink()
    found = errors(cli, release)
    assert f"{release}/schema/commit.schema.json: missing (listed in manifest.json)" in found


def test_a_wrong_checksum_in_the_manifest_is_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"]["DATASHEET.md"]["sha256"] = "0" * 64
    (release / "manifest.json").write_text(json.dumps(manifest))
    found = errors(cli, release)
    assert found == [
        f"{release}/DATASHEET.md: sha256 {manifest_sha(release)} does not match manifest.json"
        f" ({'0' * 64})"
    ]


def manifest_sha(release: Path) -> str:
    import hashlib

    return hashlib.sha256((release / "DATASHEET.md").read_bytes()).hexdigest()


def test_counts_the_files_do_not_hold_are_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["counts"]["by_language"]["commit"]["cpp"] += 1
    (release / "manifest.json").write_text(json.dumps(manifest))
    (found,) = errors(cli, release)
    assert found.startswith(f"{release}/manifest.json: counts.by_language says {{")
    assert "the files hold" in found


def test_unlisted_files_and_a_bad_manifest(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    (release / "notes.txt").write_text("added later\n")
    assert errors(cli, release) == [f"{release}/notes.txt: not listed in manifest.json"]
    (release / "manifest.json").write_text('{"format": "curator-release/1"')
    assert errors(cli, release)[0].startswith(f"{release}/manifest.json:1: malformed JSON")
    (release / "manifest.json").unlink()
    assert errors(cli, release) == [
        f"{release}/manifest.json: missing (every release has a manifest.json)"
    ]


def test_a_cut_gzip_file_is_named(cli, pristine: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    release = tmp_path / "v1"
    shutil.copytree(pristine / "packed" / "v1", release)
    data = (release / "commit.jsonl.gz").read_bytes()
    assert gzip.decompress(data).count(b"\n") == 30
    (release / "commit.jsonl.gz").write_bytes(data[: len(data) // 2])
    found = errors(cli, release)
    assert found[0].startswith(f"{release}/commit.jsonl.gz: cannot be read to the end")


def test_import_refuses_a_damaged_release_and_stores_nothing(
    cli, release: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    edit_line(
        release / "commit.jsonl", 4, lambda line: line.replace('"kind":"commit"', '"kind":"ir"')
    )
    other = tmp_path / "other.db"
    result = cli("import", "release", str(release), "--db", str(other))
    assert result.exit_code == 1
    assert f"{release}/commit.jsonl:4: field 'kind': 'commit' was expected" in result.stderr
    assert "not imported, nothing was stored" in result.stderr
    with open_store(other) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM releases") == 0
