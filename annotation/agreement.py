"""Inter-rater agreement: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha.

Input everywhere is ``ratings``: item -> {rater: label}. Raters who skipped an item are
simply absent from it (missing data), which Krippendorff's alpha handles natively; Cohen's
kappa for a pair uses the items both raters labeled; Fleiss' kappa uses the items with two
or more ratings, with the per-item rater count allowed to vary (with a constant count it
is exactly Fleiss' 1971 statistic).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

Ratings = Mapping[Hashable, Mapping[str, str]]

_LANDIS_KOCH = (
    (0.0, "poor"),
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.0, "almost perfect"),
)


def landis_koch(value: float | None) -> str:
    """Landis and Koch's (1977) reading of a kappa-like figure."""
    if value is None or math.isnan(value):
        return "undefined"
    for upper, name in _LANDIS_KOCH:
        if value <= upper + 1e-12:
            return name
    return "almost perfect"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class PairAgreement:
    rater_a: str
    rater_b: str
    items: int
    observed: float | None
    kappa: float | None

    @property
    def reading(self) -> str:
        return landis_koch(self.kappa)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> tuple[float | None, float | None]:
    """(kappa, observed agreement) for two raters' labels on the same items.

    Kappa is undefined (None) when chance agreement is 1, e.g. both raters always used
    the same single label."""
    n = len(pairs)
    if n == 0:
        return None, None
    observed = sum(a == b for a, b in pairs) / n
    left = Counter(a for a, _ in pairs)
    right = Counter(b for _, b in pairs)
    expected = sum(left[label] * right[label] for label in left) / (n * n)
    if expected >= 1.0:
        return None, observed
    return (observed - expected) / (1.0 - expected), observed


def pairwise_cohen(ratings: Ratings) -> list[PairAgreement]:
    """Cohen's kappa for every pair of raters, on the items both of them labeled."""
    raters = sorted({r for votes in ratings.values() for r in votes})
    result = []
    for a, b in combinations(raters, 2):
        pairs = [(v[a], v[b]) for v in ratings.values() if a in v and b in v]
        kappa, observed = cohen_kappa(pairs)
        result.append(PairAgreement(a, b, len(pairs), observed, kappa))
    return result


@dataclass(frozen=True)
class FleissResult:
    kappa: float | None
    observed: float | None
    expected: float | None
    items: int
    per_label: dict[str, float | None] = field(default_factory=dict)


def fleiss_kappa(counts: Sequence[Mapping[str, int]]) -> FleissResult:
    """Fleiss' kappa from per-item label counts (items with fewer than 2 ratings ignored).

    ``per_label`` holds the category-specific kappas of Fleiss (1971)."""
    rows = [c for c in counts if sum(c.values()) >= 2]
    if not rows:
        return FleissResult(None, None, None, 0)
    labels = sorted({label for c in rows for label in c})
    totals = Counter[str]()
    observed_sum = 0.0
    for c in rows:
        n_i = sum(c.values())
        observed_sum += (sum(v * v for v in c.values()) - n_i) / (n_i * (n_i - 1))
        totals.update(c)
    grand = sum(totals.values())
    shares = {label: totals[label] / grand for label in labels}
    observed = observed_sum / len(rows)
    expected = sum(p * p for p in shares.values())
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    per_label: dict[str, float | None] = {}
    for label in labels:
        p = shares[label]
        if p <= 0.0 or p >= 1.0:
            per_label[label] = None
            continue
        disagreement = sum(
            c.get(label, 0)
            * (sum(c.values()) - c.get(label, 0))
            / (sum(c.values()) * (sum(c.values()) - 1))
            for c in rows
        )
        per_label[label] = 1.0 - disagreement / (len(rows) * p * (1.0 - p))
    return FleissResult(kappa, observed, expected, len(rows), per_label)


