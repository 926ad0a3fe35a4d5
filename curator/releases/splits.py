"""``--split repo:80/10/10``: parts of a release that keep repositories disjoint.

The assignment is :func:`annotation.splits.split_by_source`, the one ``curator set split``
uses, fed only with how many exported items each repository has: it needs counts, not
the items, so memory grows with the number of repositories, not of records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from annotation.splits import SplitError, shares, split_by_source
from store.sets import Candidate

DEFAULT_NAMES = {2: ("train", "test"), 3: ("train", "dev", "test")}
SCOPES = ("repo",)


@dataclass(frozen=True)
class SplitSpec:
    scope: str
    parts: tuple[tuple[str, float], ...]
    text: str


def parse_split(text: str) -> SplitSpec:
    """``repo:80/10/10`` (train/dev/test), ``repo:90/10`` (train/test), or named parts
    ``repo:train=70/valid=15/test=15``; weights are normalised to shares."""
    scope, sep, rest = text.partition(":")
    if not sep or scope not in SCOPES:
        raise SplitError(f"split {text!r}: expected repo:WEIGHTS, e.g. repo:80/10/10")
    chunks = [c.strip() for c in rest.split("/")]
    named = [c.partition("=") for c in chunks]
    if all(sep for _, sep, _ in named):
        pairs = [(name.strip(), weight.strip()) for name, _, weight in named]
    elif not any(sep for _, sep, _ in named) and len(chunks) in DEFAULT_NAMES:
        pairs = list(zip(DEFAULT_NAMES[len(chunks)], chunks, strict=True))
    else:
        raise SplitError(
            f"split {text!r}: give 2 or 3 weights (train/test or train/dev/test) or name"
            " every part, e.g. repo:train=80/test=20"
        )
    parts: list[tuple[str, float]] = []
    for name, weight in pairs:
        try:
            value = float(weight)
        except ValueError:
            raise SplitError(f"split {text!r}: {weight!r} is not a number") from None
        plain = name.replace("-", "").replace("_", "").isalnum()
        if not name or not 0 < value < math.inf or not plain:
            raise SplitError(f"split {text!r}: part {name!r} needs a plain name and weight > 0")
        parts.append((name, value))
    if len({n for n, _ in parts}) != len(parts):
        raise SplitError(f"split {text!r}: part names repeat")
    return SplitSpec(scope, tuple(shares(parts)), text)


def assign_sources(counts: dict[str, int], spec: SplitSpec, seed: int) -> dict[str, str]:
    """Repository -> part name, each repository whole in one part."""
    # One shared stand-in per repository, repeated as often as it has items: the
    # assignment sees the same sizes as with real items at a pointer per item.
    stand_ins: list[Candidate] = []
    order = sorted(counts)
    for index, source in enumerate(order):
        stand_in = Candidate(index, "", source, None, None, {})
        stand_ins.extend([stand_in] * counts[source])
    assigned = split_by_source(stand_ins, list(spec.parts), seed)
    result: dict[str, str] = {}
    for name, indexes in assigned.items():
        for index in set(indexes):
            result[order[index]] = name
    return result


def part_names(spec: SplitSpec | None) -> list[str | None]:
    return [None] if spec is None else [name for name, _ in spec.parts]


def count_sources(sources: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for source in sources:
        counts[source] = counts.get(source, 0) + 1
    return counts
