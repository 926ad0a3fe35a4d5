"""The test-only veto of a trained labeler's rule layer: which files count as tests,
benchmarks or examples, that new models record the veto and old ones do not, that the
veto wins over the keyword floor, how the files a commit changes are read (its stored
file, else its diff's headers), and that a student trained and run through the CLI calls
a commit that changes only tests non-perf while the same words on a source file, or on a
source file and its test, stay perf."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from engines.commits.labeling import label_rows
from engines.labelers.path_veto import is_test_path, only_tests
from engines.labelers.registry import load_labeler
from engines.labelers.rule_floor import (
    VETO_FIELD,
    apply_veto,
    describe_floor,
    fields_read,
    floor_block,
    probabilities_by_field,
    vetoes,
)
from store import open_store
from store.items import keys_to_ids
from store.records import CommitRow
from store.sets import latest_predictions
from store.teaching import commit_texts, diff_files
from tests.synthetic_commits import minimal_commit

TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-4", "--max-steps", "2")


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_parser.py",
        "src/test/java/org/acme/ParserTest.java",
        "lib/TestScanner.java",
        "benchmarks/bench_parse.cc",
        "jmh/src/main/java/org/acme/ScanBench.java",
        "examples/verilog.py",
        "src/fuzz/parse_fuzzer.c",
        "scanner_test.cc",
        "bench_scan.c",
    ],
)
def test_tests_benchmarks_and_examples_count(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/parser.c",
        "src/main/java/org/acme/Latest.java",
        "lib/Testing.java",
        "src/contest.py",
        "src/attestation/verify.py",
        "",
    ],
)
def test_source_files_do_not(path: str) -> None:
    assert not is_test_path(path)


def test_new_floors_veto_and_old_records_do_not() -> None:
    new = floor_block("keyword")
    old = {"labeler": "keyword@4", "reads": "message"}
    assert vetoes(new) and not vetoes(old) and not vetoes(None)
    assert fields_read("message", new) == ("message", VETO_FIELD)
    assert fields_read("model_input", new) == ("model_input", VETO_FIELD)
    assert fields_read("message", old) == ("message",)
    assert "only tests, benchmarks or examples are non-perf" in describe_floor(new)
    assert "non-perf" not in describe_floor(old)
    files = ["tests/test_a.py", "src/a.c", ""]
    assert apply_veto([1.0, 1.0, 0.7], files, new) == [0.0, 1.0, 0.7]
    assert apply_veto([1.0, 1.0, 0.7], files, old) == [1.0, 1.0, 0.7]


def test_the_veto_wins_over_the_floor_and_needs_the_file() -> None:
    block = floor_block("keyword")
    texts = {"message": ["Speed up the scanner tests", "Speed up the scanner"]}

    def floored(messages: list[str]) -> list[float]:
        return [1.0 for _ in messages]  # the rules fire on both messages

    assert probabilities_by_field(floored, texts, "message", block) == [1.0, 1.0]
    with_files = {**texts, VETO_FIELD: ["tests/test_scan.py", "src/scan.c"]}
    assert probabilities_by_field(floored, with_files, "message", block) == [0.0, 1.0]


def test_a_student_from_the_cli_vetoes_a_commit_that_changes_a_test(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trained = split("train", "--votes", "tr", *TINY, "--input", "message", "--json")
    assert trained.exit_code == 0, trained.output
    info = json.loads(trained.stdout)
    meta = json.loads((Path(info["path"]) / "curator_student.json").read_text())
    assert meta["rule_floor"]["vetoes"] == "test-only"
    shown = split("models", "show", info["model"]).output
    assert "only tests, benchmarks or examples are non-perf" in " ".join(shown.split())

    items = tmp_path / "veto.jsonl"
    hunk = "@@ -1 +1 @@\n-a\n+b\n"
    rows = [
        ("v-test", {"file": "tests/test_scan.py", "diff": hunk}, "Speed up the scanner tests"),
        ("v-src", {"file": "src/scan.c", "diff": hunk}, "Speed up the scanner"),
        # no file: the veto reads the files the diff names
        ("d-test", {"diff": _git_diff("tests/test_scan.py", "bench/scan_bench.c")}, "Speed up"),
        ("d-both", {"diff": _git_diff("src/scan.c", "tests/test_scan.py")}, "Speed up scans"),
    ]
    items.write_text(
        "".join(
            json.dumps({"id": key, "message": message, **where}) + "\n"
            for key, where, message in rows
        ),
        encoding="utf-8",
    )
    assert split("import", "items", str(items), "--set", "veto").exit_code == 0
    predicted = split("predict", "veto", "--labeler", info["model"])
    assert predicted.exit_code == 0, predicted.output
    with open_store(tmp_path / "cli.db") as store:
        ids = keys_to_ids(store, "commit", [key for key, _, _ in rows])
        assert commit_texts(store, list(ids.values()), VETO_FIELD) == {
            ids["v-test"]: "tests/test_scan.py",
            ids["v-src"]: "src/scan.c",
            ids["d-test"]: "tests/test_scan.py\nbench/scan_bench.c",
            ids["d-both"]: "src/scan.c\ntests/test_scan.py",
        }
        labels = latest_predictions(store, info["model"])
    # the keyword floor calls all four perf; the veto takes back those that change only
    # tests and benchmarks, not the one that changes a source file and its test
    assert {key: labels[ids[key]][0] for key, _, _ in rows} == {
        "v-test": "non-perf",
        "v-src": "perf",
        "d-test": "non-perf",
        "d-both": "perf",
    }

    # mining pre-labels rows before they are stored: the same calls from a row's file list
    student = load_labeler_from(tmp_path / "cli.db", info["model"])
    mined = [
        _mined_row(1, ["tests/test_scan.py"]),
        _mined_row(2, ["src/scan.c", "tests/test_scan.py"]),
    ]
    label_rows(mined, [student])
    assert [row.predictions[0].label for row in mined] == ["non-perf", "perf"]


def load_labeler_from(db: Path, name: str):  # type: ignore[no-untyped-def]
    with open_store(db) as store:
        return load_labeler(store, name)


def _mined_row(i: int, files: list[str]) -> CommitRow:
    row = minimal_commit(i, "Speed up the scanner", file=files[0])
    return replace(row, files=files, diff=_git_diff(*files))


def _git_diff(*paths: str) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\nindex 1..2 100644\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n"
        for p in paths
    )


def test_only_tests_needs_every_changed_file_to_be_a_test() -> None:
    assert only_tests("tests/test_a.py\nbenchmarks/b.py")
    assert not only_tests("tests/test_a.py\nsrc/a.py")
    assert not only_tests("")
    assert not only_tests("\n  \n")


def test_the_files_of_a_diff_are_read_from_its_headers() -> None:
    git = _git_diff("src/a.c", "tests/t.py") + "diff --git a/old.c b/new.c\nrename from old.c\n"
    assert diff_files(git) == ["src/a.c", "tests/t.py", "new.c"]
    # a plain unified diff: --- and +++ pairs; a deleted file keeps its old name, and a
    # removed line that starts with "-- " is not taken for a header
    plain = (
        "--- a/src/a.c\t2020-01-01\n+++ b/src/a.c\t2020-01-01\n@@ -1,2 +1 @@\n--- sql\n-x\n"
        "--- a/gone.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
    )
    assert diff_files(plain) == ["src/a.c", "gone.c"]
    assert diff_files("@@ -1 +1 @@\n-a\n+b\n") == []
