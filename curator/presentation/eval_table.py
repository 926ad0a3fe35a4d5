"""The comparison table of ``curator eval``: one row per labeler, precision, recall, F1
and FPR per class plus accuracy, as a rich table, as Markdown and as JSON files; and,
with ``--by``, one row per repository or language with each labeler's F1 there."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.evaluation import ClassScores, Evaluation
from curator.presentation.format import MISSING, number
from curator.presentation.tables import table
from curator.presentation.text import flat

FIGURES = ("P", "R", "F1", "FPR")


def class_figures(c: ClassScores | None) -> list[str]:
    """P, R, F1 and FPR of one class; the missing glyph for a class never scored."""
    if c is None:
        return [MISSING] * len(FIGURES)
    return [number(c.precision), number(c.recall), number(c.f1), number(c.fpr)]


def header(labels: Sequence[str]) -> list[str]:
    cols = ["labeler", "items"]
    for label in labels:
        cols += [f"{label} {figure}" for figure in FIGURES]
    return [*cols, "accuracy", "missing"]


def rows(results: Sequence[Evaluation], labels: Sequence[str]) -> list[list[Any]]:
    found = []
    for r in results:
        by_label = {c.label: c for c in r.classes}
        row: list[Any] = [r.labeler, r.predicted]
        for label in labels:
            row += class_figures(by_label.get(label))
        found.append([*row, number(r.accuracy), r.missing])
    return found


def rich_table(title: str, results: Sequence[Evaluation], labels: Sequence[str]):  # type: ignore[no-untyped-def]
    """For the terminal: a row per labeler and class, so the table stays readable in 80
    columns however many labels there are (the files keep one row per labeler). Items a
    labeler never labeled get a column only when there are some."""
    show_missing = any(r.missing for r in results)
    long_rows: list[list[Any]] = []
    for r in results:
        by_label = {c.label: c for c in r.classes}
        for i, label in enumerate(labels):
            figures = class_figures(by_label.get(label))
            first = i == 0
            row = [r.labeler if first else "", label, *figures, number(r.accuracy) if first else ""]
            if show_missing:
                row.append(str(r.missing) if first else "")
            long_rows.append(row)
    head = ["labeler", "class", *FIGURES, "accuracy"] + (["missing"] if show_missing else [])
    return table(title, head, long_rows)


def _cell(value: object) -> str:
    return flat(str(value)).replace("\\", "\\\\").replace("|", "\\|")


def markdown(
    set_name: str, rule: str, items: int, results: Sequence[Evaluation], labels: Sequence[str]
) -> str:
    """A GitHub-flavoured Markdown table with a one-line caption."""
    caption = f"Evaluation on `{_cell(set_name)}` ({items} items with a final label, rule {rule})."
    return _markdown_table(caption, header(labels), rows(results, labels))


def _markdown_table(caption: str, head: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    """A caption line, then a table whose first column is left-aligned and the rest right."""
    lines = [
        caption,
        "",
        "| " + " | ".join(_cell(h) for h in head) + " |",
        "|" + "|".join(["---", *["---:"] * (len(head) - 1)]) + "|",
    ]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in body]
    return "\n".join(lines) + "\n"


def as_json(set_name: str, rule: str, results: Sequence[Evaluation]) -> dict[str, Any]:
    return {"set": set_name, "rule": rule, "labelers": [r.as_json() for r in results]}


def json_text(data: dict[str, Any]) -> str:
    """What ``eval --out`` writes."""
    return json.dumps(data, indent=2, ensure_ascii=True) + "\n"


GroupScores = Mapping[str, Mapping[str, Evaluation]]
"""Labeler name -> group name -> its evaluation on the group's items."""


def group_header(labels: Sequence[str], labelers: Sequence[str]) -> list[str]:
    """Group, items, how many are of the set's first label, then each labeler (whose
    column holds its F1 on that label; the title says so)."""
    return ["group", "items", labels[0], *labelers]


def group_rows(scores: GroupScores, labels: Sequence[str]) -> list[list[Any]]:
    """One row per group, in name order; a labeler that predicted none of a group's items
    gets the missing glyph there."""
    first = labels[0]
    found = []
    for group in _group_names(scores):
        evaluations = [by_group.get(group) for by_group in scores.values()]
        known = next(e for e in evaluations if e is not None)
        support = sum(known.confusion.get(first, {}).values())
        row: list[Any] = [group, known.items, support if known.predicted else MISSING]
        for e in evaluations:
            c = None if e is None or not e.predicted else {x.label: x for x in e.classes}[first]
            row.append(MISSING if c is None else number(c.f1))
        found.append(row)
    return found


def group_table(title: str, scores: GroupScores, labels: Sequence[str]):  # type: ignore[no-untyped-def]
    return table(title, group_header(labels, list(scores)), group_rows(scores, labels))


def group_markdown(by: str, scores: GroupScores, labels: Sequence[str]) -> str:
    caption = f"By {_cell(by)}: {_cell(labels[0])} F1 on each group's items."
    return _markdown_table(caption, group_header(labels, list(scores)), group_rows(scores, labels))


def _group_names(scores: GroupScores) -> list[str]:
    return sorted({group for by_group in scores.values() for group in by_group})


def groups_json(by: str, scores: GroupScores) -> dict[str, Any]:
    groups = _group_names(scores)
    return {
        "field": by,
        "groups": {
            group: [by_group[group].as_json() for by_group in scores.values() if group in by_group]
            for group in groups
        },
    }
