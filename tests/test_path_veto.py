"""The test-only veto of a trained labeler's rule layer: which files count as tests,
benchmarks or examples, that new models record the veto and old ones do not, that the
veto wins over the keyword floor, and that a student trained and run through the CLI
calls a commit that changes a test non-perf while the same words on a source file stay
perf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.labelers.path_veto import is_test_path
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
from store.sets import latest_predictions
from store.teaching import commit_texts

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
    assert "test, benchmark or example are non-perf" in describe_floor(new)
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
    assert "test, benchmark or example are non-perf" in " ".join(shown.split())

    items = tmp_path / "veto.jsonl"
    rows = [
        ("v-test", "tests/test_scan.py", "Speed up the scanner tests"),
        ("v-src", "src/scan.c", "Speed up the scanner"),
    ]
    items.write_text(
        "".join(
            json.dumps(
                {"id": key, "file": path, "message": message, "diff": "@@ -1 +1 @@\n-a\n+b\n"}
            )
            + "\n"
            for key, path, message in rows
        ),
        encoding="utf-8",
    )
    assert split("import", "items", str(items), "--set", "veto").exit_code == 0
    predicted = split("predict", "veto", "--labeler", info["model"])
    assert predicted.exit_code == 0, predicted.output
    with open_store(tmp_path / "cli.db") as store:
        ids = keys_to_ids(store, "commit", ["v-test", "v-src"])
        assert commit_texts(store, list(ids.values()), VETO_FIELD) == {
            ids["v-test"]: "tests/test_scan.py",
            ids["v-src"]: "src/scan.c",
        }
        labels = latest_predictions(store, info["model"])
    # the keyword floor calls both perf; the veto takes back the one that changes a test
    assert labels[ids["v-src"]][0] == "perf"
    assert labels[ids["v-test"]][0] == "non-perf"
