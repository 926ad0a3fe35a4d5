"""The hand-labeled cross-source sets (``sample_data/cross_source*/labels.csv``) and the
script that reads their texts from clones: every row well formed, the counts their
READMEs state, and real git repositories materialized into importable items and votes."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from annotation.agreement import cohen_kappa
from tests.conftest import ROOT
from tests.gitrepo import GitRepo


def _natural(path: Path) -> list[str | int]:
    """Sort key that puts round10 after round9."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]


SETS = sorted(
    (p.parent for p in (ROOT / "sample_data").glob("cross_source*/labels.csv")), key=_natural
)
SECOND = sorted((ROOT / "sample_data").glob("cross_source*/second_opinion.csv"), key=_natural)
SCRIPT = ROOT / "scripts" / "cross_source_texts.py"
COLUMNS = ["repo", "commit", "path", "label", "category", "note"]
CATEGORIES = {
    "algorithmic",
    "data-structure",
    "memory",
    "caching",
    "io",
    "concurrency",
    "compiler/vectorization",
    "library",
    "other",
}
SOURCE = re.compile(r"\.(py|c|h|cc|cpp|cxx|hh|hpp|hxx|java)$")


def test_the_twenty_four_sets_are_there() -> None:
    names = [s.name for s in SETS]
    assert names == [
        "cross_source",
        "cross_source_holdout",
        "cross_source_more",
        "cross_source_round2",
        "cross_source_round3",
        "cross_source_round4",
        "cross_source_round5",
        "cross_source_round6",
        "cross_source_round7",
        "cross_source_round8",
        "cross_source_round9",
        "cross_source_round10",
        "cross_source_round11",
        "cross_source_round12",
        "cross_source_round13",
        "cross_source_round14",
        "cross_source_round15",
        "cross_source_round16",
        "cross_source_round17",
        "cross_source_round18",
        "cross_source_round19",
        "cross_source_round20",
        "cross_source_round21",
        "cross_source_round22",
    ]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS, path
        return list(reader)


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_every_row_is_a_well_formed_reference_with_a_label(folder: Path) -> None:
    rows = _rows(folder / "labels.csv")
    keys = [(r["repo"], r["commit"]) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    for n, row in enumerate(rows, start=2):
        where = f"{folder.name}/labels.csv:{n}"
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", row["repo"]), where
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]), where
        assert SOURCE.search(row["path"]), where
        assert row["label"] in ("perf", "non-perf"), where
        if row["label"] == "perf":
            assert row["category"] in CATEGORIES, where
        else:
            assert row["category"] == "", where
        assert row["note"].strip(), where


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_the_readme_states_the_counts_of_the_file(folder: Path) -> None:
    """The README's bold "all" row: perf, non-perf and total of labels.csv."""
    with (folder / "labels.csv").open(newline="", encoding="utf-8") as handle:
        counts = Counter(row["label"] for row in csv.DictReader(handle))
    readme = (folder / "README.md").read_text(encoding="utf-8")
    found = re.search(
        r"\| \*\*all\*\* \| \*\*([\d,]+)\*\* \| \*\*([\d,]+)\*\* \| \*\*([\d,]+)\*\*", readme
    )
    assert found, f"{folder.name}/README.md has no bold 'all' row"
    stated = [int(x.replace(",", "")) for x in found.groups()]
    assert stated == [counts["perf"], counts["non-perf"], counts["perf"] + counts["non-perf"]]


def test_rounds_4_to_22_carry_a_second_opinion() -> None:
    assert [p.parent.name for p in SECOND] == [
        "cross_source_round4",
        "cross_source_round5",
        "cross_source_round6",
        "cross_source_round7",
        "cross_source_round8",
        "cross_source_round9",
        "cross_source_round10",
        "cross_source_round11",
        "cross_source_round12",
        "cross_source_round13",
        "cross_source_round14",
        "cross_source_round15",
        "cross_source_round16",
        "cross_source_round17",
        "cross_source_round18",
        "cross_source_round19",
        "cross_source_round20",
        "cross_source_round21",
        "cross_source_round22",
    ]


@pytest.mark.parametrize("second", SECOND, ids=lambda p: p.parent.name)
def test_a_second_opinion_relabels_rows_of_its_own_set(second: Path) -> None:
    first = {(r["repo"], r["commit"]): r for r in _rows(second.parent / "labels.csv")}
    rows = _rows(second)
    keys = [(r["repo"], r["commit"]) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys) == 64
    for n, row in enumerate(rows, start=2):
        where = f"{second.parent.name}/second_opinion.csv:{n}"
        assert (row["repo"], row["commit"]) in first, where
        assert row["path"] == first[(row["repo"], row["commit"])]["path"], where
        assert row["label"] in ("perf", "non-perf", "skip"), where
        assert (row["category"] in CATEGORIES) == (row["label"] == "perf"), where
        assert row["note"].strip(), where


