"""A teaching run: ask the teacher about stored commits and store its answers.

Items that already hold a prediction from this teacher are not asked again, so a run
that was interrupted, or that met failures, is simply started again. An item whose
newest answer came from an older prompt (``prompt_version`` in its details) still
counts as answered, and the summary says how many do; ``redo_older`` asks those again
(the new answer is appended and, being newest, is the one read; the old one stays). Answers are
written in small batches, each in one transaction, from the calling thread only.
Failures are counted by reason and listed (up to a cap) in the summary; they are never
stored as predictions.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from engines.labelers.teacher.client import Failure, Teacher
from engines.labelers.teacher.prompt import PROMPT_VERSION
from engines.reporting import SilentReporter, SourceReporter
from store import Store
from store.predictions import add_predictions, below_version_item_ids, predicted_item_ids
from store.records import PredictionRow
from store.teaching import commit_texts

BATCH_ANSWERS = 20
BATCH_SECONDS = 2.0
FAILURES_KEPT = 200
RAW_KEPT = 2_000
TEXT_CHUNK = 500
CONFIDENT = 85
GIVE_UP_AFTER = 10
"""A run stops when its first this-many answers all failed at the HTTP level (a wrong
endpoint or model name would otherwise fail every item, one at a time)."""
_REPLY_REASONS = frozenset(
    {
        "malformed",
        "refusal",
        "unknown-label",
        "unknown-category",
        "empty",
        "too-large",
        "not-a-commit",
    }
)


@dataclass
class TeachSummary:
    """What one run did; ``source`` and ``failed`` make it a reporter's finished source."""

    source: str
    selected: int = 0
    already: int = 0
    asked: int = 0
    stored: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    confident: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    failed_items: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    failed: str | None = None
    older_kept: int = 0
    """Items whose newest answer came from an older prompt, kept and not asked again."""
    redone: int = 0
    """Items whose newest answer came from an older prompt, asked again."""

    def as_json(self) -> dict[str, object]:
        return {
            "labeler": self.source,
            "selected": self.selected,
            "already_predicted": self.already,
            "prompt_version": PROMPT_VERSION,
            "older_prompt_kept": self.older_kept,
            "older_prompt_asked_again": self.redone,
            "asked": self.asked,
            "stored": self.stored,
            "labels": dict(sorted(self.labels.items())),
            f"confidence_at_least_{CONFIDENT}": self.confident,
            "failures": dict(sorted(self.failures.items())),
            "stopped": self.failed,
            "failed_items": [
                {"item_id": i, "reason": r, "detail": d, "raw": raw}
                for i, r, d, raw in self.failed_items
            ],
        }


def teach(
    store: Store,
    item_ids: Sequence[int],
    teacher: Teacher,
    reporter: SourceReporter | None = None,
    batch_answers: int = BATCH_ANSWERS,
    redo_older: bool = False,
) -> TeachSummary:
    """Ask ``teacher`` about every item of ``item_ids`` it has not answered yet (with
    ``redo_older``, also those whose newest answer came from an older prompt).

    Texts are read from the store a chunk at a time as requests go out, so a run over a
    million items holds only a few thousand texts in memory.
    """
    report = reporter or SilentReporter()
    unique = list(dict.fromkeys(item_ids))
    summary = TeachSummary(teacher.name, selected=len(unique))
    done = predicted_item_ids(store, teacher.name, unique)
    older = below_version_item_ids(store, teacher.name, "prompt_version", PROMPT_VERSION, done)
    if redo_older:
        done -= older
        summary.redone = len(older)
    else:
        summary.older_kept = len(older)
    todo = [i for i in unique if i not in done]
    summary.already = len(unique) - len(todo)
    report.source_started(teacher.name, len(todo), 0)
    asked: list[int] = []  # the item behind each text handed to the teacher, in order

    def texts() -> Iterator[str]:
        for start in range(0, len(todo), TEXT_CHUNK):
            chunk = todo[start : start + TEXT_CHUNK]
            found = commit_texts(store, chunk, teacher.input_field)
            for item_id in chunk:
                if item_id in found:
                    asked.append(item_id)
                    yield found[item_id]
                else:
                    _failed(summary, report, item_id, Failure("not-a-commit", "no commit text", 0))
                    report.advance(teacher.name, 1)

    pending: list[tuple[int, PredictionRow]] = []
    flushed_at = time.monotonic()

    def flush() -> None:
        nonlocal pending, flushed_at
        if pending:
            add_predictions(store, pending)
            summary.stored += len(pending)
        pending, flushed_at = [], time.monotonic()

    endpoint_failures = 0
    answers = teacher.ask_many(texts())
    try:
        for index, result in answers:
            item_id = asked[index]
            summary.asked += 1
            if isinstance(result, Failure):
                _failed(summary, report, item_id, result)
                if result.reason not in _REPLY_REASONS:
                    endpoint_failures += 1
                if endpoint_failures == summary.asked == GIVE_UP_AFTER:
                    summary.failed = (
                        f"the first {GIVE_UP_AFTER} requests all failed ({result.reason}:"
                        f" {result.detail}) at {teacher.config.shown_url}; check --endpoint,"
                        " --api and --model"
                    )
                    break
            else:
                p = teacher.prediction(result)
                pending.append((item_id, PredictionRow(teacher.name, p.label, p.score, p.details)))
                summary.labels[p.label] += 1
                summary.confident += result.answer.confidence >= CONFIDENT
            report.advance(teacher.name, 1)
            if len(pending) >= batch_answers or time.monotonic() - flushed_at > BATCH_SECONDS:
                flush()
    finally:
        answers.close()  # a run stopped early cancels what has not started
        flush()
    report.source_finished(summary)
    return summary


def _failed(summary: TeachSummary, report: SourceReporter, item_id: int, failure: Failure) -> None:
    summary.failures[failure.reason] += 1
    if len(summary.failed_items) < FAILURES_KEPT:
        raw = None if failure.raw is None else failure.raw[:RAW_KEPT]
        summary.failed_items.append((item_id, failure.reason, failure.detail, raw))
    report.problem(f"item #{item_id}: {failure.reason}: {failure.detail}")
