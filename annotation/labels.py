"""Label sets per kind, the always-allowed ``skip``, the performance-bug taxonomy, and
what an annotator's name may hold.

The two-level taxonomy follows the categories PerfCurator used to classify performance
fixes (its Table 6); categories are stored as ``top/sub`` slugs, e.g.
``memory-inefficiency/memory-leak``, and a top-level slug alone is accepted too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from store.names import unprintable_char

SKIP = "skip"


def annotator_problem(name: str) -> str | None:
    """Why ``name`` (already stripped) cannot name an annotator, or None: it is blank, or
    holds a character that would hide or garble it in every report. Other unusual but
    printable names are allowed. Stdlib only: the settings check the configured name."""
    if not name.strip():
        return "an annotator name is required"
    found = unprintable_char(name)
    if found is not None:
        return (
            f"annotator name {name!a} holds the control or invisible character {found}:"
            " give a name of printable characters"
        )
    return None


DEFAULT_LABELS: dict[str, list[str]] = {
    "commit": ["perf", "non-perf"],
    "kernel": ["keep", "reject"],
    "ir": ["keep", "reject"],
}

POSITIVE_LABEL: dict[str, str] = {"commit": "perf", "kernel": "keep", "ir": "keep"}

TAXONOMY: dict[str, list[str]] = {
    "API Misuse": ["Incorrect API Usage", "Deprecated API", "Redundant API Calls"],
    "Memory Inefficiency": ["Memory Leak", "Unnecessary Memory Allocation"],
    "Poor Concurrency Control": [
        "Thread Contention",
        "Unnecessary Locks",
        "Unnecessary Thread Synchronization",
    ],
    "Inefficient I/O": ["Inefficient Disk I/O", "Inefficient Caching", "Unnecessary Logging"],
    "Network Bottlenecks": ["Inefficient Data Transfer", "Excessive Network Calls"],
    "Inefficient Algorithm/Data-structure": [
        "Suboptimal Data Structures",
        "Suboptimal Algorithm",
        "Expensive Operation",
        "Unnecessary Computations",
        "Inefficient Loops",
    ],
    "Parallelization": ["Missing Parallelism", "Inefficient Parallelism"],
    "Micro-architectural": ["Data Locality", "Missed Compiler Optimization"],
    "Other": [],
}


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def taxonomy_slugs() -> list[str]:
    """Every valid category: each top level, then each ``top/sub``; every top level also
    has a ``misc`` sub-category, as in the paper's table."""
    found: list[str] = []
    for top, subs in TAXONOMY.items():
        found.append(slug(top))
        found.extend(f"{slug(top)}/{slug(sub)}" for sub in [*subs, "misc"])
    return found


class LabelError(ValueError):
    """A label or category outside what the set allows."""


def parse_labels(text: str | None, kind: str) -> list[str]:
    """``perf,non-perf`` -> a clean list; the kind's defaults when not given."""
    if not text:
        return list(DEFAULT_LABELS[kind])
    parts = [unicodedata.normalize("NFC", part.strip()) for part in text.split(",")]
    labels = [part for part in parts if part and part != SKIP]
    if len(labels) < 2:
        raise LabelError("a set needs at least two labels (skip is always allowed on top)")
    if len(set(labels)) != len(labels):
        raise LabelError(f"labels repeat: {text}")
    seen: dict[str, str] = {SKIP: SKIP}
    for label in labels:
        other = seen.setdefault(label.casefold(), label)
        if other != label:
            # tools that match labels without case (Prodigy, Label Studio, people typing)
            # would turn one into the other
            raise LabelError(f"labels {other!r} and {label!r} differ only in case: keep one")
    return labels


def check_label(label: str, allowed: Sequence[str]) -> str:
    """The label as the set spells it; the same text in another Unicode normal form (an
    accent typed as two code points) is the same label."""
    if label == SKIP or label in allowed:
        return label
    composed = unicodedata.normalize("NFC", label)
    for known in [*allowed, SKIP]:
        if unicodedata.normalize("NFC", known) == composed:
            return known
    raise LabelError(f"label {label!r} is not one of {', '.join([*allowed, SKIP])}")


def normalize_category(category: str | None, allowed: Sequence[str]) -> str | None:
    """The stored slug for a category given as a slug or a display name (``a/b`` or
    ``A / B``); ``allowed`` empty means any category is accepted as written."""
    if category is None or not category.strip():
        return None
    parts = [slug(p) for p in category.split("/") if p.strip()]
    candidate = "/".join(parts)
    if not allowed:
        return category.strip()
    if candidate in allowed:
        return candidate
    raise LabelError(
        f"category {category!r} is not in this set's taxonomy (e.g. {allowed[0]!r};"
        " `curator set show NAME` lists them)"
    )
