"""The student's building blocks: batching, the soft-label loss, the models table's
atomic registration, the labeler registry, and the inference benchmark's quick form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engines.labelers.registry import LabelerError, load_labeler
from engines.labelers.student.data import (
    binary_f1,
    hard_example,
    length_sorted_batches,
    overlapping_sources,
    shuffled_length_batches,
)
from engines.labelers.student.train import soft_cross_entropy
from store import Store
from store.models import get_model, latest_model, list_models, register_model, update_metrics
from tests import raw_sql
from tests.conftest import ROOT


def test_length_sorted_batches_cover_every_index_once_with_similar_lengths() -> None:
    lengths = [5, 40, 7, 38, 6, 39, 41, 4]
    batches = length_sorted_batches(lengths, 3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [lengths[i] for i in batches[0]] == [41, 40, 39]
    assert max(len(b) for b in batches) == 3


def test_training_batches_are_a_seeded_permutation() -> None:
    import random

    lengths = list(range(100))
    one = shuffled_length_batches(lengths, 8, random.Random(3))
    two = shuffled_length_batches(lengths, 8, random.Random(3))
    assert one == two
    assert sorted(i for b in one for i in b) == lengths


def test_soft_loss_is_perfcurators_cross_entropy() -> None:
    import math

    import torch

    logits = torch.tensor([[0.0, 2.0], [1.0, -1.0]])
    target = torch.tensor([0.9, 0.2])
    s = torch.softmax(logits, dim=-1)[:, 1]
    expected = (
        -sum(
            t * math.log(p) + (1 - t) * math.log(1 - p)
            for t, p in zip(target.tolist(), s.tolist(), strict=True)
        )
        / 2
    )
    assert soft_cross_entropy(logits, target).item() == pytest.approx(expected, rel=1e-5)
    # with one-hot targets it is the ordinary cross-entropy
    hard = torch.nn.functional.cross_entropy(logits, torch.tensor([1, 0]))
    assert soft_cross_entropy(logits, torch.tensor([1.0, 0.0])).item() == pytest.approx(hard.item())


def test_overlap_and_f1_helpers() -> None:
    train = [hard_example("a", 1, "r1"), hard_example("b", 0, "r2")]
    held = [hard_example("c", 1, "r2"), hard_example("d", 0, "r3")]
    assert overlapping_sources(train, held) == {"r2"}
    assert binary_f1([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        hard_example("x", 2)


def _staged(root: Path, name: str) -> Path:
    where = root / name
    where.mkdir()
    (where / "weights.bin").write_bytes(b"w")
    return where


def test_register_model_numbers_versions_and_moves_the_directory(store: Store, tmp_path: Path):
    first = register_model(store, "student", "base", {"tau": 85}, {}, _staged(tmp_path, "a"))
    second = register_model(store, "student", "base", {}, {}, _staged(tmp_path, "b"))
    other = register_model(store, "tfidf-lr", "tfidf", {}, {}, _staged(tmp_path, "c"))
    assert (first.name, second.name, other.name) == ("student@1", "student@2", "tfidf-lr@1")
    assert Path(second.path or "") == tmp_path / "models" / "student@2"
    assert (tmp_path / "models" / "student@2" / "weights.bin").read_bytes() == b"w"
    assert not (tmp_path / "b").exists()
    latest = latest_model(store, "student")
    assert latest is not None and latest.name == "student@2"
    assert [m.name for m in list_models(store, "student")] == ["student@1", "student@2"]
    update_metrics(store, "student@1", {"eval": {"f1": 0.9}})
    got = get_model(store, "student@1")
    assert got is not None and got.metrics == {"eval": {"f1": 0.9}} and got.params == {"tau": 85}


def test_a_failed_registration_leaves_the_staged_directory_and_no_row(store: Store, tmp_path: Path):
    staged = _staged(tmp_path, "s")
    raw_sql.connection(store).execute(
        "CREATE TRIGGER no_models BEFORE INSERT ON models BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(Exception, match="refused"):
        register_model(store, "student", "base", {}, {}, staged)
    assert (staged / "weights.bin").is_file()
    assert not (tmp_path / "models" / "student@1").exists()
    assert list_models(store) == []


def test_registry_loads_rule_labelers_and_explains_what_it_cannot(store: Store) -> None:
    assert load_labeler(store, "keyword@1").name == "keyword@1"
    assert load_labeler(store, "keyword@latest").name == "keyword@5"
    with pytest.raises(LabelerError, match="version"):
        load_labeler(store, "keyword@9")
    with pytest.raises(LabelerError, match="no student is registered"):
        load_labeler(store, "student@latest")
    with pytest.raises(LabelerError, match="no model 'tfidf-lr@4'"):
        load_labeler(store, "tfidf-lr@4")
    with pytest.raises(LabelerError, match="curator teach"):
        load_labeler(store, "teacher:gpt-oss:20b")
    with pytest.raises(LabelerError, match="NAME@VERSION"):
        load_labeler(store, "student")
    heuristics = ROOT / "engines" / "labelers" / "heuristics" / "__init__.py"
    if heuristics.is_file():
        assert load_labeler(store, "heuristics@latest").name.startswith("heuristics@")


def test_student_benchmark_quick_form_reports_a_ratio_and_agrees_with_the_pipeline() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests/benchmarks/bench_student.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("| student")]
    assert len(rows) >= 3
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[4].endswith("x") and float(cells[4][:-1]) > 0
        if "int8" not in cells[0] and "bf16" not in cells[0] and cells[5] != "other model":
            agreed, total = cells[5].split("/")
            assert agreed == total  # same model, same truncation: the same labels
    # the pipeline table: ceiling, pipeline and their ratio per backend
    backends = [ln for ln in proc.stdout.splitlines() if ln.startswith(("| torch", "| OpenVINO"))]
    assert any(ln.startswith("| torch fp32, CPU") for ln in backends)
    for row in backends:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert float(cells[3]) > 0 and float(cells[4]) > 0 and cells[5].endswith("%")
        if cells[0].startswith("torch fp32"):
            agreed, total = cells[8].split("/")
            assert agreed == total  # the overlapped path labels as the sequential one
