"""A label as another tool or a spreadsheet spells it, read as the set's own label."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.labels import SKIP


def label_named(text: str, labels: Sequence[str]) -> str | None:
    """The set's label (or skip) a tool's text names: as written, else the one label
    equal to it without case (``Perf`` is ``perf``, unless the set also has ``PERF``);
    spaces around it do not count."""
    every = [*labels, SKIP]
    wanted = text.strip()
    if wanted in every:
        return wanted
    found = [label for label in every if label.lower() == wanted.lower()]
    return found[0] if len(found) == 1 else None
