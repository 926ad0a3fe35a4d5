"""Seeded stratified and balanced sampling of items, with proportional allocation.

Everything here is pure: candidates in, chosen candidates out. The same candidates, sizes,
strata and seed always give the same draw, which is what lets a set be re-derived from
the parameters stored with it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from store.sets import Candidate

KEYWORD_LABELER = "keyword@latest"
"""The keyword stratum reads the newest stored version of the keyword rules."""


class SamplingError(ValueError):
    """A draw that cannot be made as asked (unknown stratum, too few items)."""


def stars_bucket(stars: int | None) -> str:
    if stars is None:
        return "unknown"
    for upper, name in ((10, "0-9"), (100, "10-99"), (1000, "100-999"), (10000, "1k-9k")):
        if stars < upper:
            return name
    return "10k+"


def _field(name: str) -> Callable[[Candidate], str]:
    if name == "language":
        return lambda c: c.language or "unknown"
    if name in ("repo", "source"):
        return lambda c: c.source
    if name == "stars":
        return lambda c: stars_bucket(c.stars)
    if name == "keyword":
        return lambda c: c.predictions.get(KEYWORD_LABELER, "none")
    if name.startswith("pred:"):
        labeler = name[5:]
        return lambda c: c.predictions.get(labeler, "none")
    raise SamplingError(
        f"unknown stratum {name!r}: use language, repo, stars, keyword or pred:LABELER"
    )


_ALIASES = {"source": "repo", f"pred:{KEYWORD_LABELER}": "keyword"}


def strata_fields(fields: Sequence[str]) -> list[str]:
    """The strata asked for, each once (``language,language`` would make strata such as
    ``python|python``; ``source`` is ``repo``, ``pred:keyword@latest`` is ``keyword``),
    in the order first given."""
    kept: dict[str, str] = {}
    for name in fields:
        kept.setdefault(_ALIASES.get(name, name), name)
    return list(kept.values())


def labelers_for(fields: Sequence[str]) -> list[str]:
    """The labelers whose predictions the strata need."""
    needed = []
    for name in fields:
        if name == "keyword":
            needed.append(KEYWORD_LABELER)
        elif name.startswith("pred:"):
            if not name[5:].strip():
                raise SamplingError(f"stratum {name!r} names no labeler, e.g. pred:student@latest")
            needed.append(name[5:])
    return needed


def stratum_of(fields: Sequence[str]) -> Callable[[Candidate], str]:
    getters = [_field(name) for name in fields]
    return lambda c: "|".join(g(c) for g in getters) if getters else "all"


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Split ``n`` draws over strata in proportion to their sizes (largest remainder,
    ties broken by stratum name); never more than a stratum holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {k: n * v / total for k, v in sizes.items()}
    quota = {k: int(x) for k, x in exact.items()}
    left = n - sum(quota.values())
    for k in sorted(exact, key=lambda k: (-(exact[k] - quota[k]), k))[:left]:
        quota[k] += 1
    return quota


def _strata(
    candidates: Sequence[Candidate], n: int, fields: Sequence[str]
) -> tuple[dict[str, list[Candidate]], dict[str, int]]:
    """Candidates by stratum (in item order) and how many of ``n`` each stratum gets."""
    key = stratum_of(fields)
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: c.item_id):
        groups[key(c)].append(c)
    return groups, allocate({k: len(v) for k, v in groups.items()}, n)


def stratified_sample(
    candidates: Sequence[Candidate], n: int, fields: Sequence[str], rng: random.Random
) -> tuple[list[Candidate], dict[str, int]]:
    """Draw ``n`` candidates proportionally across strata; returns the draw (shuffled, so
    strata do not come in blocks) and the allocation per stratum."""
    groups, quota = _strata(candidates, n, fields)
    chosen: list[Candidate] = []
    for k in sorted(groups):
        chosen.extend(rng.sample(groups[k], quota[k]))
    rng.shuffle(chosen)
    return chosen, {k: quota[k] for k in sorted(quota) if quota[k]}


def balanced_sample(
    candidates: Sequence[Candidate],
    n: int,
    labeler: str,
    positive: str,
    fields: Sequence[str],
    rng: random.Random,
) -> tuple[list[Candidate], dict[str, int]]:
    """PerfCurator's balanced draw: half from the labeler's positives, half from the rest
    (its negatives and unpredicted items are not mixed: only predicted items count)."""
    pos = [c for c in candidates if c.predictions.get(labeler) == positive]
    neg = [c for c in candidates if labeler in c.predictions and c.predictions[labeler] != positive]
    half = n // 2
    if not pos and not neg:
        raise SamplingError(
            f"--balanced {labeler}: it predicted none of the {len(candidates)} items to draw"
            " from (`curator stats` lists the labelers)"
        )
    if len(pos) < half or len(neg) < n - half:
        raise SamplingError(
            f"a balanced draw of {n} needs {half} positives and {n - half} negatives from"
            f" {labeler}; the pool has {len(pos)} and {len(neg)}"
        )
    a, alloc_a = stratified_sample(pos, half, fields, rng)
    b, alloc_b = stratified_sample(neg, n - half, fields, rng)
    chosen = a + b
    rng.shuffle(chosen)
    allocation = {f"{positive}|{k}": v for k, v in alloc_a.items()}
    allocation.update({f"not-{positive}|{k}": v for k, v in alloc_b.items()})
    return chosen, allocation


def uncertainty(score: float | None, binary: bool) -> float:
    """How unsure a prediction is, 0 (sure) to 1: for a two-class labeler the closeness
    of its score to 0.5, otherwise one minus its confidence; no score counts as sure."""
    if score is None:
        return 0.0
    return 1.0 - 2.0 * abs(score - 0.5) if binary else 1.0 - score


def uncertain_sample(
    candidates: Sequence[Candidate],
    n: int,
    unsure: Mapping[int, float],
    fields: Sequence[str],
    rng: random.Random,
) -> tuple[list[Candidate], dict[str, int]]:
    """Active learning: the ``n`` candidates a labeler is least sure about (``unsure``
    maps item id to uncertainty), allocated across strata in proportion, most uncertain
    first. Ties are broken by the seeded ``rng``, so a draw repeats exactly."""
    groups, quota = _strata(candidates, n, fields)
    chosen: list[Candidate] = []
    for k in sorted(groups):
        members = list(groups[k])
        rng.shuffle(members)
        members.sort(key=lambda c: -unsure[c.item_id])  # stable: ties keep the shuffled order
        chosen.extend(members[: quota[k]])
    rng.shuffle(chosen)
    chosen.sort(key=lambda c: -unsure[c.item_id])
    return chosen, {k: quota[k] for k in sorted(quota) if quota[k]}
