"""What the miner says about each commit: mined (a row), filtered, or rejected."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from store.records import CommitRow


@dataclass(frozen=True)
class Mined:
    row: CommitRow
    warnings: tuple[str, ...] = ()

    @property
    def sha(self) -> str:
        return self.row.sha


@dataclass(frozen=True)
class Filtered:
    """Dropped by a filter; routine, counted in the summary by ``reason``."""

    sha: str
    reason: str


@dataclass(frozen=True)
class Rejected:
    """Dropped because the commit itself is unusable; ``message`` is worth a line."""

    sha: str
    reason: str
    message: str


Outcome = Mined | Filtered | Rejected


def file_outcome(
    outcome: Outcome,
    source: str,
    rows: list[CommitRow],
    filtered: Counter[str],
    problem: Callable[[str], None],
) -> None:
    """Put one outcome where a driver keeps it: a mined row in ``rows``, any other in
    ``filtered`` by reason; a rejection, or a mined commit's warning, is a problem line."""
    if isinstance(outcome, Mined):
        rows.append(outcome.row)
        for warning in outcome.warnings:
            problem(f"{source}@{outcome.sha[:12]}: {warning}")
        return
    filtered[outcome.reason] += 1
    if isinstance(outcome, Rejected):
        problem(f"{source}@{outcome.sha[:12]}: {outcome.message}")


def flat(text: str, limit: int = 300) -> str:
    """A git or parser error on one line (git's own messages span several: "fatal:
    detected dubious ownership ..." then the hint), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
