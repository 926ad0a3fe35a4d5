"""``curator export`` / ``import release`` on commit stores: contents, labels, splits,
determinism, atomicity (a bad record, a killed process) and the round trip."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.adjudication import final_labels
from curator.releases.export import ExportOptions, export_release
from curator.releases.schema import record_schema
from curator.releases.validate import validate_release
from store import open_store
from store.bulk import bulk_insert_commits
from store.releases import get_release
from store.sets import get_set, set_item_ids
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.release_data import LABELER, annotated_store, commit_rows

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.db"
    with open_store(path) as store:
        annotated_store(store)
    return path


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def files_of(release: Path) -> dict[str, bytes]:
    return {
        p.relative_to(release).as_posix(): p.read_bytes()
        for p in sorted(release.rglob("*"))
        if p.is_file()
    }


def test_export_holds_every_commit_with_its_label_and_validates(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("export", "v1.0", "--kind", "commit", "--out", str(tmp_path / "rel"))
    assert result.exit_code == 0, result.output
    release = tmp_path / "rel" / "v1.0"
    files = set(files_of(release))
    assert {f for f in files if not f.startswith("charts/")} == {
        "commit.jsonl",
        "schema/commit.schema.json",
        "DATASHEET.md",
        "README.md",
        "manifest.json",
    }
    # the datasheet's charts: SVG files beside it, shown in it, listed in the manifest
    charts = {f for f in files if f.startswith("charts/")}
    assert "charts/labels-gt.svg" in charts
    sheet = (release / "DATASHEET.md").read_text()
    assert all(f"]({name})" in sheet for name in charts)
    rows = records(release / "commit.jsonl")
    assert len(rows) == 60
    assert [r["key"] for r in rows] == sorted(r["key"] for r in rows)
    assert set(rows[0]) == set(record_schema("commit")["properties"])
    with open_store(db) as store:
        gt = get_set(store, "gt")
        assert gt is not None
        settled = final_labels(store, gt)
        key_of = dict(raw_sql.query(store, "SELECT id, key FROM items"))
    labeled = {r["key"]: r for r in rows if r["label_source"] == "adjudicated"}
    # every item settled in the ground-truth set carries that label (the audit adds more)
    assert {key_of[i]: label for i, label in settled.items()}.items() <= {
        k: r["label"] for k, r in labeled.items()
    }.items()
    adjudicated = next(
        r for r in labeled.values() if any(v["role"] == "adjudicator" for v in r["votes"])
    )
    assert {v["annotator"] for v in adjudicated["votes"]} >= {"alice", "bob", "dana"}
    assert adjudicated["confidence"] == 0.5
    unanimous = next(r for r in labeled.values() if r["label"] == "perf" and r["confidence"] == 1.0)
    assert unanimous["category"] == "inefficient-io"
    unlabeled = [r for r in rows if r["label"] is None]
    assert unlabeled and all(r["votes"] == [] and r["label_source"] is None for r in unlabeled)
    some = rows[0]
    assert some["stars"] == some["provenance"]["stars"] and some["diff"].startswith("-old")

    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["version"] == "v1.0" and manifest["counts"]["records"] == 60
    assert manifest["counts"]["by_label"]["commit"]["unlabeled"] == len(unlabeled)
    assert manifest["store"]["schema_version"] >= 4 and manifest["tool"]["name"] == "curator"
    assert manifest["filters"]["kinds"] == ["commit"] and manifest["filters"]["labels"] is None
    shown = cli("validate", str(release))
    assert shown.exit_code == 0 and f"valid (60 records in {4 + len(charts)} files)" in shown.stdout
    with open_store(db) as store:
        recorded = get_release(store, "v1.0")
    assert recorded is not None and recorded.counts == manifest["counts"]
    assert recorded.checksums == {n: e["sha256"] for n, e in manifest["files"].items()}


def test_datasheet_answers_the_questions_from_the_store(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cli("export", "v1", "--out", str(tmp_path))
    sheet = (tmp_path / "v1" / "DATASHEET.md").read_text()
    for heading in (
        "Composition",
        "Collection",
        "Preprocessing",
        "Deduplication",
        "Labeling",
        "Agreement",
        "Audit precision",
        "Licenses",
        "Splits",
        "Maintenance",
    ):
        assert f"## {heading}" in sheet
    audit_row = next(line for line in sheet.splitlines() if line.startswith("| audit-1 | keyword"))
    # five of the six audited positives were judged perf: 0.833 with its Wilson interval
    assert "| 0.833 |" in audit_row and "[0.436, 0.970] at 95%" in audit_row
    assert "| gt |" in sheet and "Fleiss" in sheet


def test_adjudicated_predicted_and_audited_filters(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "rel")
    assert cli("export", "adj", "--labels", "adjudicated", "--out", out).exit_code == 0
    adj = records(tmp_path / "rel" / "adj" / "commit.jsonl")
    assert adj and all(r["label_source"] == "adjudicated" and r["votes"] for r in adj)

    got = cli(
        "export", "pred", "--labels", "predicted", "--labeler", "keyword@latest",
        "--min-confidence", "0.8", "--out", out,
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    pred = records(tmp_path / "rel" / "pred" / "commit.jsonl")
    with open_store(db) as store:
        expected = raw_sql.scalar(
            store, "SELECT COUNT(*) FROM predictions WHERE labeler = ? AND score >= 0.8", (LABELER,)
        )
    assert len(pred) == expected
    assert all(
        r["labeler"] == LABELER and r["confidence"] >= 0.8 and r["votes"] == [] for r in pred
    )
    manifest = json.loads((tmp_path / "rel" / "pred" / "manifest.json").read_text())
    assert manifest["filters"]["labeler"] == LABELER
    assert manifest["filters"]["labeler_asked"] == "keyword@latest"

    audited = cli("export", "aud", "--audited-only", "--labels", "adjudicated", "--out", out)
    assert audited.exit_code == 0
    aud = records(tmp_path / "rel" / "aud" / "commit.jsonl")
    assert len(aud) == 6 and sum(r["label"] == "perf" for r in aud) >= 5


def test_a_release_of_named_sets(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "rel")
    got = cli("export", "gt1", "--set", "gt", "--labels", "adjudicated", "--out", out)
    assert got.exit_code == 0, got.output
    with open_store(db) as store:
        gt, audit = get_set(store, "gt"), get_set(store, "audit-1")
        assert gt is not None and audit is not None
        settled = final_labels(store, gt)
        members = set(set_item_ids(store, gt.id)) | set(set_item_ids(store, audit.id))
        keys = {int(r[0]): str(r[1]) for r in raw_sql.query(store, "SELECT id, key FROM items")}
    rows = records(tmp_path / "rel" / "gt1" / "commit.jsonl")
    assert {r["key"]: r["label"] for r in rows} == {keys[i]: label for i, label in settled.items()}
    manifest = json.loads((tmp_path / "rel" / "gt1" / "manifest.json").read_text())
    assert manifest["filters"]["sets"] == ["gt"]
    datasheet = (tmp_path / "rel" / "gt1" / "DATASHEET.md").read_text()
    assert "Only items of the set `gt` are included" in datasheet

    both = cli("export", "two", "--set", "gt", "--set", "audit-1", "--out", out)
    assert both.exit_code == 0, both.output
    rows = records(tmp_path / "rel" / "two" / "commit.jsonl")
    assert sorted(r["key"] for r in rows) == sorted(keys[i] for i in members)
    assert len(rows) < len(keys)  # the store holds commits in no set

    ghost = cli("export", "g", "--set", "ghost", "--out", out)
    assert ghost.exit_code == 1 and "no set named 'ghost'" in ghost.stderr
    assert not (tmp_path / "rel" / "g").exists()


def test_option_mistakes_are_usage_errors(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "rel")
    for args, words in (
        (["--labels", "predicted"], "needs --labeler"),
        (["--labels", "guessed"], "use adjudicated or predicted"),
        (["--split", "repo:50/50/50/50"], "give 2 or 3 weights"),
        (["--split", "file:80/20"], "expected repo:"),
        (["--kind", "image"], "kind 'image'"),
        (["--created-at", "yesterday"], "give an ISO 8601 time"),
    ):
        result = cli("export", "v1", *args, "--out", out)
        assert result.exit_code == 2 and words in result.stderr, (args, result.stderr)
    bad = cli("export", "../v1", "--out", out)
    assert bad.exit_code == 2 and "use letters, digits" in bad.stderr
    missing = cli(
        "export", "v1", "--labels", "predicted", "--labeler", "student@latest", "--out", out
    )
    assert (
        missing.exit_code == 1 and "no predictions from any version of 'student'" in missing.stderr
    )
    assert not (tmp_path / "rel" / "v1").exists()
    empty = cli("export", "none", "--labels", "predicted", "--labeler", LABELER,
                "--min-confidence", "2", "--out", out)  # fmt: skip
    assert empty.exit_code == 0 and "holds no records" in empty.stderr
    assert validate_release(tmp_path / "rel" / "none").ok
    (tmp_path / "a-file").write_text("not a folder\n")
    blocked = cli("export", "v1", "--out", str(tmp_path / "a-file"))
    assert blocked.exit_code == 2 and "a file, not a folder" in blocked.stderr


def test_split_keeps_repositories_disjoint(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("export", "v1", "--split", "repo:60/20/20", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    release = tmp_path / "v1"
    parts = {p: records(release / f"commit.{p}.jsonl") for p in ("train", "dev", "test")}
    repos = {p: {r["source"] for r in rows} for p, rows in parts.items()}
    assert repos["train"] and repos["dev"] and repos["test"]
    assert not (
        repos["train"] & repos["dev"]
        or repos["train"] & repos["test"]
        or repos["dev"] & repos["test"]
    )
    assert sum(len(rows) for rows in parts.values()) == 60
    assert all(r["split"] == p for p, rows in parts.items() for r in rows)
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["counts"]["by_split"]["commit"] == {
        p: len(rows) for p, rows in sorted(parts.items())
    }
    assert validate_release(release).ok
    named = cli("export", "v2", "--split", "repo:fit=1/hold=1", "--out", str(tmp_path))
    assert named.exit_code == 0
    assert {p.name for p in (tmp_path / "v2").glob("*.jsonl")} == {
        "commit.fit.jsonl",
        "commit.hold.jsonl",
    }


def test_reexport_is_byte_identical(cli, db, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    args = ("--split", "repo:80/10/10", "--labels", "adjudicated")
    # two exports at different times: only the manifest's creation time may differ
    cli("export", "v1", *args, "--out", str(tmp_path / "a"))
    cli("export", "v1", *args, "--out", str(tmp_path / "b"), "--created-at", "2030-01-01T00:00:00Z")
    a, b = files_of(tmp_path / "a" / "v1"), files_of(tmp_path / "b" / "v1")
    assert a.keys() == b.keys()
    assert [n for n in a if a[n] != b[n]] == ["manifest.json"]
    ma, mb = (json.loads(x["manifest.json"]) for x in (a, b))
    assert mb.pop("created_at") == "2030-01-01T00:00:00Z"
    assert ma.pop("created_at") != "2030-01-01T00:00:00Z" and ma == mb

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    for name in ("c", "d"):
        cli("export", "v1", *args, "--gzip", "--out", str(tmp_path / name))
    c, d = files_of(tmp_path / "c" / "v1"), files_of(tmp_path / "d" / "v1")
    assert c == d and "commit.train.jsonl.gz" in c
    assert json.loads(c["manifest.json"])["created_at"] == "2023-11-14T22:13:20Z"
    assert validate_release(tmp_path / "c" / "v1").ok


def test_an_existing_release_needs_force(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path)
    assert cli("export", "v1", "--out", out).exit_code == 0
    before = files_of(tmp_path / "v1")
    again = cli("export", "v1", "--labels", "adjudicated", "--out", out)
    assert again.exit_code == 1 and "already exists (use --force" in again.stderr
    assert files_of(tmp_path / "v1") == before
    forced = cli("export", "v1", "--labels", "adjudicated", "--out", out, "--force")
    assert forced.exit_code == 0
    assert files_of(tmp_path / "v1") != before and validate_release(tmp_path / "v1").ok
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_force_replaces_only_a_release_and_never_the_database(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine = tmp_path / "out" / "v1"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("keep me")
    refused = cli("export", "v1", "--out", str(tmp_path / "out"), "--force")
    assert refused.exit_code == 1 and "not a release (no manifest.json)" in refused.stderr
    assert (mine / "notes.txt").read_text() == "keep me"
    home = tmp_path / "home"
    (home / "v1").mkdir(parents=True)
    moved = home / "v1" / "store.db"
    db.rename(moved)
    (home / "v1" / "manifest.json").write_text("{}")
    held = cli("--db", str(moved), "export", "v1", "--out", str(home), "--force")
    assert held.exit_code == 1 and "it is never replaced" in held.stderr
    with open_store(moved, create=False) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 60
    (tmp_path / "file").mkdir()
    (tmp_path / "file" / "v1").write_text("a plain file")
    over = cli("--db", str(moved), "export", "v1", "--out", str(tmp_path / "file"), "--force")
    assert over.exit_code == 1 and "is a file, not a release" in over.stderr
    assert (tmp_path / "file" / "v1").read_text() == "a plain file"
    assert [p.name for p in (tmp_path / "file").iterdir()] == ["v1"]  # no .v1.partial-PID left
    (home / "v1" / "manifest.json").unlink()
    (home / "v1" / "store.db").rename(tmp_path / "store.db")
    (home / "v1").rmdir()
    assert (
        cli("--db", str(tmp_path / "store.db"), "export", "v1", "--out", str(home)).exit_code == 0
    )
    again = cli("--db", str(tmp_path / "store.db"), "export", "v1", "--out", str(home), "--force")
    assert again.exit_code == 0, again.stderr
    assert [p.name for p in home.iterdir()] == ["v1"]  # no .v1.old-PID left


def test_a_bad_record_aborts_and_keeps_the_old_release(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = str(tmp_path / "rel")
    assert cli("export", "v1", "--out", out).exit_code == 0
    before = files_of(tmp_path / "rel" / "v1")
    with open_store(db) as store, store.transaction() as conn:
        bad_id, bad_key = conn.execute(
            "SELECT id, key FROM items ORDER BY key LIMIT 1 OFFSET 30"
        ).fetchone()
        # bytes that are not UTF-8, as a broken writer could have stored them
        conn.execute(
            "UPDATE commits SET message = CAST(X'4fff20626164' AS TEXT) WHERE item_id = ?",
            (bad_id,),
        )
    failed = cli("export", "v1", "--out", out, "--force")
    assert failed.exit_code == 1
    assert f"commit item '{bad_key}': stored data cannot be read" in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
    assert files_of(tmp_path / "rel" / "v1") == before
    assert sorted(p.name for p in (tmp_path / "rel").iterdir()) == ["v1"]
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 60


def test_a_killed_export_leaves_the_old_release_whole(tmp_path: Path) -> None:
    db, out = tmp_path / "big.db", tmp_path / "rel"
    with open_store(db) as store:
        bulk_insert_commits(store, commit_rows(10_000, repos=40, diff_lines=10))
        export_release(store, out, ExportOptions("v1"))
    before = files_of(out / "v1")

    command = [sys.executable, "-m", "curator", "export", "v1", "--out", str(out), "--force"]
    relabel = [*command, "--labels", "predicted", "--labeler", LABELER]
    env = {**os.environ, "CURATOR_DB": str(db)}
    proc = subprocess.Popen(relabel, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        partial = None
        while proc.poll() is None and partial is None:
            partial = next(
                (p for p in out.glob(".v1.partial-*/commit.jsonl") if p.stat().st_size > 0), None
            )
        assert partial is not None, "the export ended before it could be interrupted"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert files_of(out / "v1") == before  # byte for byte the release written before
    assert [p.name for p in out.glob(".v1.partial-*")] == [f".v1.partial-{proc.pid}"]
    # the next export clears what the killed one left
    with open_store(db) as store:
        export_release(store, out, ExportOptions("v1", force=True))
    assert sorted(p.name for p in out.iterdir()) == ["v1"]


def test_export_import_export_gives_the_same_files(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "other.db"
    for name, args in (
        ("all", ("--split", "repo:80/10/10")),
        ("adj", ("--labels", "adjudicated")),
        ("pred", ("--labels", "predicted", "--labeler", LABELER, "--min-confidence", "0.6")),
    ):
        first = tmp_path / "first"
        assert cli("export", name, *args, "--out", str(first)).exit_code == 0
        imported = cli("import", "release", str(first / name), "--db", str(other))
        assert imported.exit_code == 0, imported.output
        second = tmp_path / "second"
        assert cli("export", name, *args, "--out", str(second), "--db", str(other)).exit_code == 0
        a, b = files_of(first / name), files_of(second / name)
        data = [n for n in a if n.endswith(".jsonl") or n.startswith("schema/")]
        assert data and all(a[n] == b[n] for n in data), name
        assert json.loads(a["manifest.json"])["counts"] == json.loads(b["manifest.json"])["counts"]
    again = cli("import", "release", str(tmp_path / "first" / "all"), "--db", str(other))
    assert again.exit_code == 0 and "0 votes, 0 predictions" in again.stdout
    with open_store(other) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 60
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM releases") == 3
        imported = get_set(store, "release-all-commit")
        assert imported is not None and imported.labels == ["perf", "non-perf"]
        skips = raw_sql.scalar(store, "SELECT COUNT(*) FROM votes WHERE label = 'skip'")
        assert skips == 1


def test_importing_an_old_release_keeps_votes_changed_since(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("export", "old", "--labels", "adjudicated", "--out", str(tmp_path)).exit_code == 0
    with open_store(db) as store:
        item = raw_sql.scalar(
            store,
            "SELECT item_id FROM live_votes WHERE annotator = 'alice' AND label = 'perf'"
            " ORDER BY item_id LIMIT 1",
        )
        append_votes(store, [VoteRow(int(item), "alice", "non-perf", note="changed my mind")])
        votes_before = raw_sql.scalar(store, "SELECT COUNT(*) FROM votes")
    result = cli("import", "release", str(tmp_path / "old"))
    assert result.exit_code == 0 and "0 votes, 0 predictions" in result.stdout
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == votes_before
        assert (
            raw_sql.scalar(
                store,
                "SELECT label FROM live_votes WHERE item_id = ? AND annotator = 'alice'",
                (item,),
            )
            == "non-perf"
        )


def test_a_release_replaced_by_a_killed_export_is_put_back(cli, db, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("export", "v1", "--out", str(tmp_path)).exit_code == 0
    before = files_of(tmp_path / "v1")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    # what a kill between moving the old release aside and renaming the new one leaves
    (tmp_path / "v1").rename(tmp_path / f".v1.old-{gone.stdout.strip()}")
    (tmp_path / f".v1.partial-{gone.stdout.strip()}").mkdir()
    again = cli("export", "v1", "--out", str(tmp_path))
    assert again.exit_code == 1 and "already exists" in again.stderr
    assert files_of(tmp_path / "v1") == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".v1")) == []


def test_kinds_the_filters_leave_empty_get_no_files(tmp_path: Path) -> None:
    from curator.releases.export import ExportOptions, export_release
    from store import open_store
    from store.items import ImportedItem, insert_imported_items
    from store.kernel_records import KernelRow
    from store.kernels import save_kernel_batch
    from store.predictions import add_predictions
    from store.records import PredictionRow

    with open_store(tmp_path / "k.db") as store:
        [(_, commit_id)] = insert_imported_items(
            store,
            [
                ImportedItem(
                    "commit", "c1", "r", "python", None,
                    {"message": "speed up", "model_input": "speed up"}, {},
                )
            ],
        )  # fmt: skip
        save_kernel_batch(
            store,
            [
                KernelRow(
                    "r", "k1", "a.cl", "A", "cl", "__kernel void A() {}", None, "h", False, [],
                    False, 1, "too few", "too-few-instructions",
                )
            ],
        )  # fmt: skip
        add_predictions(store, [(commit_id, PredictionRow("keyword@1", "perf", 1.0))])
        result = export_release(
            store,
            tmp_path / "rel",
            ExportOptions(version="v1", labels="predicted", labeler="keyword@1"),
        )
    assert result.manifest["filters"]["kinds"] == ["commit"]
    assert not list((tmp_path / "rel" / "v1").glob("kernel*"))
