"""``curator import votes``, ``import prodigy`` and ``import label-studio`` read their file
as a stream, twice (check every line or task, then write in chunks in one transaction),
so their memory does not grow with the file, while a bad line or task late in the file,
a file changed in between, or a Ctrl-C still stores nothing.

The peak memory of the real CLI is measured on a 2 MB and a 20 MB file of each format;
before the change, holding the file took about 40 MB more for the larger one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.importing import FileImportError, import_items_file, import_votes_file
from store import Store, open_store
from store.sets import get_set
from tests import raw_sql
from tests.test_sweep_memory import CURATOR, PEAK

ANNOTATORS = 4


def _diff(n: int) -> str:
    return "".join(f"+line {n} {j} {'x' * 70}\n" for j in range(100))


def _votes(path: Path, count: int, bad: int | None = None) -> Path:
    """``count`` votes of about 1 KB each (a note), on items c0, c1... by four annotators;
    vote number ``bad`` has a label the set does not have."""
    with path.open("w") as fh:
        for n in range(count):
            item, who = divmod(n, ANNOTATORS)
            label = "fast" if n == bad else ("perf" if n % 3 else "non-perf")
            note = f"note {n} " + "y" * 960
            row = {"item": f"c{item}", "annotator": f"ann{who}", "label": label, "note": note}
            fh.write(json.dumps(row) + "\n")
    return path


def _prodigy(path: Path, count: int, bad: int | None = None) -> Path:
    """``count`` answered choice tasks of about 8 KB each (a diff), one item each."""
    with path.open("w") as fh:
        for n in range(count):
            row = {
                "text": f"speed up {n}",
                "meta": {"id": f"p{n}", "repo": "r"},
                "diff": _diff(n),
                "answer": "accept",
                "accept": ["fast" if n == bad else ("perf" if n % 2 else "non-perf")],
                "_annotator_id": "gt-alice",
            }
            fh.write(json.dumps(row) + "\n")
    return path


def _label_studio(path: Path, count: int, bad: int | None = None) -> Path:
    """A Label Studio export (one JSON list, indented) of ``count`` tasks of about 8 KB."""
    with path.open("w") as fh:
        fh.write("[\n")
        for n in range(count):
            choice = "fast" if n == bad else ("perf" if n % 2 else "non-perf")
            task = {
                "id": n + 1,
                "data": {"text": f"speed up {n}", "item": f"l{n}", "diff": _diff(n)},
                "annotations": [
                    {
                        "completed_by": 1,
                        "created_username": "alice, 1",
                        "result": [{"value": {"choices": [choice]}}],
                    }
                ],
            }
            fh.write(("," if n else "") + json.dumps(task, indent=1) + "\n")
        fh.write("]\n")
    return path


def _seed(store: Store, folder: Path, items: int) -> None:
    """Commits c0..c{items-1} in the set ``gt``."""
    source = folder / "items.jsonl"
    source.write_text(
        "".join(json.dumps({"id": f"c{i}", "message": f"m {i}"}) + "\n" for i in range(items))
    )
    import_items_file(store, source, "commit", lambda m, d, path=None: m, "gt")


def _with_items(db: Path, items: int) -> Path:
    """A store holding commits c0..c{items-1} in the set ``gt``."""
    with open_store(db) as store:
        _seed(store, db.parent, items)
    return db


def _peak_kib(db: Path, *args: str) -> int:
    """The peak RSS (KiB) of ``curator ARGS`` run as a user runs it, on the store ``db``."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(CURATOR), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "CURATOR_DB": str(db)},
    )
    code, peak = done.stdout.split()
    assert code == "0", done.stderr
    return int(peak)


FORMATS = {
    "votes": (_votes, 2000, ("import", "votes")),
    "prodigy": (_prodigy, 250, ("import", "prodigy", "--set", "gt")),
    "label-studio": (_label_studio, 250, ("import", "label-studio", "--set", "gt")),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_memory_does_not_grow_with_the_file(tmp_path: Path, fmt: str) -> None:
    write, small_count, command = FORMATS[fmt]
    suffix = ".json" if fmt == "label-studio" else ".jsonl"
    small = write(tmp_path / f"small{suffix}", small_count)  # ~2 MB
    big = write(tmp_path / f"big{suffix}", small_count * 10)  # ~20 MB
    assert big.stat().st_size > 19 * 2**20
    small_db, big_db = tmp_path / "small.db", tmp_path / "big.db"
    if fmt == "votes":
        _with_items(big_db, small_count * 10 // ANNOTATORS)
        shutil.copy(big_db, small_db)
    small_peak = _peak_kib(small_db, *command, str(small))
    big_peak = _peak_kib(big_db, *command, str(big))
    # holding the file took about 40 MB more for the larger one; read as a stream, the
    # ten times bigger file costs a few MB more (a chunk being written, SQLite's cache)
    assert big_peak < small_peak + 16 * 1024, (small_peak, big_peak)
    print(f"{fmt} peak RSS: {small_peak} KiB (2 MB file), {big_peak} KiB (20 MB file)")
    with open_store(big_db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == small_count * 10
        if fmt != "votes":
            assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == small_count * 10


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_bad_vote_late_in_the_file_stores_nothing(tmp_path: Path, fmt: str) -> None:
    write, _, command = FORMATS[fmt]
    count = 6000 if fmt == "votes" else 1200  # more than two chunks before the bad one
    suffix = ".json" if fmt == "label-studio" else ".jsonl"
    path = write(tmp_path / f"late{suffix}", count, bad=count - 3)
    db = tmp_path / "late.db"
    if fmt == "votes":
        _with_items(db, count // ANNOTATORS)
    done = subprocess.run(
        [str(CURATOR), *command, str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "CURATOR_DB": str(db), "COLUMNS": "300"},
    )
    assert done.returncode != 0
    where = {
        "votes": f"{path}:{count - 2}:",
        "prodigy": f"{path}:{count - 2}:",
        "label-studio": f"{path}: task {count - 2} (position {count - 2}) annotation 1:",
    }[fmt]
    assert where in done.stderr and "'fast'" in done.stderr, done.stderr
    assert "nothing imported" in done.stderr
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0
        items = raw_sql.scalar(store, "SELECT COUNT(*) FROM items")
        assert items == (count // ANNOTATORS if fmt == "votes" else 0)
        assert (get_set(store, "gt") is None) == (fmt != "votes")


def test_a_votes_file_changed_between_the_check_and_the_write_stores_nothing(
    tmp_path: Path, store: Store
) -> None:
    _seed(store, tmp_path, 2000)
    path = _votes(tmp_path / "v.jsonl", 8000)
    told: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        told.append((done, total))
        if done == 0:  # checked: now the file is rewritten with a bad last vote
            _votes(path, 8000, bad=7999)

    with pytest.raises(FileImportError) as caught:
        import_votes_file(store, path, progress=progress)
    assert "changed while it was imported" in caught.value.errors[0]
    assert caught.value.errors[1].startswith(f"{path}:8000: label 'fast'")
    assert told[:4] == [(0, 8000), (2000, 8000), (4000, 8000), (6000, 8000)]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0


def test_a_ctrl_c_while_votes_are_written_stores_none(tmp_path: Path, store: Store) -> None:
    _seed(store, tmp_path, 1500)
    path = _votes(tmp_path / "v.jsonl", 6000)

    def progress(done: int, total: int) -> None:
        if done == 2000:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_votes_file(store, path, progress=progress)
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 0
    assert import_votes_file(store, path).votes == 6000  # and the file still goes in whole
