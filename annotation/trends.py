"""The figures the charts draw, computed from the store: label distributions per source,
agreement per week of votes, an audit's precision as votes arrive, and a labeler's
precision and recall against its decision threshold.

Plain data out; drawing them is :mod:`curator.charts`' job."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from annotation.adjudication import decisions_for_set, final_labels
from annotation.agreement import fleiss_kappa, krippendorff_alpha
from annotation.audit import audit_report, wilson_interval
from annotation.labels import POSITIVE_LABEL, SKIP
from annotation.sets import require_set
from store import Store
from store.sets import SetRow
from store.trends import labelers_in_set, latest_scores_in_set, set_vote_history
from store.votes import ANNOTATOR, live_votes_in_set

FINAL = "final"


def label_distribution(store: Store, set_row: SetRow) -> dict[str, dict[str, int]]:
    """Label counts per source on the set: each annotator (live votes, skips counted as
    ``skip``), each labeler with predictions on its items, and ``final`` (settled)."""
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for vote in live_votes_in_set(store, set_row.id, ANNOTATOR):
        found[vote.annotator][vote.label] += 1
    for labeler in labelers_in_set(store, set_row.id):
        for label, _, _ in latest_scores_in_set(store, set_row.id, labeler).values():
            found[labeler][label] += 1
    finals = Counter(final_labels(store, set_row).values())
    if finals:
        found[FINAL] = finals
    return {source: dict(counts) for source, counts in sorted(found.items())}


@dataclass(frozen=True)
class WeekAgreement:
    """Agreement on the votes as they stood at the end of one week (Monday to Sunday)."""

    week: date
    votes: int
    items: int
    kappa: float | None
    alpha: float | None


def _week(stamp: str) -> date:
    day = datetime.fromisoformat(stamp).date()
    return day - timedelta(days=day.weekday())


def agreement_by_week(store: Store, set_row: SetRow) -> list[WeekAgreement]:
    """Fleiss' kappa and Krippendorff's alpha at the end of each week that had votes,
    replaying the vote history (undos included) up to then; skips left out."""
    history = [v for v in set_vote_history(store, set_row.id) if v.role == ANNOTATOR]
    state: dict[int, dict[str, str]] = defaultdict(dict)
    weeks: list[WeekAgreement] = []
    for i, vote in enumerate(history):
        if vote.label is None or vote.label == SKIP:
            state[vote.item_id].pop(vote.annotator, None)
        else:
            state[vote.item_id][vote.annotator] = vote.label
        week = _week(vote.created_at)
        if i + 1 < len(history) and _week(history[i + 1].created_at) == week:
            continue
        ratings = {item: dict(r) for item, r in state.items() if r}
        counts = [Counter(r.values()) for r in ratings.values()]
        weeks.append(
            WeekAgreement(
                week,
                sum(len(r) for r in ratings.values()),
                len(ratings),
                fleiss_kappa(counts).kappa,
                krippendorff_alpha(ratings, set_row.labels),
            )
        )
    return weeks


@dataclass(frozen=True)
class AuditPoint:
    """The audit after its ``judged``-th settled item: precision and Wilson interval."""

    judged: int
    correct: int
    low: float
    high: float

    @property
    def precision(self) -> float:
        return self.correct / self.judged


def audit_progress(store: Store, name: str) -> list[AuditPoint]:
    """The audited labeler's running precision as items settle, in the order their last
    vote arrived."""
    report = audit_report(store, name)
    set_row = require_set(store, name)
    last_vote: dict[int, str] = {}
    for vote in set_vote_history(store, set_row.id):
        last_vote[vote.item_id] = vote.created_at
    settled = sorted(
        (d for d in decisions_for_set(store, set_row) if d.settled and d.label is not None),
        key=lambda d: (last_vote.get(d.item_id, ""), d.item_id),
    )
    points, correct = [], 0
    for n, d in enumerate(settled, start=1):
        correct += d.label == report.label
        points.append(AuditPoint(n, correct, *wilson_interval(correct, n, report.confidence)))
    return points


@dataclass(frozen=True)
class ThresholdCurve:
    """A labeler's precision and recall of the positive label on a set's settled items
    at each threshold on its P(positive); ``chosen`` is its stored decision threshold."""

    labeler: str
    positive: str
    items: int
    points: list[tuple[float, float | None, float | None]]
    chosen: float | None


def p_positive(label: str, score: float | None, details: dict[str, object], positive: str) -> float:
    """The prediction's probability of the positive label (``details["p_perf"]`` when the
    labeler stored it, else its score read as confidence in its own label)."""
    given = details.get("p_perf")
    if isinstance(given, int | float):
        return float(given)
    s = 1.0 if score is None else min(1.0, max(0.0, float(score)))
    return s if label == positive else 1.0 - s


def threshold_curve(
    store: Store, set_row: SetRow, labeler: str, chosen: float | None = None, steps: int = 20
) -> ThresholdCurve:
    """Precision and recall at ``steps + 1`` thresholds from 0 to 1."""
    positive = POSITIVE_LABEL[set_row.kind]
    truth = final_labels(store, set_row)
    scores = latest_scores_in_set(store, set_row.id, labeler)
    pairs = [
        (p_positive(*scores[i], positive), label == positive)
        for i, label in truth.items()
        if i in scores
    ]
    points = []
    for k in range(steps + 1):
        t = k / steps
        tp = sum(1 for p, y in pairs if p >= t and y)
        fp = sum(1 for p, y in pairs if p >= t and not y)
        fn = sum(1 for p, y in pairs if p < t and y)
        points.append((t, tp / (tp + fp) if tp + fp else None, tp / (tp + fn) if tp + fn else None))
    return ThresholdCurve(labeler, positive, len(pairs), points, chosen)
