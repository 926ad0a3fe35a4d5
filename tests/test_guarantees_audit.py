"""Promises of docs/guarantees.md that no other test checked, each on real components:
real `curator` processes, real SQLite files, real git repositories and real signals."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from curator.releases.export import ExportOptions, export_release
from store import open_store
from store.bulk import bulk_insert_commits
from store.records import PredictionRow
from tests import raw_sql
from tests.gitrepo import GitRepo
from tests.release_data import commit_rows
from tests.test_mining_resume import build_history, mine_cmd, snapshot

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "annotation"


def curator(
    *args: str | bytes, env: dict[str, str | bytes] | None = None, **kwargs
) -> subprocess.CompletedProcess:  # type: ignore[type-arg,no-untyped-def]
    """``python -m curator ARGS`` as a user runs it (stdout and stderr captured unless
    ``kwargs`` say otherwise)."""
    kwargs.setdefault("capture_output", True)
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "curator", *args], cwd=ROOT, env=full_env, check=False, **kwargs
    )


@pytest.fixture
def voted(tmp_path: Path) -> Path:
    """A store holding the sample set `gt` with its votes."""
    db = tmp_path / "g.db"
    made = curator("--db", str(db), "import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt")
    assert made.returncode == 0, made.stderr
    votes = curator("--db", str(db), "import", "votes", str(SAMPLE / "votes.csv"))
    assert votes.returncode == 0, votes.stderr
    return db


def counts(db: Path) -> tuple[int, ...]:
    with open_store(db) as store:
        return tuple(
            int(raw_sql.scalar(store, f"SELECT COUNT(*) FROM {table}"))  # type: ignore[arg-type]
            for table in ("items", "votes", "sets", "predictions")
        )


# -- A killed run ---------------------------------------------------------------------


def test_ctrl_c_mid_mining_keeps_the_last_commit_and_a_rerun_ends_clean(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT, not SIGKILL) while `mine commits` stores batches: no traceback, a
    non-zero exit, a sound database holding whole batches, and a rerun that ends with
    exactly a clean run's rows."""
    repo = GitRepo(tmp_path / "repo")
    build_history(repo, 200)
    env = {**os.environ, "COLUMNS": "120"}
    clean_db = tmp_path / "clean.db"
    subprocess.run(mine_cmd(repo.path, clean_db), check=True, env=env, capture_output=True)
    clean = snapshot(clean_db)

    db = tmp_path / "interrupted.db"
    proc = subprocess.Popen(
        mine_cmd(repo.path, db), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            stored = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            conn.close()
        except sqlite3.OperationalError:
            continue
        if stored >= 10:
            break
    assert proc.poll() is None, "the run finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert b"Traceback" not in err, err.decode(errors="replace")

    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()
    partial = snapshot(db)
    assert 10 <= len(partial["items"]) < len(clean["items"])
    # never half a batch: each stored commit came with the prediction stored beside it
    assert sorted(key for key, *_ in partial["predictions"]) == [k for _, k, *_ in partial["items"]]

    subprocess.run(mine_cmd(repo.path, db), check=True, env=env, capture_output=True)
    assert snapshot(db) == clean


def test_report_files_are_written_through_links_keeping_the_mode(voted: Path) -> None:
    """`eval --markdown LINK --out FILE`: the link stays a link, its target is replaced
    with the old target's mode; the JSON file keeps its mode; nothing temporary is left."""
    folder = voted.parent
    target = folder / "real.md"
    target.write_text("old\n")
    target.chmod(0o600)
    (folder / "link.md").symlink_to("real.md")
    scores = folder / "scores.json"
    scores.write_text("old\n")
    scores.chmod(0o640)
    done = curator(
        "--db", str(voted), "eval", "gt", "--labeler", "keyword@1",
        "--markdown", str(folder / "link.md"), "--out", str(scores),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (folder / "link.md").is_symlink()
    assert target.read_text().startswith("Evaluation on `gt`")
    assert target.stat().st_mode & 0o777 == 0o600
    assert json.loads(scores.read_text())["set"] == "gt"
    assert scores.stat().st_mode & 0o777 == 0o640
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_a_report_written_into_a_fifo_leaves_the_fifo(voted: Path) -> None:
    fifo = voted.parent / "report.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    done = curator("--db", str(voted), "eval", "gt", "--labeler", "keyword@1", "--out", str(fifo))
    read, _ = reader.communicate(timeout=30)
    assert done.returncode == 0, done.stderr
    assert json.loads(read)["set"] == "gt"
    assert fifo.is_fifo()


def test_out_dev_stdout_into_a_pipe(voted: Path) -> None:
    """`curator eval ... --out /dev/stdout | jq`: the JSON goes down the pipe."""
    done = curator(
        "--db", str(voted), "eval", "gt", "--labeler", "keyword@1", "--no-confusion",
        "--out", "/dev/stdout",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b'"set": "gt"' in done.stdout


def test_out_dev_stdout_redirected_to_a_file_keeps_everything_printed(voted: Path) -> None:
    """`curator eval ... --out /dev/stdout > all.txt`: all.txt holds the table and the
    JSON, as it does when stdout is a pipe, not only the JSON."""
    table = curator(
        "--db", str(voted), "eval", "gt", "--labeler", "keyword@1", "--no-confusion"
    ).stdout  # fmt: skip
    out = voted.parent / "all.txt"
    with out.open("wb") as sink:
        done = curator(
            "--db", str(voted), "eval", "gt", "--labeler", "keyword@1", "--no-confusion",
            "--out", "/dev/stdout", stdout=sink, stderr=subprocess.PIPE, capture_output=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = out.read_bytes()
    assert table.strip() in written and b'"set": "gt"' in written


# -- Hostile input --------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["CURATOR_ANNOTATOR", "CURATOR_DB"])
def test_a_curator_variable_that_is_not_utf8_is_named(voted: Path, variable: str) -> None:
    before = counts(voted)
    env: dict[str, str | bytes] = {"CURATOR_ANNOTATOR": "eve"}
    env[variable] = b"e\xffve" if variable == "CURATOR_ANNOTATOR" else b"x\xff.db"
    args = ["vote", "gt-001", "perf"]
    if variable == "CURATOR_ANNOTATOR":
        args = ["--db", str(voted), *args]
    done = curator(*args, env={k: os.fsdecode(v) for k, v in env.items()})
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        f"error: environment variable {variable!r} is not UTF-8 text: {env[variable]!r}"
    ]
    assert counts(voted) == before


def test_every_bad_line_of_an_items_file_is_listed_and_nothing_is_stored(voted: Path) -> None:
    before = counts(voted)
    items = voted.parent / "bad.jsonl"
    items.write_bytes(
        b"\n".join(
            [
                b'{"id": "ok-1", "message": "fine"}',
                b'{"id": "nul", "message": "a\\u0000b"}',  # line 2
                b'{"id": "sur", "message": "\\ud800"}',  # line 3
                b'{"id": "ok-2", "message": "fine"}',
                b"[" * 100_000,  # line 5
                b'{"id": "bytes", "message": "\xff"}',  # line 6
                b'["not", "an", "object"]',  # line 7
                b'{"id": "cut", "message": ',  # line 8
            ]
        )
        + b"\n"
    )
    done = curator("--db", str(voted), "import", "items", str(items), "--set", "more")
    assert done.returncode == 1
    errors = done.stderr.decode().splitlines()
    assert all(line.startswith(("error: ", "skipped: ")) for line in errors), errors
    for number in (2, 3, 5, 6, 7, 8):
        assert any(line.startswith(f"error: {items}:{number}: ") for line in errors), (
            number,
            errors,
        )
    assert not any(line.startswith((f"error: {items}:1:", f"error: {items}:4:")) for line in errors)
    assert counts(voted) == before


def test_every_bad_line_of_a_votes_file_is_listed_and_nothing_is_stored(voted: Path) -> None:
    before = counts(voted)
    votes = voted.parent / "bad-votes.jsonl"
    good = {"item": "gt-001", "annotator": "zoe", "label": "perf"}
    votes.write_text(
        "\n".join(
            [
                json.dumps(good),
                json.dumps({**good, "note": "a\x00b"}),  # line 2
                json.dumps({**good, "annotator": "z\ud800"}),  # line 3
                json.dumps({**good, "item": "gt-002"}),
                "[" * 100_000,  # line 5
                "{not json",  # line 6
            ]
        )
        + "\n"
    )
    done = curator("--db", str(voted), "import", "votes", str(votes))
    assert done.returncode == 1
    errors = done.stderr.decode().splitlines()
    for number in (2, 3, 5, 6):
        assert any(line.startswith(f"error: {votes}:{number}: ") for line in errors), (
            number,
            errors,
        )
    assert counts(voted) == before


# -- Releases -------------------------------------------------------------------------


def _predicted_release(root: Path, labeler: str) -> Path:
    """A release of six commits labeled `memory-layout` (a taxonomy slug) by ``labeler``."""
    rows = [
        dataclasses.replace(row, predictions=[PredictionRow(labeler, "memory-layout", 0.9)])
        for row in commit_rows(6)
    ]
    with open_store(root / "source.db") as store:
        bulk_insert_commits(store, rows)
        export_release(
            store, root / "out", ExportOptions("v1", labels="predicted", labeler=labeler)
        )
    return root / "out" / "v1"


def test_teacher_category_labels_are_not_checked_against_the_set_labels(tmp_path: Path) -> None:
    """A release of a `teacher-category:` labeler's predictions (taxonomy slugs, not perf /
    non-perf) imports without --allow-new-labels; the same slug from any other labeler is
    refused, naming FILE:LINE."""
    (tmp_path / "teacher").mkdir()
    teacher = _predicted_release(tmp_path / "teacher", "teacher-category:m")
    db = tmp_path / "imported.db"
    done = curator("--db", str(db), "import", "release", str(teacher))
    assert done.returncode == 0, done.stderr
    with open_store(db) as store:
        stored = raw_sql.query(store, "SELECT DISTINCT labeler, label FROM predictions")
    assert [tuple(r) for r in stored] == [("teacher-category:m", "memory-layout")]

    (tmp_path / "other").mkdir()
    other = _predicted_release(tmp_path / "other", "keyword@1")
    refused = curator("--db", str(tmp_path / "refused.db"), "import", "release", str(other))
    assert refused.returncode != 0
    assert f"{other}/commit.jsonl:1: label 'memory-layout' is not one".encode() in refused.stderr


PRODIGY_BAD = {
    "surrogate": '{"text": "x", "meta": {"id": "gt-001"}, "answer": "accept",'
    ' "_annotator_id": "z\\ud800"}',
    "nul": '{"text": "a\\u0000b", "meta": {"id": "gt-001"}, "answer": "accept"}',
    "nested": "[" * 100_000,
    "not-object": "[1]",
    "cut": '{"text": "x", "answer": ',
}


@pytest.mark.parametrize("bad", sorted(PRODIGY_BAD))
def test_a_hostile_prodigy_line_is_named_and_nothing_is_stored(voted: Path, bad: str) -> None:
    """`import prodigy` (an import path the property tests do not reach)."""
    before = counts(voted)
    tasks = voted.parent / "prodigy.jsonl"
    tasks.write_text(
        '{"text": "fine", "meta": {"id": "p-1"}, "answer": "accept", "_annotator_id": "a"}\n'
        + PRODIGY_BAD[bad]
        + "\n"
    )
    done = curator("--db", str(voted), "import", "prodigy", str(tasks), "--set", "pz")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    errors = done.stderr.decode().splitlines()
    assert errors[0].startswith(f"error: {tasks}:2: "), errors
    assert counts(voted) == before


LABEL_STUDIO_TASK = {
    "id": 1,
    "data": {"id": "ls-1", "text": "fine"},
    "annotations": [
        {"completed_by": 1, "result": [{"type": "choices", "value": {"choices": ["perf"]}}]}
    ],
}


@pytest.mark.parametrize(
    "text",
    [
        '[{"id": 1, "data": {"text": "z\\ud800"}}]',
        "[" * 100_000,
        '[{"id": 1, "data": {"text": "x"',
        '{"not": "a list"}',
    ],
    ids=["surrogate", "nested", "cut", "not-a-list"],
)
def test_a_hostile_label_studio_export_is_named_and_nothing_is_stored(
    voted: Path, text: str
) -> None:
    before = counts(voted)
    export = voted.parent / "ls.json"
    export.write_text(text)
    done = curator("--db", str(voted), "import", "label-studio", str(export), "--set", "lz")
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    errors = done.stderr.decode().splitlines()
    assert errors[0].startswith(f"error: {export}"), errors
    assert all(line.startswith("error: ") for line in errors), errors
    assert counts(voted) == before


def test_a_nul_in_a_label_studio_task_is_refused(voted: Path) -> None:
    before = counts(voted)
    task = json.loads(json.dumps(LABEL_STUDIO_TASK))
    task["data"]["text"] = "a\x00b"
    export = voted.parent / "ls.json"
    export.write_text(json.dumps([task]))
    done = curator("--db", str(voted), "import", "label-studio", str(export), "--set", "lz")
    assert done.returncode == 1
    assert "NUL character" in done.stderr.decode()
    assert counts(voted) == before


# -- Kernels in a sandbox -------------------------------------------------------------


def test_the_kernel_worker_has_no_new_privileges_no_core_dumps_and_a_file_size_cap() -> None:
    """Read from outside, in /proc, of the real worker child after it confined itself."""
    from engines.kernels.checker import KernelWorker
    from engines.kernels.sandbox import FILE_SIZE_LIMIT

    with KernelWorker() as worker:
        status = worker.sandbox()
        assert worker.proc is not None
        proc = Path(f"/proc/{worker.proc.pid}")
        fields = dict(
            line.split(":", 1) for line in (proc / "status").read_text().splitlines() if ":" in line
        )
        limits = (proc / "limits").read_text().splitlines()
    assert {"no core dumps", "file size cap", "no new privileges"} <= set(status["applied"])
    assert fields["NoNewPrivs"].strip() == "1"
    core = next(line for line in limits if line.startswith("Max core file size"))
    size = next(line for line in limits if line.startswith("Max file size"))
    assert core.split()[4:6] == ["0", "0"]
    assert size.split()[3:5] == [str(FILE_SIZE_LIMIT)] * 2
    assert FILE_SIZE_LIMIT == 512 * 1024 * 1024
