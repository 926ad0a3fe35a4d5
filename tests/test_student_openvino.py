"""The student on OpenVINO's CPU runtime: converted once and cached, the same labels as
the torch path, and reachable from `curator predict --openvino`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("openvino", reason="the optional OpenVINO runtime (installed by make demo)")

from engines.labelers.student.data import padded
from engines.labelers.student.infer import (
    META_FILE,
    StudentLabeler,
    default_base,
    load_encoder,
)
from engines.labelers.student.openvino import CACHE_DIR, MODEL_FILE
from tests.conftest import ROOT

TEXTS = [
    "Speed up the parser by caching compiled regular expressions",
    "Fix typo in README",
    "Avoid quadratic string concatenation in the log formatter; 40% faster on big files",
    "Bump version to 2.0.1",
    "Reduce allocations in the hot loop of the matrix multiply",
    "",
    "x " * 400,  # longer than the window: truncated like the torch path
]


@pytest.fixture(scope="module")
def student(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged encoder with a seeded two-class head, saved as a student."""
    import torch

    where = tmp_path_factory.mktemp("ov") / "student"
    torch.manual_seed(0)
    tokenizer, model = load_encoder(default_base())
    model.save_pretrained(str(where))
    tokenizer.save_pretrained(str(where))
    meta = {"format": 1, "base": default_base(), "input_field": "message", "max_length": 64}
    (where / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return where


def test_openvino_gives_the_torch_probabilities_and_caches_the_conversion(student: Path) -> None:
    reference = StudentLabeler(student, "ref", batch_size=3).probabilities(TEXTS)
    fast = StudentLabeler(student, "ov", batch_size=3, openvino=True)
    cached = student / CACHE_DIR / MODEL_FILE
    assert cached.is_file()
    got = fast.probabilities(TEXTS)
    assert len(got) == len(TEXTS)
    # bf16 (where the CPU has it) moves a probability by far less than this
    assert max(abs(a - b) for a, b in zip(got, reference, strict=True)) < 0.02
    assert fast.predict(TEXTS[:3])[0].details["p_perf"] == pytest.approx(got[0], abs=1e-6)
    stamp = cached.stat().st_mtime_ns
    again = StudentLabeler(student, "ov", batch_size=64, openvino=True)
    assert cached.stat().st_mtime_ns == stamp  # the cache was read, not rewritten
    assert again.probabilities(TEXTS[::-1]) == pytest.approx(got[::-1], abs=1e-3)
    assert again.probabilities([]) == []
    assert not [p for p in student.iterdir() if p.name.startswith(".openvino-")]


def test_openvino_excludes_the_other_runtimes(student: Path) -> None:
    with pytest.raises(ValueError, match="choose one"):
        StudentLabeler(student, "x", openvino=True, bf16=True)


def test_padding_rounds_up_to_eight_and_masks_the_rest() -> None:
    feed = padded([[101, 7, 102], [101, 102]], pad_id=0)
    assert feed["input_ids"].shape == (2, 8)
    assert feed["attention_mask"].sum(axis=1).tolist() == [3, 2]
    assert feed["input_ids"][1].tolist() == [101, 102, 0, 0, 0, 0, 0, 0]


def test_predict_openvino_through_the_cli(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sample = ROOT / "sample_data" / "annotation"
    assert cli("import", "items", str(sample / "items.jsonl"), "--set", "gt-sample").exit_code == 0
    assert cli("import", "votes", str(sample / "votes.csv")).exit_code == 0
    trained = cli(
        "train", "--votes", "gt-sample", "--epochs", "1", "--max-length", "32", "--batch", "8"
    )
    assert trained.exit_code == 0, trained.output
    both = cli("predict", "gt-sample", "--labeler", "student@1", "--openvino", "--bf16")
    assert both.exit_code != 0 and "one of" in both.output
    result = cli("predict", "gt-sample", "--labeler", "student@1", "--openvino", "--json")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(tmp_path / "cli.db") as conn:
        rows = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT item_id) FROM predictions WHERE labeler = 'student@1'"
        ).fetchone()
    assert rows[0] == rows[1] == 40
