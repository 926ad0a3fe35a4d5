"""What the miner says about each commit: mined (a row), filtered, or rejected."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from engines.commits.gitlog import CommitStat
from engines.commits.hashing import diff_hash, function_md5
from engines.commits.languages import language_of
from engines.commits.options import MineOptions
from engines.commits.representation import model_input
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


UNDATED = "author date unreadable"


def commit_warnings(
    stat: CommitStat, raw: bytes, message_valid: bool, paths_valid: bool = True
) -> tuple[str, ...]:
    """A kept commit's warnings, from its raw commit object: a message or a file path
    that is not valid UTF-8, and an author date git cannot read (stored as no date at
    all, not as git's stand-in, the epoch or the literal ``%aI``; the summary counts
    these commits)."""
    warnings = []
    if not message_valid:
        warnings.append("message is not valid UTF-8; undecodable bytes were replaced")
    if not paths_valid:
        warnings.append("a file path is not valid UTF-8; stored with \\xNN escapes")
    if stat.author_date is None:
        warnings.append(
            f"{UNDATED} ({author_date_text(raw)!r} in the commit object); stored without a date"
        )
    return tuple(warnings)


def author_date_text(raw: bytes) -> str:
    """The date part of a raw commit object's ``author`` line (what follows the email)."""
    head = raw.partition(b"\n\n")[0]
    for line in head.split(b"\n"):
        if line.startswith(b"author "):
            date = line.rpartition(b">")[2].strip()
            return flat(date.decode("utf-8", "replace"), 60)
    return ""


def flat(text: str, limit: int = 300) -> str:
    """A git or parser error on one line (git's own messages span several: "fatal:
    detected dubious ownership ..." then the hint), cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Change:
    """What a kept commit changed: its files, the changed functions' names and code."""

    files: list[str]
    functions: list[str]
    before: str
    after: str
    added: int
    deleted: int


def mined_row(
    source: str, rev: str, stat: CommitStat, message: str, diff: str, change: Change,
    options: MineOptions,
) -> CommitRow:  # fmt: skip
    """The stored row of a kept commit, whichever path found its functions."""
    return CommitRow(
        source=source,
        sha=stat.sha,
        branch=rev,
        author_date=stat.author_date,
        message=message,
        diff=diff,
        file=change.files[0],
        files=change.files,
        language=language_of(change.files[0]) or "unknown",
        functions=change.functions,
        code_before=change.before,
        code_after=change.after,
        added=change.added,
        deleted=change.deleted,
        model_input=model_input(message, diff, options.token_budget),
        function_md5=function_md5(change.before, change.after),
        diff_hash=diff_hash(diff),
        provenance={
            "repo": source,
            "branch": rev,
            "sha": stat.sha,
            "filters": {"max_files": options.max_files, "max_functions": options.max_functions},
        },
    )
