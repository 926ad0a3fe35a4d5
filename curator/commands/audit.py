"""``curator audit draw|report``: precision audits of what a labeler marked positive."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.text import Text

from annotation.audit import AuditDraw, AuditReport, audit_report, draw_audit
from annotation.sampling import SamplingError
from annotation.sets import SetError
from curator.cli_context import open_db
from curator.commands.options import (
    MAX_VOTES_PER_ITEM,
    DbOption,
    JsonOption,
    KindOption,
    RuleOption,
    check_new_set_name,
    finite,
    given_name,
    split_fields,
)
from curator.console import out
from curator.presentation.cli_output import EXIT_USAGE, fail, print_json
from curator.presentation.format import number, percent
from curator.presentation.tables import table
from curator.presentation.text import one_line

app = typer.Typer(help="Audit the precision of a labeler's positives.", no_args_is_help=True)


@app.command("draw")
def draw(
    name: Annotated[
        str,
        typer.Argument(
            callback=check_new_set_name, help="Name of the audit set, e.g. audit-2026-11."
        ),
    ],
    labeler: Annotated[
        str,
        typer.Option(
            "--from-labeler",
            parser=given_name,
            help="The labeler audited, e.g. student@3 or keyword@1.",
        ),
    ],
    positive: Annotated[
        bool,
        typer.Option("--positive", help="Audit its positives (perf for commits); the default."),
    ] = False,
    label: Annotated[
        str | None, typer.Option("--label", help="Audit another label instead.")
    ] = None,
    kind: KindOption = "commit",
    confidence: Annotated[
        float, typer.Option("--confidence", min=0.5, max=0.999, callback=finite)
    ] = 0.95,
    margin: Annotated[float, typer.Option("--margin", min=0.001, max=0.5, callback=finite)] = 0.05,
    stratify: Annotated[
        str | None,
        typer.Option("--stratify", help="Comma-separated strata: language, stars, repo, keyword."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    size: Annotated[
        int | None,
        typer.Option("--size", min=1, help="Sample this many instead of Cochran's size."),
    ] = None,
    votes_per_item: Annotated[
        int, typer.Option("--votes-per-item", min=1, max=MAX_VOTES_PER_ITEM)
    ] = 1,
    from_set: Annotated[
        str | None, typer.Option("--from-set", help="Draw only from this set's items.")
    ] = None,
    unlabeled: Annotated[
        bool,
        typer.Option(
            "--unlabeled",
            help="Draw only items no one has voted on: the mined ones, not labeled data"
            " the labeler may have learned from.",
        ),
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Draw an audit sample (Cochran's size with finite-population correction)."""
    if positive and label:
        fail("--positive and --label exclude each other", EXIT_USAGE)
    with open_db(db, create=False) as store:
        try:
            result = draw_audit(
                store,
                name,
                labeler,
                kind,
                label,
                confidence,
                margin,
                split_fields(stratify),
                seed,
                size,
                votes_per_item,
                from_set,
                unlabeled,
            )
        except (SetError, SamplingError, ValueError) as exc:
            fail(str(exc))
    _print_drawn(name, result, as_json)


def _print_drawn(name: str, result: AuditDraw, as_json: bool) -> None:
    audit = result.set_row.params["audit"]
    confidence, margin = audit["confidence"], audit["margin"]
    given = audit["size_from"] == "given"
    if as_json:
        print_json(
            {
                "set": name,
                "labeler": audit["labeler"],
                "label": audit["label"],
                "items": result.size,
                "population": result.population,
                "confidence": confidence,
                "margin": margin,
                "allocation": dict(result.allocation),
            }
        )
        return
    out.print(
        Text.assemble(
            "created audit set ",
            one_line(name),
            f": {result.size} of {result.population} items"
            f" {audit['labeler']} labeled {audit['label']!r}"
            f" ({'--size ' + str(result.size) + ': ' if given else ''}"
            f"{100 * confidence:g}% confidence, +/-{100 * margin:.3g}%)",
        )
    )
    if len(result.allocation) > 1:
        out.print(table("Items per stratum", ("stratum", "items"), list(result.allocation.items())))


@app.command("report")
def report(
    name: Annotated[str, typer.Argument(help="The audit set.")],
    rule: RuleOption = "majority",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Precision so far with its Wilson interval, overall and per stratum."""
    with open_db(db, create=False) as store:
        try:
            r = audit_report(store, name, rule)
        except SetError as exc:
            fail(str(exc))
    if as_json:
        print_json(_report_json(r))
        return
    level = f"{100 * r.confidence:g}%"
    out.print(
        Text.assemble(
            "audit ",
            one_line(r.name),
            f" of {r.labeler} {r.label!r}: {r.overall.judged} of"
            f" {r.size} judged ({r.pending} pending, {r.conflicts} conflicts),"
            f" population {r.population}",
        )
    )
    rows = [
        (
            "all",
            r.overall.judged,
            r.overall.correct,
            number(r.overall.value),
            f"{percent(r.overall.low)} - {percent(r.overall.high)}",
        )
    ]
    if len(r.strata) > 1:
        rows += [
            (k, p.judged, p.correct, number(p.value), f"{percent(p.low)} - {percent(p.high)}")
            for k, p in r.strata.items()
        ]
    out.print(
        table("Precision", ("stratum", "judged", "correct", "precision", f"Wilson {level}"), rows)
    )


def _report_json(r: AuditReport) -> dict[str, Any]:
    return {
        "set": r.name,
        "labeler": r.labeler,
        "label": r.label,
        "population": r.population,
        "sample": r.size,
        "confidence": r.confidence,
        "judged": r.overall.judged,
        "correct": r.overall.correct,
        "precision": r.overall.value,
        "wilson_low": r.overall.low,
        "wilson_high": r.overall.high,
        "pending": r.pending,
        "conflicts": r.conflicts,
        "strata": {
            k: {
                "judged": p.judged,
                "correct": p.correct,
                "precision": p.value,
                "wilson_low": p.low,
                "wilson_high": p.high,
            }
            for k, p in r.strata.items()
        },
    }
