"""``curator audit draw|report``: precision audits of what a labeler marked positive."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from annotation.audit import audit_report, draw_audit
from annotation.sampling import SamplingError
from annotation.sets import SetError
from curator.commands.options import DbOption, open_db
from curator.commands.output import EXIT_USAGE, fail, number, percent, print_json, table
from curator.commands.review import RuleOption
from curator.commands.sets import KIND_HELP, _fields, _kind
from curator.console import out
from curator.safe_text import one_line

app = typer.Typer(help="Audit the precision of a labeler's positives.", no_args_is_help=True)


@app.command("draw")
def draw(
    name: str = typer.Argument(..., help="Name of the audit set, e.g. audit-2026-11."),
    labeler: str = typer.Option(
        ..., "--from-labeler", help="The labeler audited, e.g. student@3 or keyword@1."
    ),
    positive: bool = typer.Option(
        False, "--positive", help="Audit its positives (perf for commits); the default."
    ),
    label: str | None = typer.Option(None, "--label", help="Audit another label instead."),
    kind: str = typer.Option("commit", "--kind", callback=_kind, help=KIND_HELP),
    confidence: float = typer.Option(0.95, "--confidence", min=0.5, max=0.999),
    margin: float = typer.Option(0.05, "--margin", min=0.001, max=0.5),
    stratify: str | None = typer.Option(
        None, "--stratify", help="Comma-separated strata: language, stars, repo, keyword."
    ),
    seed: int = typer.Option(0, "--seed"),
    size: int | None = typer.Option(
        None, "--size", min=1, help="Sample this many instead of Cochran's size."
    ),
    votes_per_item: int = typer.Option(1, "--votes-per-item", min=1),
    db: Path | None = DbOption,
) -> None:
    """Draw an audit sample (Cochran's size with finite-population correction)."""
    if positive and label:
        fail("--positive and --label exclude each other", EXIT_USAGE)
    with open_db(db) as store:
        try:
            result = draw_audit(
                store,
                name,
                labeler,
                kind,
                label,
                confidence,
                margin,
                _fields(stratify),
                seed,
                size,
                votes_per_item,
            )
        except (SetError, SamplingError, ValueError) as exc:
            fail(str(exc))
    audit = result.set_row.params["audit"]
    out.print(
        Text.assemble(
            "created audit set ",
            one_line(name),
            f": {result.size} of {result.population} items"
            f" {audit['labeler']} labeled {audit['label']!r}"
            f" ({100 * confidence:g}% confidence, +/-{100 * margin:g}%)",
        )
    )
    if len(result.allocation) > 1:
        out.print(table("Items per stratum", ("stratum", "items"), list(result.allocation.items())))


@app.command("report")
def report(
    name: str = typer.Argument(..., help="The audit set."),
    rule: str = RuleOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    db: Path | None = DbOption,
) -> None:
    """Precision so far with its Wilson interval, overall and per stratum."""
    with open_db(db) as store:
        try:
            r = audit_report(store, name, rule)
        except SetError as exc:
            fail(str(exc))
    if as_json:
        print_json(
            {
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
        )
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
