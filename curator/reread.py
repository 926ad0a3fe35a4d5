"""Bringing the stored model input of commits to what this Curator writes.

A commit's ``model_input`` (message || diff, the text the student and the teacher
read) is written once, when the commit is mined or imported. When the way it is made
changes (a diff layout read in git's, the trailer block left out, the neutral ``index``
line of mined diffs), commits stored before keep the old text, which the models score
lower. :func:`reread_inputs` writes it again from the stored message, diff and file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engines.commits.representation import DEFAULT_TOKEN_BUDGET, model_input
from store.connection import Store
from store.model_inputs import (
    commit_texts_of,
    count_commits,
    predicted_items,
    stored_commit_texts,
    write_model_inputs,
)

SAMPLE = 50
"""Commits :func:`stale_inputs_warning` makes again to tell whether a set needs a reread."""

RereadProgress = Callable[[int, int], None]
"""Called as ``progress(commits examined, commits in all)`` after each chunk."""


@dataclass
class RereadSummary:
    """What a reread found: commits examined, those whose text changed (written unless
    it was a dry run), and how many of those a model has already labeled."""

    examined: int = 0
    changed: int = 0
    predicted: int = 0
    written: bool = False
    changed_ids: list[int] = field(default_factory=list, repr=False)


def reread_inputs(
    store: Store,
    budget: int = DEFAULT_TOKEN_BUDGET,
    source: str | None = None,
    dry_run: bool = False,
    progress: RereadProgress | None = None,
    chunk: int = 500,
) -> RereadSummary:
    """Make every stored commit's model input again (of ``source`` only, when given)
    with ``budget`` tokens, and store the ones that differ, one transaction per chunk
    (a run stopped half-way keeps what it wrote; running it again finishes the rest).
    With ``dry_run`` nothing is written."""
    total = count_commits(store, source)
    summary = RereadSummary(written=not dry_run)
    for rows in stored_commit_texts(store, source, chunk):
        changed = []
        for row in rows:
            text = model_input(row.message, row.diff, budget, path=row.path)
            if text != row.model_input:
                changed.append((row.item_id, text))
        if changed and not dry_run:
            write_model_inputs(store, changed)
        summary.examined += len(rows)
        summary.changed += len(changed)
        summary.changed_ids.extend(item_id for item_id, _ in changed)
        if progress is not None:
            progress(summary.examined, total)
    summary.predicted = predicted_items(store, summary.changed_ids)
    return summary


def stale_inputs_warning(store: Store, item_ids: Sequence[int]) -> str | None:
    """One line when some of ``item_ids`` (up to :data:`SAMPLE` of them, spread over the
    list) hold a model input other than one this Curator makes, at any token budget;
    None when all agree. ``curator predict`` prints it for the labelers that read it."""
    step = max(1, len(item_ids) // SAMPLE)
    rows = commit_texts_of(store, list(item_ids)[::step][:SAMPLE])
    # Whatever budget a commit was stored with, the text this Curator makes for it is
    # the start of the uncut one.
    stale = sum(
        not model_input(r.message, r.diff, 0, path=r.path).startswith(r.model_input) for r in rows
    )
    if not stale:
        return None
    return (
        f"{stale} of {len(rows)} commits checked hold a model input made by an earlier"
        " Curator, which the models score lower: `curator mine reread` writes it again"
    )
