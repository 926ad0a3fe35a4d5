"""Tampered releases whose manifest was recomputed to match: Curator's own schema, the
set's labels and an Ed25519 signature catch what sha256 and counts cannot."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from curator.releases.export import ExportOptions, export_release
from curator.releases.manifest import data_files
from curator.releases.signing import generate_keys
from store import open_store
from tests import raw_sql
from tests.release_data import annotated_store


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store's release, unsigned and signed, and two key pairs (ours and another)."""
    root = tmp_path_factory.mktemp("signed")
    ours = generate_keys(root / "keys")
    generate_keys(root / "other-keys")
    with open_store(root / "source.db") as store:
        annotated_store(store, n=30)
        export_release(store, root / "plain", ExportOptions("v1"))
        export_release(store, root / "signed", ExportOptions("v1", sign_key=ours.private))
    return root


@pytest.fixture
def release(made: Path, tmp_path: Path) -> Path:
    target = tmp_path / "v1"
    shutil.copytree(made / "plain" / "v1", target, symlinks=True)
    return target


@pytest.fixture
def signed(made: Path, tmp_path: Path) -> Path:
    target = tmp_path / "signed-v1"
    shutil.copytree(made / "signed" / "v1", target, symlinks=True)
    return target


def reseal(release: Path) -> None:
    """What a forger does: recompute every size, sha256, record count and tally."""
    manifest = json.loads((release / "manifest.json").read_text())
    tallies: dict[str, dict[str, Counter[str]]] = {}
    by_kind: Counter[str] = Counter()
    for name, entry in data_files(manifest):
        lines = (release / name).read_bytes().splitlines()
        entry["records"] = len(lines)
        tally = tallies.setdefault(
            entry["kind"], {w: Counter() for w in ("label", "lang", "split")}
        )
        for raw in lines:
            record = json.loads(raw)
            by_kind[record["kind"]] += 1
            tally["label"][record["label"] or "unlabeled"] += 1
            tally["lang"][record["language"] or "unknown"] += 1
            tally["split"][record["split"] or "all"] += 1
    counts = manifest["counts"]
    counts["records"] = sum(by_kind.values())
    counts["by_kind"] = dict(by_kind)
    for field, short in (("by_label", "label"), ("by_language", "lang"), ("by_split", "split")):
        counts[field] = {kind: dict(t[short]) for kind, t in tallies.items()}
    for name, entry in manifest["files"].items():
        data = (release / name).read_bytes()
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["bytes"] = len(data)
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def rewrite(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    path.write_bytes(change(path.read_text()).encode("utf-8"))


def problems(cli, release: Path, *extra: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = cli("validate", str(release), "--json", *extra)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)["problems"]


def import_fails(cli, release: Path, db: Path, *extra: str) -> str:  # type: ignore[no-untyped-def]
    result = cli("import", "release", str(release), "--db", str(db), *extra)
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM sets") == 0
    return result.stderr


def test_a_loosened_shipped_schema_does_not_let_a_bad_record_in(
    cli, release: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    schema = json.loads((release / "schema/commit.schema.json").read_text())
    schema["properties"]["added"] = {}
    (release / "schema/commit.schema.json").write_text(json.dumps(schema))
    rewrite(release / "commit.jsonl", lambda t: t.replace('"added":3', '"added":"three"', 1))
    reseal(release)
    found = problems(cli, release)
    assert found[0] == f"{release}/commit.jsonl:1: field 'added': 'three' is not of type 'integer'"
    assert any(
        "schema/commit.schema.json: differs from Curator's commit schema" in p for p in found
    )
    err = import_fails(cli, release, tmp_path / "other.db")
    assert "commit.jsonl:1: field 'added'" in err


def test_the_shipped_schema_alone_differing_is_a_problem(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    schema = json.loads((release / "schema/commit.schema.json").read_text())
    schema["title"] = "something else"
    (release / "schema/commit.schema.json").write_text(json.dumps(schema))
    reseal(release)
    (found,) = problems(cli, release)
    assert found.startswith(f"{release}/schema/commit.schema.json: differs from Curator's")


def _bogus(text: str) -> str:
    return text.replace('"label":"perf"', '"label":"bogus"')


def test_a_label_outside_the_set_is_named_unless_allowed(
    cli, release: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    rewrite(release / "commit.jsonl", _bogus)
    reseal(release)
    assert cli("validate", str(release)).exit_code == 0  # well formed: the store decides
    lines = (release / "commit.jsonl").read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if '"bogus"' in line)
    err = import_fails(cli, release, tmp_path / "refused.db")
    assert (
        f"{release}/commit.jsonl:{first}: vote label 'bogus' is not one of the set's labels"
        " (non-perf, perf); --allow-new-labels adds it" in err
    )
    record = next(n for n, line in enumerate(lines, 1) if '"label":"bogus","label_source"' in line)
    assert f"{release}/commit.jsonl:{record}: label 'bogus' is not one" in err
    allowed = cli(
        "import", "release", str(release), "--db", str(tmp_path / "ok.db"), "--allow-new-labels"
    )
    assert allowed.exit_code == 0, allowed.output
    assert "widened release-v1-commit with the labels bogus" in allowed.stderr
    with open_store(tmp_path / "ok.db") as store:
        labels = raw_sql.scalar(store, "SELECT labels FROM sets WHERE name = 'release-v1-commit'")
    assert json.loads(labels) == ["perf", "non-perf", "bogus"]


def test_keys_generate_never_overwrites(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    made = cli("keys", "generate", str(tmp_path / "k"))
    assert made.exit_code == 0, made.output
    assert (tmp_path / "k/release.key").stat().st_mode & 0o777 == 0o600
    before = (tmp_path / "k/release.key").read_bytes()
    again = cli("keys", "generate", str(tmp_path / "k"))
    assert again.exit_code == 1 and "already exists" in again.stderr
    assert (tmp_path / "k/release.key").read_bytes() == before


def test_a_signed_release_verifies_and_imports(
    cli, signed: Path, made: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    key = str(made / "keys/release.pub")
    checked = cli("validate", str(signed), "--key", key)
    assert checked.exit_code == 0 and "signed by key" in checked.stdout
    loaded = cli(
        "import", "release", str(signed), "--db", str(tmp_path / "x.db"),
        "--require-signature", "--key", key,
    )  # fmt: skip
    assert loaded.exit_code == 0, loaded.output
    assert "verified" in loaded.stdout


def test_a_swap_with_everything_recomputed_fails_the_signature(
    cli, signed: Path, made: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    swap = {'"label":"perf"': '"label":"non-perf"', '"label":"non-perf"': '"label":"perf"'}

    def swapped(text: str) -> str:
        return "".join(swap.get(part, part) for part in _split_labels(text))

    rewrite(signed / "commit.jsonl", swapped)
    reseal(signed)
    assert cli("validate", str(signed)).exit_code == 0  # only the signature can tell
    key = str(made / "keys/release.pub")
    (found,) = problems(cli, signed, "--key", key)
    assert found == (
        f"{signed}/manifest.json.sig: the signature does not match manifest.json"
        " (changed since it was signed)"
    )
    err = import_fails(cli, signed, tmp_path / "a.db", "--require-signature", "--key", key)
    assert "the signature does not match manifest.json" in err


def _split_labels(text: str) -> list[str]:
    import re

    return re.split(r'("label":"(?:non-perf|perf)")', text)


def test_unsigned_or_wrongly_signed_releases_are_refused(
    cli, release: Path, signed: Path, made: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    key = str(made / "keys/release.pub")
    err = import_fails(cli, release, tmp_path / "a.db", "--require-signature", "--key", key)
    assert "manifest.json.sig: missing: the release is not signed" in err
    other = str(made / "other-keys/release.pub")
    (found,) = problems(cli, signed, "--key", other)
    assert "signed by key" in found and "not by the key given" in found
    usage = cli("import", "release", str(signed), "--require-signature")
    assert usage.exit_code == 2 and "needs --key" in usage.stderr
    not_a_key = cli("validate", str(signed), "--key", str(made / "keys/release.key"))
    assert not_a_key.exit_code == 2 and "--key:" in not_a_key.stderr


def test_a_symlinked_data_file_is_refused(cli, release: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    moved = tmp_path / "elsewhere.jsonl"
    os.replace(release / "commit.jsonl", moved)
    (release / "commit.jsonl").symlink_to(moved)
    found = problems(cli, release)
    assert found == [
        f"{release}/commit.jsonl: a symbolic link (a release holds regular files only)"
    ]
    import_fails(cli, release, tmp_path / "a.db")


def test_crlf_line_endings_are_named(cli, release: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rewrite(release / "commit.jsonl", lambda t: t.replace("\n", "\r\n"))
    reseal(release)
    found = problems(cli, release)
    assert found[0] == (
        f"{release}/commit.jsonl:1: CRLF line ending (releases are written with LF endings only)"
    )
    import_fails(cli, release, tmp_path / "a.db")


def test_hostile_json_in_a_record_is_named(cli, release: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rewrite(
        release / "commit.jsonl",
        lambda t: t.replace('"message":"', '"message":"bad \\ud800 surrogate ', 1),
    )
    reseal(release)
    found = problems(cli, release)
    assert found[0] == (
        f"{release}/commit.jsonl:1: field 'message' holds a lone surrogate (\\ud800), not Unicode"
    )
    import_fails(cli, release, tmp_path / "a.db")


def test_deeply_nested_json_is_named(cli, release: Path) -> None:  # type: ignore[no-untyped-def]
    lines = (release / "commit.jsonl").read_text().splitlines(keepends=True)
    lines[0] = "[" * 100_000 + "\n"
    (release / "commit.jsonl").write_text("".join(lines))
    reseal_sizes_only = problems(cli, release)
    assert reseal_sizes_only[0] == f"{release}/commit.jsonl:1: JSON nested too deeply to read"


def test_a_bad_signing_key_stops_the_export_before_anything_is_written(
    cli, made: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    source = str(made / "source.db")
    public = str(made / "keys/release.pub")
    result = cli("export", "v2", "--out", str(tmp_path), "--sign", public, "--db", source)
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(f"error: --sign: {public}: not an unencrypted PEM")
    assert list(tmp_path.iterdir()) == []