@pytest.mark.parametrize("second", SECOND, ids=lambda p: p.parent.name)
def test_the_readme_states_the_agreement_of_the_two_labelers(second: Path) -> None:
    """The README's kappa and count of agreeing rows, computed here from the two files
    with the function ``curator agree`` uses (over the rows the second labeler did not
    skip)."""
    first = {r["commit"]: r["label"] for r in _rows(second.parent / "labels.csv")}
    rows = [r for r in _rows(second) if r["label"] != "skip"]
    pairs = [(first[r["commit"]], r["label"]) for r in rows]
    kappa, observed = cohen_kappa(pairs)
    assert kappa is not None and observed is not None
    agreeing = sum(a == b for a, b in pairs)
    readme = " ".join((second.parent / "README.md").read_text(encoding="utf-8").split())
    assert f"Cohen's kappa **{kappa:.3f}** ({agreeing} of {len(pairs)} rows agree" in readme
    disagreeing = [r["commit"][:10] for r in rows if r["label"] != first[r["commit"]]]
    assert all(f"`{sha}`" in readme for sha in disagreeing)


def _script(labels: Path, clones: Path, out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """Run the materializing script as a user would."""
    command = [sys.executable, str(SCRIPT), "--labels", str(labels), "--clones", str(clones)]
    return subprocess.run(
        [*command, "--out", str(out), *more], capture_output=True, text=True, check=False
    )


def _labels(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_the_script_reads_message_and_diff_of_the_labeled_file_from_a_clone(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "clones" / "acme+parser")
    repo.commit("Initial import", {"src/scan.c": "int scan(void) { return 0; }\n"})
    fast = repo.commit(
        "Scan with a lookup table",
        {
            "src/scan.c": "static const int t[256];\nint scan(void) { return t[0]; }\n",
            "NEWS": "x\n",
        },
    )
    rows = [
        {
            "repo": "acme/parser",
            "commit": fast,
            "path": "src/scan.c",
            "label": "perf",
            "category": "data-structure",
            "note": "A table replaces the computation.",
        },
        {
            "repo": "acme/parser",
            "commit": "0" * 40,
            "path": "src/scan.c",
            "label": "non-perf",
            "category": "",
            "note": "Not in the clone.",
        },
        {
            "repo": "acme/missing",
            "commit": fast,
            "path": "a.py",
            "label": "non-perf",
            "category": "",
            "note": "No clone at all.",
        },
    ]
    labels = _labels(tmp_path / "labels.csv", rows)
    out = tmp_path / "out"
    run = _script(labels, tmp_path / "clones", out)
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2
    assert "labels.csv:3" in warnings[0] and "labels.csv:4" in warnings[1]
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    votes = [json.loads(x) for x in (out / "votes.jsonl").read_text().splitlines()]
    assert [i["id"] for i in items] == [f"acme/parser@{fast}"]
    item = items[0]
    assert item["message"] == "Scan with a lookup table" and item["language"] == "cpp"
    assert "+static const int t[256];" in item["diff"] and "NEWS" not in item["diff"]
    assert votes[0]["item"] == item["id"] and votes[0]["label"] == "perf"


def test_the_script_writes_a_second_labelers_votes_under_the_name_given(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "clones" / "acme+parser")
    repo.commit("Initial import", {"src/scan.c": "int scan(void) { return 0; }\n"})
    sha = repo.commit(
        "Keep the count in a local", {"src/scan.c": "int scan(void) { int n = 0; return n; }\n"}
    )
    row = {
        "repo": "acme/parser",
        "commit": sha,
        "path": "src/scan.c",
        "label": "non-perf",
        "category": "",
        "note": "A rename only.",
    }
    # A row the second labeler skipped is an abstention: no vote and no warning.
    skipped = {**row, "commit": repo.commit("Tidy", {"src/scan.c": "int scan(void);\n"})}
    skipped["label"] = "skip"
    labels = _labels(tmp_path / "second_opinion.csv", [row, skipped])
    run = _script(labels, tmp_path / "clones", tmp_path / "b", "--annotator", "second-opinion")
    assert run.returncode == 0, run.stderr
    assert "skip" not in run.stderr
    votes = [json.loads(x) for x in (tmp_path / "b" / "votes.jsonl").read_text().splitlines()]
    assert [(v["item"], v["annotator"], v["label"]) for v in votes] == [
        (f"acme/parser@{sha}", "second-opinion", "non-perf")
    ]
    blank = _script(labels, tmp_path / "clones", tmp_path / "c", "--annotator", " ")
    assert blank.returncode == 2 and "--annotator needs a name" in blank.stderr
    assert not (tmp_path / "c").exists()
