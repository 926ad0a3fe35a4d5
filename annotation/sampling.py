"""Seeded stratified and balanced sampling of items, with proportional allocation.

Everything here is pure: candidates (or item ids grouped by the values their strata
read) in, chosen ones out. The same candidates, sizes, strata and seed always give the
same draw, which is what lets a set be re-derived from the parameters stored with it;
only the strata's sizes steer the random choices, so a draw over ids grouped by the
store picks exactly the items a draw over one candidate object per item picks.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any, TypeVar

from store.sets import Candidate

T = TypeVar("T")

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


def _none_if_unpredicted(label: str | None) -> str:
    return "none" if label is None else label


def stratum_source(name: str) -> tuple[str | tuple[str], Callable[[Any], str]]:
    """Where a stratum reads an item's value (``language``, ``source``, ``stars``, or a
    1-tuple of the labeler whose label it reads) and the stratum a value falls in."""
    if name == "language":
        return "language", lambda language: language or "unknown"
    if name in ("repo", "source"):
        return "source", lambda source: source
    if name == "stars":
        return "stars", stars_bucket
    if name == "keyword":
        return (KEYWORD_LABELER,), _none_if_unpredicted
    if name.startswith("pred:"):
        return (name[5:],), _none_if_unpredicted
    raise SamplingError(
        f"unknown stratum {name!r}: use language, repo, stars, keyword or pred:LABELER"
    )


def _field(name: str) -> Callable[[Candidate], str]:
    source, stratum = stratum_source(name)
    if isinstance(source, tuple):
        labeler = source[0]
        return lambda c: stratum(c.predictions.get(labeler))
    return lambda c: stratum(getattr(c, source))


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


def group_strata(
    groups: Iterable[tuple[tuple[Any, ...], list[int]]], fields: Sequence[str]
) -> dict[str, list[int]]:
    """Item ids by stratum, in item order, from groups of ids (each in item order) that
    share their values of the fields' sources (:func:`stratum_source`, in order; values
    past the fields' are not read): each group's stratum is named from its values as
    :func:`stratum_of` names an item's."""
    buckets = [stratum_source(name)[1] for name in fields]
    parts: dict[str, list[list[int]]] = defaultdict(list)
    for values, ids in groups:
        named = zip(buckets, values[: len(buckets)], strict=True)
        parts["|".join(b(v) for b, v in named) if buckets else "all"].append(ids)
    return {k: v[0] if len(v) == 1 else sorted(chain.from_iterable(v)) for k, v in parts.items()}


def _strata(candidates: Sequence[Candidate], fields: Sequence[str]) -> dict[str, list[Candidate]]:
    """Candidates by stratum, in item order."""
    key = stratum_of(fields)
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: c.item_id):
        groups[key(c)].append(c)
    return groups


def sample_strata(
    groups: Mapping[str, Sequence[T]], n: int, rng: random.Random
) -> tuple[list[T], dict[str, int]]:
    """Draw ``n`` of the groups' members (each group in item order) proportionally across
    them; the draw comes shuffled, so strata do not come in blocks, with the allocation
    per stratum. Only the groups' sizes steer ``rng``: the same sizes and seed pick the
    same positions, whatever the members are."""
    quota = allocate({k: len(v) for k, v in groups.items()}, n)
    chosen: list[T] = []
    for k in sorted(groups):
        chosen.extend(rng.sample(groups[k], quota[k]))
    rng.shuffle(chosen)
    return chosen, {k: quota[k] for k in sorted(quota) if quota[k]}


def balanced_strata(
    pos: Mapping[str, Sequence[T]],
    neg: Mapping[str, Sequence[T]],
    n: int,
    labeler: str,
    positive: str,
    rng: random.Random,
    pool_size: int,
) -> tuple[list[T], dict[str, int]]:
    """PerfCurator's balanced draw from its two sides, each grouped by stratum: half from
    the positives, half from the rest."""
    sizes = (sum(len(v) for v in pos.values()), sum(len(v) for v in neg.values()))
    half = n // 2
    if not any(sizes):
        raise SamplingError(
            f"--balanced {labeler}: it predicted none of the {pool_size} items to draw"
            " from (`curator stats` lists the labelers)"
        )
    if sizes[0] < half or sizes[1] < n - half:
        raise SamplingError(
            f"a balanced draw of {n} needs {half} positives and {n - half} negatives from"
            f" {labeler}; the pool has {sizes[0]} and {sizes[1]}"
        )
    a, alloc_a = sample_strata(pos, half, rng)
    b, alloc_b = sample_strata(neg, n - half, rng)
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


def uncertain_strata(
    groups: Mapping[str, Sequence[int]], n: int, unsure: Mapping[int, float], rng: random.Random
) -> tuple[list[int], dict[str, int]]:
    """Active learning over item ids grouped by stratum (each group in item order): the
    ``n`` the labeler is least sure about (``unsure`` maps item id to uncertainty),
    allocated across strata in proportion, most uncertain first. Ties are broken by the
    seeded ``rng``, so a draw repeats exactly."""
    quota = allocate({k: len(v) for k, v in groups.items()}, n)
    chosen: list[int] = []
    for k in sorted(groups):
        members = list(groups[k])
        rng.shuffle(members)
        members.sort(key=lambda i: -unsure[i])  # stable: ties keep the shuffled order
        chosen.extend(members[: quota[k]])
    rng.shuffle(chosen)
    chosen.sort(key=lambda i: -unsure[i])
    return chosen, {k: quota[k] for k in sorted(quota) if quota[k]}


def uncertain_sample(
    candidates: Sequence[Candidate],
    n: int,
    unsure: Mapping[int, float],
    fields: Sequence[str],
    rng: random.Random,
) -> tuple[list[Candidate], dict[str, int]]:
    """:func:`uncertain_strata` over candidates."""
    groups = _strata(candidates, fields)
    by_id = {c.item_id: c for g in groups.values() for c in g}
    ids = {k: [c.item_id for c in g] for k, g in groups.items()}
    chosen, allocation = uncertain_strata(ids, n, unsure, rng)
    return [by_id[i] for i in chosen], allocation
