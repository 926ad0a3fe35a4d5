"""``curator adjudicate``: final labels of a set, and the conflicts left to settle."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from annotation.adjudication import (
    Decision,
    Drift,
    annotator_drift,
    decisions_for_set,
    summary,
)
from curator.cli_context import open_db
from curator.commands.options import DbOption, RuleOption
from curator.console import out
from curator.presentation.cli_output import load_set, print_json
from curator.presentation.format import number
from curator.presentation.tables import table
from store.items import item_summaries


def adjudicate(
    set_name: Annotated[str, typer.Argument(help="The set.")],
    rule: RuleOption = "majority",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (every item's decision).")
    ] = False,
    db: DbOption = None,
) -> None:
    """Final labels: unanimous and majority items settle; ties and skips are conflicts,
    settled by an adjudicator's vote (`curator vote ITEM LABEL --adjudicate`)."""
    with open_db(db, create=False) as store:
        s = load_set(store, set_name)
        decisions = decisions_for_set(store, s, rule)
        conflicts = [d for d in decisions if d.status == "conflict"]
        titles = item_summaries(store, [d.item_id for d in conflicts])
    counts = summary(decisions)
    drift = annotator_drift(decisions)
    if as_json:
        print_json(_decisions_json(s.name, rule, counts, decisions, drift))
        return
    out.print(table(f"Decisions ({rule})", ("status", "items"), list(counts.items())))
    if conflicts:
        out.print(
            table(
                "Conflicts (settle with: curator vote #ID LABEL --adjudicate --annotator NAME)",
                ("item", "reason", "votes", "notes", "title"),
                [
                    (
                        f"#{d.item_id}",
                        d.reason or "",
                        ", ".join(f"{a}={v}" for a, v in sorted(d.votes.items())),
                        "; ".join(f"{a}: {n}" for a, n in sorted(d.notes.items())),
                        titles.get(d.item_id, {}).get("title", ""),
                    )
                    for d in conflicts
                ],
            )
        )
    if drift:
        out.print(
            table(
                "Annotators against the final labels",
                ("annotator", "items", "agree", "kappa"),
                [(x.annotator, x.items, number(x.rate), number(x.kappa)) for x in drift],
            )
        )


def _decisions_json(
    set_name: str, rule: str, counts: dict[str, int], decisions: list[Decision], drift: list[Drift]
) -> dict[str, Any]:
    return {
        "set": set_name,
        "rule": rule,
        "summary": counts,
        "items": [
            {
                "item_id": d.item_id,
                "status": d.status,
                "label": d.label,
                "reason": d.reason,
                "votes": d.votes,
                "adjudicated_by": d.adjudicated_by,
            }
            for d in decisions
        ],
        "annotators": [
            {
                "annotator": x.annotator,
                "items": x.items,
                "agree_with_final": x.rate,
                "cohen_kappa_with_final": x.kappa,
            }
            for x in drift
        ],
    }
