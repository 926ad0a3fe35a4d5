"""The student's overlapped inference pipeline: the same labels and scores as the
sequential path, in input order (torch and OpenVINO); a failure in the tokenizer thread
surfaces as one clear error instead of a hung queue; batches sized by tokens."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from engines.labelers.student.infer import (
    StudentLabeler,
)
from engines.labelers.student.openvino import openvino_available
from engines.labelers.student.pipeline import BatchFeeder, Encoder, FeederError, token_batches
from tests.synthetic_commits import WORDS
from tests.tiny_student import save_tiny_student


def _texts(n: int) -> list[str]:
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(list(WORDS), size=int(rng.integers(1, 90)))) for _ in range(n)]
    texts[3] = ""
    texts[5] = "x " * 400  # longer than the window: truncated
    return texts


@pytest.fixture(scope="module")
def student(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged encoder cut to one layer, with a seeded head, saved as a student."""
    return save_tiny_student(tmp_path_factory.mktemp("pipeline") / "student")


def test_token_batches_respect_the_budget_and_cover_every_position_once() -> None:
    lengths = [5, 40, 7, 38, 6, 39, 41, 4, 200]
    batches = token_batches(lengths, 100)
    assert sorted(int(i) for b in batches for i in b) == list(range(len(lengths)))
    assert [int(i) for i in batches[0]] == [8]  # over the budget alone: a batch of its own
    for b in batches[1:]:
        width = -(-max(lengths[i] for i in b) // 8) * 8
        assert len(b) * width <= 100
    short = token_batches([3] * 50, 64)
    assert [len(b) for b in short] == [8] * 6 + [2]  # 8 tokens padded: 8 per batch


def test_the_encoder_gives_the_hugging_face_tokenizer_ids(student: Path) -> None:
    from engines.labelers.student.infer import load_tokenizer, tokenize

    tokenizer = load_tokenizer(student)
    texts = _texts(40)
    assert Encoder(tokenizer, 64)(texts) == tokenize(tokenizer, texts, 64)


def test_overlapped_torch_path_gives_the_sequential_labels_in_order(student: Path) -> None:
    texts = _texts(120)
    # A small budget and first window: many batches and several windows.
    fast = StudentLabeler(student, "fast", batch_size=8, batch_tokens=256)
    slow = StudentLabeler(student, "slow", batch_size=8, overlap=False)
    got, want = fast.predict(texts), slow.predict(texts)
    assert [p.label for p in got] == [p.label for p in want]
    assert np.allclose([p.score for p in got], [p.score for p in want], atol=1e-5)
    # in input order: each text alone gives its own score back
    for i in (5, 119):
        alone = slow.predict([texts[i]])[0]
        assert got[i].label == alone.label
        assert got[i].score == pytest.approx(alone.score, abs=1e-5)


@pytest.mark.skipif(not openvino_available(), reason="the optional OpenVINO runtime")
def test_overlapped_openvino_path_gives_the_sequential_labels_in_order(student: Path) -> None:
    texts = _texts(120)
    fast = StudentLabeler(student, "ov-fast", batch_size=8, batch_tokens=256, openvino=True)
    slow = StudentLabeler(student, "ov-slow", batch_size=8, openvino=True, overlap=False)
    got, want = fast.probabilities(texts), slow.probabilities(texts)
    # OpenVINO may compute in bf16, and batches differ between the paths
    assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 0.02
    assert [p.label for p in fast.predict(texts)] == [p.label for p in slow.predict(texts)]


class _Unreadable:
    def __str__(self) -> str:
        raise UnicodeError("no text here")


def test_a_text_the_tokenizer_thread_cannot_read_is_one_clear_error(student: Path) -> None:
    texts: list[object] = list(_texts(200))
    texts[100] = _Unreadable()
    labeler = StudentLabeler(student, "bad", batch_size=4, batch_tokens=64)
    before = set(threading.enumerate())
    with pytest.raises(FeederError, match=r"text 100: cannot be read as text \(no text here\)"):
        labeler.predict(texts)  # type: ignore[arg-type]
    # the feeder thread is gone, nothing hangs (compared by identity: a thread an earlier
    # test left behind may end meanwhile, which a count would take for a missing one)
    assert set(threading.enumerate()) - before == set()
    assert labeler.predict(["speed up the parser"])[0].label in {"perf", "non-perf"}


def test_a_consumer_that_stops_early_stops_the_tokenizer_thread(student: Path) -> None:
    labeler = StudentLabeler(student, "stop", batch_size=4)
    feeder = BatchFeeder(_texts(2000), labeler.encoder, labeler.pad_id, 32, depth=1)
    with feeder:
        first = next(iter(feeder))
        assert first.tokens <= 32 or len(first.rows) == 1
    assert not feeder.alive  # blocked on a full queue, yet stopped and joined
