"""Releases under hostile but realistic use: items in several sets, odd text, repeated
and bad versions, damaged releases and imports into stores that already hold the items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curator.releases.export import ExportError, ExportOptions, ExportUsageError, export_release
from curator.releases.files import encode_line, file_sha256
from curator.releases.import_release import ReleaseImportError, import_release
from curator.releases.labels import LabelConflictError, adjudicated_labels
from curator.releases.validate import validate_release
from store import Store, open_store
from store.sets import NewSet, SetRow, create_set
from tests import raw_sql
from tests.annotation_data import Spec, add_items, vote

PERF = ["perf", "non-perf"]


def make_set(store: Store, name: str, labels: list[str], ids: list[int]) -> SetRow:
    return create_set(store, NewSet(name, "commit", labels, votes_per_item=1), ids)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# An item in several sets ----------------------------------------------------------------


def test_sets_that_settle_an_item_differently_stop_the_export_naming_it(
    store: Store, tmp_path: Path
) -> None:
    ids = add_items(store, [Spec("k-agree"), Spec("k-split"), Spec("k-one")])
    a = make_set(store, "a-perf", PERF, list(ids.values()))
    b = make_set(store, "b-quality", ["good", "bad"], [ids["k-split"], ids["k-agree"]])
    vote(store, ids["k-split"], "alice", "perf", set_id=a.id)
    vote(store, ids["k-split"], "bob", "bad", set_id=b.id)
    vote(store, ids["k-one"], "alice", "non-perf", set_id=a.id)
    with pytest.raises(LabelConflictError) as caught:
        adjudicated_labels(store, "commit")
    assert caught.value.conflicts == [("k-split", {"a-perf": "perf", "b-quality": "bad"})]
    message = str(caught.value)
    assert "'k-split' (a-perf: perf, b-quality: bad)" in message
    assert "--set NAME" in message and "\n" not in message
    out = tmp_path / "rel"
    with pytest.raises(ExportError, match="k-split"):
        export_release(store, out, ExportOptions("v1"))
    assert not out.exists() or not any(out.iterdir())
    # one set's labels: released as that set settles them
    export_release(store, out, ExportOptions("v1", sets=("b-quality",)))
    labels = {r["key"]: r["label"] for r in records(out / "v1" / "commit.jsonl")}
    assert labels == {"k-agree": None, "k-split": "bad"}


def test_sets_that_agree_release_the_label_with_every_vote_that_counted(store: Store) -> None:
    ids = add_items(store, [Spec("k1")])
    narrow = make_set(store, "a-narrow", PERF, list(ids.values()))
    wide = make_set(store, "b-wide", [*PERF, "unclear"], list(ids.values()))
    vote(store, ids["k1"], "alice", "perf", set_id=narrow.id)
    vote(store, ids["k1"], "bob", "perf", set_id=wide.id)
    vote(store, ids["k1"], "carol", "unclear", set_id=wide.id)
    info = adjudicated_labels(store, "commit")[ids["k1"]]
    assert info.label == "perf"
    # carol's vote counted toward b-wide, which settled the same label: kept, not hidden
    assert [v["annotator"] for v in info.votes] == ["alice", "bob", "carol"]
    assert info.confidence == round(2 / 3, 6)


def test_a_wider_set_that_outvotes_a_narrower_one_is_a_disagreement(store: Store) -> None:
    ids = add_items(store, [Spec("k1")])
    narrow = make_set(store, "a-narrow", PERF, list(ids.values()))
    wide = make_set(store, "b-wide", [*PERF, "unclear"], list(ids.values()))
    vote(store, ids["k1"], "alice", "perf", set_id=narrow.id)
    vote(store, ids["k1"], "bob", "unclear", set_id=wide.id)
    vote(store, ids["k1"], "carol", "unclear", set_id=wide.id)
    with pytest.raises(LabelConflictError, match="a-narrow: perf, b-wide: unclear"):
        adjudicated_labels(store, "commit")
    only_wide = adjudicated_labels(store, "commit", {wide.id})[ids["k1"]]
    assert only_wide.label == "unclear"


# Where a release is written -------------------------------------------------------------


@pytest.fixture
def voted(store: Store) -> Store:
    ids = add_items(store, [Spec("k1"), Spec("k2")])
    gt = make_set(store, "gt", PERF, list(ids.values()))
    vote(store, ids["k1"], "alice", "perf", set_id=gt.id)
    return store


def test_force_never_replaces_a_file_named_like_the_version(voted: Store, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    out.mkdir()
    (out / "v1").write_text("my notes\n")
    with pytest.raises(FileExistsError, match="is a file, not a release"):
        export_release(voted, out, ExportOptions("v1", force=True))
    assert (out / "v1").read_text() == "my notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["v1"]


def test_out_naming_a_file_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    items = Path(__file__).resolve().parents[1] / "sample_data" / "annotation" / "items.jsonl"
    assert cli("import", "items", str(items)).exit_code == 0
    target = tmp_path / "afile"
    target.write_text("keep\n")
    result = cli("export", "v1", "--out", str(target))
    assert result.exit_code == 2
    assert f"--out {target}: a file, not a folder" in result.output
    assert target.read_text() == "keep\n"


def test_a_release_is_never_written_inside_another(voted: Store, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    export_release(voted, out, ExportOptions("v1"))
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    for inside in (out / "v1", out / "v1" / "schema", out / "v1" / "new" / "deeper"):
        with pytest.raises(ExportUsageError, match=f"inside release {out / 'v1'}"):
            export_release(voted, inside, ExportOptions("v2"))
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert validate_release(out / "v1").ok
    # a manifest.json that is not a release's does not stop an export
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "manifest.json").write_text('{"name": "an extension"}')
    export_release(voted, tmp_path / "app" / "releases", ExportOptions("v1"))
    assert validate_release(tmp_path / "app" / "releases" / "v1").ok


# Versions -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1\n", "../v1", "v 1", ""])
def test_a_version_that_cannot_name_a_folder_is_refused(
    voted: Store, tmp_path: Path, version: str
) -> None:
    with pytest.raises(ExportUsageError, match="version"):
        export_release(voted, tmp_path / "rel", ExportOptions(version))
    assert not (tmp_path / "rel").exists() or not any((tmp_path / "rel").iterdir())


@pytest.mark.parametrize("version", ["v1\n", "../evil", "x\x00y", "has space"])
def test_a_manifest_version_that_export_refuses_does_not_validate_or_import(
    voted: Store, tmp_path: Path, version: str
) -> None:
    release = export_release(voted, tmp_path / "rel", ExportOptions("v1")).path
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["version"] = version
    (release / "manifest.json").write_text(json.dumps(manifest))
    report = validate_release(release)
    assert report.problems == [
        f"{release / 'manifest.json'}: version {version!r}: use letters, digits and . _ + -"
        " (e.g. v1.0)"
    ]
    with open_store(tmp_path / "other.db") as other:
        with pytest.raises(ReleaseImportError):
            import_release(other, release)
        assert raw_sql.scalar(other, "SELECT COUNT(*) FROM sets") == 0
        assert raw_sql.scalar(other, "SELECT COUNT(*) FROM items") == 0


# Import ---------------------------------------------------------------------------------


def test_a_refused_import_leaves_no_new_database_behind(
    cli,  # type: ignore[no-untyped-def]
    voted: Store,
    tmp_path: Path,
) -> None:
    release = export_release(voted, tmp_path / "rel", ExportOptions("v1")).path
    (release / "extra.txt").write_text("not listed\n")
    target = tmp_path / "new.db"
    refused = cli("import", "release", str(release), "--db", str(target))
    assert refused.exit_code == 1
    assert f"{release / 'extra.txt'}: not listed in manifest.json" in refused.stderr
    assert "not imported, nothing was stored" in refused.stderr
    assert not target.exists()
    (release / "extra.txt").unlink()
    for _ in range(2):  # twice: the second adds nothing
        done = cli("import", "release", str(release), "--db", str(target), "--json")
        assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["votes"] == 0
    with open_store(target) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM live_votes") == 1


def test_a_kind_that_leaves_out_a_named_set_is_a_usage_error(voted: Store, tmp_path: Path) -> None:
    with pytest.raises(ExportUsageError, match="--set gt holds commit items, which --kind kernel"):
        export_release(
            voted, tmp_path / "rel", ExportOptions("v1", kinds=("kernel",), sets=("gt",))
        )
    assert not (tmp_path / "rel").exists()
    done = export_release(
        voted, tmp_path / "rel", ExportOptions("v1", kinds=("commit",), sets=("gt",))
    )
    assert done.records == 2


def _rewrite_record(release: Path, line: int, change: dict) -> None:
    """Change one record of commit.jsonl and the manifest's size and sha256 with it, as
    a hand edit that knows the format would."""
    path = release / "commit.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[line])
    for cast in record["votes"]:
        cast.update(change)
    lines[line] = encode_line(record).decode()
    path.write_text("".join(lines))
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"]["commit.jsonl"].update(sha256=file_sha256(path), bytes=path.stat().st_size)
    (release / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("annotator", "problem"),
    [
        ("", "an annotator name is required"),
        ("\x1b[31mevil", "holds the control or invisible character U+001B"),
        (" alice ", "annotator name ' alice ' has spaces around it"),
    ],
)
def test_a_release_vote_by_a_name_no_one_could_vote_as_is_refused(
    voted: Store, tmp_path: Path, annotator: str, problem: str
) -> None:
    release = export_release(voted, tmp_path / "rel", ExportOptions("v1")).path
    _rewrite_record(release, 0, {"annotator": annotator})
    assert validate_release(release).ok
    with open_store(tmp_path / "other.db") as other:
        with pytest.raises(ReleaseImportError) as caught:
            import_release(other, release)
        [line] = caught.value.problems
        assert line.startswith(f"{release / 'commit.jsonl'}:1: vote: ") and problem in line
        assert raw_sql.scalar(other, "SELECT COUNT(*) FROM items") == 0
        assert raw_sql.scalar(other, "SELECT COUNT(*) FROM votes") == 0


def test_a_key_the_store_holds_for_another_commit_refuses_the_release(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    sample = Path(__file__).resolve().parents[1] / "sample_data" / "annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    assert cli("export", "v1", "--out", str(tmp_path / "rel")).exit_code == 0
    other = tmp_path / "other.db"
    clash = tmp_path / "clash.jsonl"
    clash.write_text(
        json.dumps(
            {
                "id": "ex-001",
                "repo": "https://example.org/other/proj",
                "sha": "1" * 40,
                "message": "Unrelated change",
                "diff": "@@\n-x\n+y\n",
            }
        )
        + "\n"
    )
    assert cli("import", "items", str(clash), "--db", str(other)).exit_code == 0
    refused = cli("import", "release", str(tmp_path / "rel" / "v1"), "--db", str(other))
    assert refused.exit_code == 1
    assert (
        f"{tmp_path / 'rel' / 'v1' / 'commit.jsonl'}:1: commit 'ex-001' is another change in"
        f" this store (https://example.org/other/proj {'1' * 40})" in refused.stderr
    )
    with open_store(other) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 1
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0
    # the store the release came from takes it back: same keys, same changes
    again = cli("import", "release", str(tmp_path / "rel" / "v1"))
    assert again.exit_code == 0, again.stderr