def krippendorff_alpha(ratings: Ratings, labels: Sequence[str] | None = None) -> float | None:
    """Nominal Krippendorff's alpha through the ``krippendorff`` package; None when there is
    nothing to compare (no item with two ratings, or a single label among those items)."""
    raters = sorted({r for votes in ratings.values() for r in votes})
    domain = (
        list(labels)
        if labels
        else sorted({v for votes in ratings.values() for v in votes.values()})
    )
    for votes in ratings.values():
        for v in votes.values():
            if v not in domain:
                domain.append(v)
    # alpha reads only the items rated at least twice: one label among them is 0/0
    pairable = [votes for votes in ratings.values() if len(votes) >= 2]
    if len(raters) < 2 or len({v for votes in pairable for v in votes.values()}) < 2:
        return None
    # Imported here: numpy and krippendorff stay out of the CLI's start-up (the app and
    # `curator --help` import this module for Landis-Koch readings).
    import krippendorff
    import numpy as np

    code = {label: i for i, label in enumerate(domain)}
    data = np.full((len(raters), len(ratings)), np.nan)
    for col, votes in enumerate(ratings.values()):
        for row, rater in enumerate(raters):
            if rater in votes:
                data[row, col] = code[votes[rater]]
    value = krippendorff.alpha(
        reliability_data=data, level_of_measurement="nominal", value_domain=list(code.values())
    )
    return _finite(float(value))


def specific_agreement(counts: Sequence[Mapping[str, int]]) -> dict[str, float | None]:
    """Proportion of specific agreement per label: of the pairings in which one rater chose
    the label, the share in which the other did too (positive agreement for 'perf')."""
    labels = sorted({label for c in counts for label in c})
    result: dict[str, float | None] = {}
    for label in labels:
        agree = 0
        possible = 0
        for c in counts:
            n_i = sum(c.values())
            if n_i < 2:
                continue
            k = c.get(label, 0)
            agree += k * (k - 1)
            possible += k * (n_i - 1)
        result[label] = agree / possible if possible else None
    return result


@dataclass(frozen=True)
class AgreementReport:
    items: int
    items_coded: int
    items_multi_coded: int
    raters: list[str]
    votes: int
    observed_agreement: float | None
    fleiss: FleissResult
    krippendorff_alpha: float | None
    pairs: list[PairAgreement]
    label_counts: dict[str, int]
    specific_agreement: dict[str, float | None]
    category_alpha: float | None

    def as_json(self) -> dict[str, object]:
        return {
            "items": self.items,
            "items_coded": self.items_coded,
            "items_coded_by_two_or_more": self.items_multi_coded,
            "raters": self.raters,
            "votes": self.votes,
            "observed_agreement": self.observed_agreement,
            "fleiss_kappa": self.fleiss.kappa,
            "fleiss_kappa_items": self.fleiss.items,
            "fleiss_kappa_reading": landis_koch(self.fleiss.kappa),
            "krippendorff_alpha": self.krippendorff_alpha,
            "krippendorff_alpha_reading": landis_koch(self.krippendorff_alpha),
            "cohen_kappa": [
                {
                    "rater_a": p.rater_a,
                    "rater_b": p.rater_b,
                    "items": p.items,
                    "observed_agreement": p.observed,
                    "cohen_kappa": p.kappa,
                    "reading": p.reading,
                }
                for p in self.pairs
            ],
            "per_label": {
                label: {
                    "votes": self.label_counts.get(label, 0),
                    "fleiss_kappa": self.fleiss.per_label.get(label),
                    "specific_agreement": self.specific_agreement.get(label),
                }
                for label in sorted(set(self.label_counts) | set(self.fleiss.per_label))
            },
            "category_krippendorff_alpha": self.category_alpha,
        }


def agreement_report(
    ratings: Ratings,
    items_in_set: int,
    labels: Sequence[str] | None = None,
    categories: Ratings | None = None,
) -> AgreementReport:
    """Every agreement figure for one set's (non-skip) ratings."""
    counts = [Counter(votes.values()) for votes in ratings.values()]
    fleiss = fleiss_kappa(counts)
    label_counts = Counter(label for votes in ratings.values() for label in votes.values())
    return AgreementReport(
        items=items_in_set,
        items_coded=sum(1 for votes in ratings.values() if votes),
        items_multi_coded=sum(1 for votes in ratings.values() if len(votes) >= 2),
        raters=sorted({r for votes in ratings.values() for r in votes}),
        votes=sum(len(votes) for votes in ratings.values()),
        observed_agreement=fleiss.observed,
        fleiss=fleiss,
        krippendorff_alpha=krippendorff_alpha(ratings, labels),
        pairs=pairwise_cohen(ratings),
        label_counts=dict(label_counts),
        specific_agreement=specific_agreement(counts),
        category_alpha=krippendorff_alpha(categories) if categories else None,
    )
