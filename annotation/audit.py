"""Precision audits of mined corpora: Cochran sample sizes, stratified draws from a
labeler's positives, and precision with a Wilson score interval.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from dataclasses import dataclass
from statistics import NormalDist

from annotation.adjudication import decisions_for_set
from annotation.labels import DEFAULT_LABELS, POSITIVE_LABEL
from annotation.sampling import (
    SamplingError,
    group_strata,
    labelers_for,
    sample_strata,
    strata_fields,
    stratum_of,
)
from annotation.sets import (
    SetError,
    grouped_pool,
    refuse_unpredicted_strata,
    require_set,
    resolve_latest,
    resolve_strata,
    stratum_candidates,
)
from store import Store
from store.sets import NewSet, SetRow, create_set, get_set


def z_score(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def cochran_size(
    population: int | None, confidence: float = 0.95, margin: float = 0.05, p: float = 0.5
) -> int:
    """Cochran's sample size n0 = z^2 p (1 - p) / e^2, with the finite-population correction
    n = n0 / (1 + (n0 - 1) / N) when the population is known; rounded to the nearest whole
    item as the papers report it (384 for 95% +/- 5% on a large population)."""
    if not 0.0 < margin < 1.0:
        raise ValueError(f"margin must be between 0 and 1, not {margin}")
    z = z_score(confidence)
    n0 = z * z * p * (1.0 - p) / (margin * margin)
    if population is not None:
        if population <= 0:
            return 0
        n0 = n0 / (1.0 + (n0 - 1.0) / population)
        return min(population, max(1, round(n0)))
    return max(1, round(n0))


def cochran_margin(size: int, population: int, confidence: float = 0.95, p: float = 0.5) -> float:
    """The margin a sample of ``size`` gives on a population of ``population`` (Cochran's
    size solved for the margin, with the finite-population correction): what ``--size``
    buys instead of the margin asked for. 0 when the sample is the whole population."""
    if size <= 0:
        raise ValueError(f"a sample has at least one item, not {size}")
    if population <= 1 or size >= population:
        return 0.0
    z = z_score(confidence)
    return z * math.sqrt(p * (1.0 - p) / size * (population - size) / (population - 1))


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    z = z_score(confidence)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


resolve_labeler = resolve_latest


@dataclass(frozen=True)
class AuditDraw:
    set_row: SetRow
    population: int
    size: int
    allocation: dict[str, int]


def draw_audit(
    store: Store,
    name: str,
    labeler: str,
    kind: str = "commit",
    label: str | None = None,
    confidence: float = 0.95,
    margin: float = 0.05,
    stratify: list[str] | None = None,
    seed: int = 0,
    size: int | None = None,
    votes_per_item: int = 1,
    from_set: str | None = None,
    unlabeled: bool = False,
) -> AuditDraw:
    """Create an audit set: a stratified sample of the items the labeler (latest
    prediction per item) gave ``label`` (its positive label by default), drawn from the
    set ``from_set`` only, and with ``unlabeled`` from the items no one has voted on (the
    mined ones, not a labeled set the labeler may have learned from). The pool is read
    grouped by SQLite (:func:`_audited_groups`): the same seed draws the same members in
    the same order as a draw over one object per item did."""
    if get_set(store, name) is not None:
        raise SetError(f"a set named {name!r} already exists")
    within = require_set(store, from_set) if from_set else None
    if within is not None and within.kind != kind:
        raise SetError(f"set {within.name!r} holds {within.kind} items, not {kind}")
    labeler = resolve_labeler(store, labeler)
    label = label or POSITIVE_LABEL[kind]
    fields = strata_fields(stratify or [])
    # the strata's labelers (keyword, pred:X) are read too, else every item is in "none";
    # the versions read are recorded, so the report files items in the same strata
    pinned = resolve_strata(store, labelers_for(fields))
    groups = _audited_groups(store, kind, labeler, fields, pinned, within, unlabeled)
    # the items the labeler gave ``label``, grouped by their strata's values
    items = [(values, ids) for values, ids in groups if values[-1] == label]
    population = sum(len(ids) for _, ids in items)
    where = f" in set {from_set!r}" if from_set else ""
    if not items:
        if not unlabeled and all(values[-1] is None for values, _ in groups):
            raise SamplingError(
                f"{labeler} has labeled no {kind} item{where} (`curator predict --labeler"
                f" {labeler}` stores its labels); nothing to audit"
            )
        scope = where + (" that no one has voted on" if unlabeled else "")
        raise SamplingError(
            f"no {kind} item{scope} is labeled {label!r} by {labeler}; nothing to audit"
        )
    refuse_unpredicted_strata(items, fields)
    n = size if size is not None else cochran_size(population, confidence, margin)
    if n > population:
        scope = where + (" that no one has voted on" if unlabeled else "")
        raise SamplingError(
            f"asked for {n} items but {labeler} labeled {label!r} only {population} {kind}"
            f" item{'' if population == 1 else 's'}{scope}: give --size {population} or less"
        )
    chosen, allocation = sample_strata(group_strata(items, fields), n, random.Random(seed))
    params = {
        "audit": {
            "labeler": labeler,
            "label": label,
            "population": population,
            "confidence": confidence,
            # the margin the sample gives: the one asked for, or what --size buys
            "margin": margin if size is None else cochran_margin(n, population, confidence),
            "stratify": fields,
            "strata_labelers": pinned,
            "from_set": from_set,
            "unlabeled": unlabeled,
            "seed": seed,
            "size": n,
            "size_from": "given" if size is not None else "cochran",
        },
        "allocation": allocation,
    }
    row = create_set(
        store,
        NewSet(
            name=name,
            kind=kind,
            labels=[label, *[x for x in DEFAULT_LABELS[kind] if x != label]],
            params=params,
            blind=True,
            purpose="audit",
            votes_per_item=votes_per_item,
            description=f"precision audit of {labeler} {label!r}",
        ),
        chosen,
    )
    return AuditDraw(row, population, n, allocation)


def _audited_groups(
    store: Store,
    kind: str,
    labeler: str,
    fields: list[str],
    pinned: dict[str, str],
    within: SetRow | None,
    unvoted_only: bool,
) -> list[tuple[tuple[object, ...], list[int]]]:
    """The pool's item ids grouped by SQLite by their strata's values, then the audited
    labeler's latest label (None where it has none), with no object per item. The
    labels read are those :func:`stratum_candidates` files under each name asked for
    (``pinned`` versions)."""
    return grouped_pool(
        store,
        kind,
        [*fields, f"pred:{labeler}"],
        [labeler, *pinned],
        pinned,
        within_set=within.id if within else None,
        unvoted_only=unvoted_only,
    )


@dataclass(frozen=True)
class Precision:
    judged: int
    correct: int
    low: float
    high: float

    @property
    def value(self) -> float | None:
        return self.correct / self.judged if self.judged else None


@dataclass(frozen=True)
class AuditReport:
    name: str
    labeler: str
    label: str
    population: int
    size: int
    confidence: float
    overall: Precision
    pending: int
    conflicts: int
    strata: dict[str, Precision]


def audit_report(store: Store, name: str, rule: str = "majority") -> AuditReport:
    """Precision of the audited labeler so far, overall and per stratum."""
    set_row = require_set(store, name)
    audit = set_row.params.get("audit")
    if set_row.purpose != "audit" or not audit:
        raise SetError(f"set {name!r} is not an audit (draw one with `curator audit draw`)")
    decisions = decisions_for_set(store, set_row, rule)
    confidence = float(audit["confidence"])
    fields = audit.get("stratify") or []
    key = stratum_of(fields)
    # audits drawn before the versions were recorded read the strata's labelers as now
    pinned = audit.get("strata_labelers") or {}
    found = stratum_candidates(store, set_row.kind, labelers_for(fields), set_row.id, pinned=pinned)
    members = {c.item_id: key(c) for c in found}
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for d in decisions:
        if d.settled and d.label is not None:
            t = tallies[members.get(d.item_id, "all")]
            t[0] += 1
            t[1] += d.label == audit["label"]
    judged = sum(t[0] for t in tallies.values())
    correct = sum(t[1] for t in tallies.values())
    return AuditReport(
        name=name,
        labeler=audit["labeler"],
        label=audit["label"],
        population=int(audit["population"]),
        size=len(decisions),
        confidence=confidence,
        overall=Precision(judged, correct, *wilson_interval(correct, judged, confidence)),
        pending=sum(1 for d in decisions if d.status == "pending"),
        conflicts=sum(1 for d in decisions if d.status == "conflict"),
        strata={
            s: Precision(t[0], t[1], *wilson_interval(t[1], t[0], confidence))
            for s, t in sorted(tallies.items())
        },
    )
