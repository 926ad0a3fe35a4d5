"""Per-annotator quality on a set: accuracy on hidden gold items, seconds per item, and
agreement with the final labels over time (who drifts, and when).

Each annotator's answers are taken in the order they were given and cut into windows
of equal size; the agreement of each window with the final labels (votes on settled
items) and with the gold answers shows a drift as a falling rate. Gold answers never
count as votes, so they appear here and nowhere in the set's agreement.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from annotation.adjudication import annotator_drift, decisions_for_set
from annotation.labels import SKIP
from store import Store
from store.routing import gold_answers, timed_votes
from store.sets import SetRow
from store.votes import ANNOTATOR, live_votes_in_set

WINDOWS = 4
DRIFT_DROP = 0.15  # a fall in agreement rate, first window to a later one, that counts
MIN_WINDOW = 5  # answers a window needs before its rate is compared


@dataclass(frozen=True)
class Window:
    """A stretch of one annotator's answers: when, how many, how many matched."""

    start: str
    end: str
    answers: int
    matching: int

    @property
    def rate(self) -> float | None:
        return self.matching / self.answers if self.answers else None


@dataclass(frozen=True)
class AnnotatorQuality:
    annotator: str
    votes: int
    gold_answered: int
    gold_correct: int
    seconds_median: float | None
    final_items: int
    final_agreeing: int
    final_kappa: float | None
    windows: list[Window]
    drift_from: str | None

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_answered if self.gold_answered else None

    @property
    def final_rate(self) -> float | None:
        return self.final_agreeing / self.final_items if self.final_items else None

    def as_json(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            "votes": self.votes,
            "gold_answered": self.gold_answered,
            "gold_accuracy": self.gold_accuracy,
            "seconds_per_item": self.seconds_median,
            "final_items": self.final_items,
            "final_agreement": self.final_rate,
            "final_kappa": self.final_kappa,
            "windows": [
                {"start": w.start, "end": w.end, "answers": w.answers, "rate": w.rate}
                for w in self.windows
            ],
            "drifting_since": self.drift_from,
        }


def windows_of(events: list[tuple[str, bool]], count: int = WINDOWS) -> list[Window]:
    """(time, matched) events, oldest first, cut into ``count`` windows of equal size
    (fewer when there are fewer events)."""
    if not events:
        return []
    count = max(1, min(count, len(events)))
    size, extra = divmod(len(events), count)
    found, start = [], 0
    for i in range(count):
        part = events[start : start + size + (1 if i < extra else 0)]
        start += len(part)
        found.append(Window(part[0][0], part[-1][0], len(part), sum(m for _, m in part)))
    return found


def drift_start(windows: list[Window]) -> str | None:
    """When a later window's rate falls ``DRIFT_DROP`` below the first: its start."""
    if len(windows) < 2 or windows[0].answers < MIN_WINDOW or windows[0].rate is None:
        return None
    for w in windows[1:]:
        if (
            w.answers >= MIN_WINDOW
            and w.rate is not None
            and windows[0].rate - w.rate >= DRIFT_DROP
        ):
            return w.start
    return None


def annotator_quality(
    store: Store, set_row: SetRow, windows: int = WINDOWS
) -> list[AnnotatorQuality]:
    """One row per annotator with a live vote that counts toward the set, or a gold
    answer on it."""
    decisions = decisions_for_set(store, set_row)
    final = {d.item_id: d.label for d in decisions if d.settled and d.label is not None}
    drift = {d.annotator: d for d in annotator_drift(decisions)}
    live = {(v.annotator, v.item_id) for v in live_votes_in_set(store, set_row.id, ANNOTATOR)}
    # The history keeps votes since replaced by the annotator's vote with another set's
    # label; like the set's agreement, only items still voted on in the set count.
    votes = {
        name: kept
        for name, history in timed_votes(store, set_row.id).items()
        if (kept := [v for v in history if (name, v.item_id) in live])
    }
    # An annotator who answers a gold item again (a slip corrected with another
    # `curator vote`) has one answer on it, the latest, as they have one live vote.
    latest = {(a.annotator, a.item_id): a for a in gold_answers(store, set_row.id)}
    answers = defaultdict(list)
    for a in sorted(latest.values(), key=lambda a: a.created_at):
        answers[a.annotator].append(a)
    rows = []
    for name in sorted(set(votes) | set(answers)):
        mine = votes.get(name, [])
        answered = answers.get(name, [])
        # a skip on a gold item says "cannot tell", as a skip vote does: neither right nor wrong
        gold = [a for a in answered if a.label != SKIP]
        events = [
            (v.created_at, v.label == final[v.item_id])
            for v in mine
            if v.item_id in final and v.label not in (None, SKIP)
        ] + [(a.created_at, a.label == a.expected) for a in gold]
        events.sort(key=lambda e: e[0])  # by time only: votes of one import keep their order
        seconds = [v.seconds for v in mine if v.seconds is not None] + [
            a.seconds for a in answered if a.seconds is not None
        ]
        cut = windows_of(events, windows)
        d = drift.get(name)
        rows.append(
            AnnotatorQuality(
                annotator=name,
                votes=len({v.item_id for v in mine}),
                gold_answered=len(gold),
                gold_correct=sum(a.label == a.expected for a in gold),
                seconds_median=statistics.median(seconds) if seconds else None,
                final_items=d.items if d else 0,
                final_agreeing=d.agreeing if d else 0,
                final_kappa=d.kappa if d else None,
                windows=cut,
                drift_from=drift_start(cut),
            )
        )
    return rows
