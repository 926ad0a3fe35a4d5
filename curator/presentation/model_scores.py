"""A trained model's scores beside the keyword rules' on the same items, as the CLI
prints them after ``curator train`` and in ``curator models show``."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from curator.models_report import below_the_rules
from curator.presentation.format import number
from curator.presentation.tables import table
from curator.presentation.text import labelled


def scores_table(title: str, rows: list[dict[str, Any]]) -> Table:
    """One row per labeler and part (see :func:`curator.models_report.score_rows`)."""
    return table(
        title,
        ("role", "labeler", "set", "items", "P(perf)", "R(perf)", "F1(perf)", "accuracy"),
        [
            (
                s["role"] if not s["rules"] else "",
                s["labeler"] + (" (same items)" if s["rules"] else ""),
                s["set"],
                "-" if s["items"] is None else s["items"],
                number(s["precision"]),
                number(s["recall"]),
                number(s["f1"]),
                number(s["accuracy"]),
            )
            for s in rows
        ],
    )


def below_the_rules_lines(rows: list[dict[str, Any]]) -> list[Text]:
    """A warning for each part where the keyword rules alone score a higher F1."""
    return [
        labelled(
            "warning",
            "yellow",
            f"{model['labeler']} is below {rules['labeler']} on {model['set']}"
            f" (F1 {number(model['f1'])} against {number(rules['f1'])}, {model['items']} items):"
            " the rules alone label these items better",
        )
        for model, rules in below_the_rules(rows)
    ]
