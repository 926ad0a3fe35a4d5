"""Repository-disjoint splits: every repository's items go to exactly one part.

Repositories are assigned whole, largest first (ties in a seeded random order), each to
the part furthest below its target share of items, so parts come close to the asked
proportions without any repository straddling two of them.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence

from store.sets import Candidate


class SplitError(ValueError):
    """A split specification that cannot be used."""


def parse_parts(text: str) -> list[tuple[str, float]]:
    """``gt-dev:10,gt-eval:10,train:80`` -> [(name, share)], shares summing to 1."""
    parts: list[tuple[str, float]] = []
    for chunk in text.split(","):
        name, _, weight = chunk.strip().rpartition(":")
        try:
            value = float(weight)
        except ValueError:
            raise SplitError(f"{chunk.strip()!r} is not NAME:WEIGHT") from None
        if not name or not 0 < value < math.inf:  # nan and inf are no weights
            raise SplitError(f"{chunk.strip()!r} needs a name and a positive weight")
        parts.append((name, value))
    if len({name for name, _ in parts}) != len(parts):
        raise SplitError(f"part names repeat in {text!r}")
    if len(parts) < 2:
        raise SplitError(f"a split needs at least two parts, got {text!r}")
    return shares(parts)


def shares(parts: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Positive finite weights as shares summing to 1 (weights whose sum overflows a float
    are scaled down first)."""
    total = sum(w for _, w in parts)
    if total == math.inf:
        top = max(w for _, w in parts)
        parts = [(name, w / top) for name, w in parts]
        total = sum(w for _, w in parts)
    return [(name, w / total) for name, w in parts]


def split_by_source(
    candidates: Sequence[Candidate], parts: Sequence[tuple[str, float]], seed: int
) -> dict[str, list[int]]:
    """Item ids per part, with no source (repository) in two parts."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for c in candidates:
        by_source[c.source].append(c.item_id)
    return split_sources(by_source, parts, seed)


def split_sources(
    by_source: Mapping[str, Sequence[int]], parts: Sequence[tuple[str, float]], seed: int
) -> dict[str, list[int]]:
    """:func:`split_by_source` over item ids already grouped by source (as
    ``store.sets.pool_groups`` reads them): only the sources' names and sizes steer the
    assignment, so the parts are the same as from one candidate per item."""
    sources = sorted(by_source)
    random.Random(seed).shuffle(sources)
    sources.sort(key=lambda s: -len(by_source[s]))
    total = sum(len(v) for v in by_source.values())
    assigned: dict[str, list[int]] = {name: [] for name, _ in parts}
    for source in sources:
        name = max(parts, key=lambda p: p[1] * total - len(assigned[p[0]]))[0]
        assigned[name].extend(sorted(by_source[source]))
    return assigned
