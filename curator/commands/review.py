"""``curator agree``, ``curator adjudicate`` and ``curator eval``: what the votes say."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from annotation.adjudication import RULES, annotator_drift, decisions_for_set, summary
from annotation.agreement import landis_koch
from annotation.set_reports import agreement_for_set, evaluate_on_set
from annotation.sets import SetError
from curator.commands import eval_table
from curator.commands.options import DbOption, open_db
from curator.commands.output import fail, load_set, number, print_json, table
from curator.console import out
from curator.safe_text import one_line
from engines.files import write_text_atomically
from store.items import item_summaries


def _rule(value: str) -> str:
    if value not in RULES:
        raise typer.BadParameter(f"{value!r}: use {' or '.join(RULES)}")
    return value


RuleOption = typer.Option(
    "majority", "--rule", callback=_rule, help="majority (ties are conflicts) or unanimous."
)


def agree(
    set_name: str = typer.Argument(..., help="The set."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    db: Path | None = DbOption,
) -> None:
    """Agreement: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha, per label."""
    with open_db(db) as store:
        s = load_set(store, set_name)
        report = agreement_for_set(store, s)
    data = report.as_json()
    if as_json:
        print_json({"set": s.name, **data})
        return
    out.print(
        Text.assemble(
            "set ",
            one_line(s.name),
            f": {report.items} items, {report.items_coded} coded,"
            f" {report.items_multi_coded} coded by two or more, {len(report.raters)} annotators,"
            f" {report.votes} votes (skips left out)",
        )
    )
    out.print(
        table(
            "Agreement",
            ("figure", "value", "reading", "items"),
            [
                ("observed agreement", number(report.observed_agreement), "", report.fleiss.items),
                (
                    "Fleiss' kappa",
                    number(report.fleiss.kappa),
                    landis_koch(report.fleiss.kappa),
                    report.fleiss.items,
                ),
                (
                    "Krippendorff's alpha (nominal)",
                    number(report.krippendorff_alpha),
                    landis_koch(report.krippendorff_alpha),
                    report.items_coded,
                ),
                (
                    "category alpha (top level)",
                    number(report.category_alpha),
                    landis_koch(report.category_alpha),
                    "",
                ),
            ],
        )
    )
    if report.pairs:
        out.print(
            table(
                "Cohen's kappa per pair",
                ("annotator", "annotator", "items", "observed", "kappa", "reading"),
                [
                    (p.rater_a, p.rater_b, p.items, number(p.observed), number(p.kappa), p.reading)
                    for p in report.pairs
                ],
            )
        )
    per_label = data["per_label"]
    assert isinstance(per_label, dict)
    if per_label:
        out.print(
            table(
                "Per label",
                ("label", "votes", "Fleiss kappa", "specific agreement"),
                [
                    (label, v["votes"], number(v["fleiss_kappa"]), number(v["specific_agreement"]))
                    for label, v in per_label.items()
                ],
            )
        )


def adjudicate(
    set_name: str = typer.Argument(..., help="The set."),
    rule: str = RuleOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON (every item's decision)."),
    db: Path | None = DbOption,
) -> None:
    """Final labels: unanimous and majority items settle; ties and skips are conflicts,
    settled by an adjudicator's vote (`curator vote ITEM LABEL --adjudicate`)."""
    with open_db(db) as store:
        s = load_set(store, set_name)
        decisions = decisions_for_set(store, s, rule)
        conflicts = [d for d in decisions if d.status == "conflict"]
        titles = item_summaries(store, [d.item_id for d in conflicts])
    counts = summary(decisions)
    drift = annotator_drift(decisions)
    if as_json:
        print_json(
            {
                "set": s.name,
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
        )
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


def eval_command(
    set_name: str = typer.Argument(..., help="A set with adjudicated (final) labels."),
    labelers: list[str] = typer.Option(
        ..., "--labeler", help="Labeler to score, e.g. keyword@1 or student@latest (repeatable)."
    ),
    rule: str = RuleOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    out_file: Path | None = typer.Option(
        None, "--out", metavar="FILE.json", help="Also write the scores as JSON to this file."
    ),
    markdown_file: Path | None = typer.Option(
        None, "--markdown", metavar="FILE.md", help="Also write the table as Markdown."
    ),
    confusion: bool = typer.Option(
        True, "--confusion/--no-confusion", help="Print each labeler's confusion matrix."
    ),
    db: Path | None = DbOption,
) -> None:
    """One table comparing labelers: precision, recall, F1 and FPR per class, accuracy;
    then each labeler's confusion matrix."""
    with open_db(db) as store:
        s = load_set(store, set_name)
        try:
            results = [evaluate_on_set(store, s, lb, rule) for lb in labelers]
        except SetError as exc:
            fail(str(exc))
    if any(r.items == 0 for r in results):
        fail(f"set {s.name!r} has no settled items yet: vote, then `curator adjudicate`")
    data = eval_table.as_json(s.name, rule, results)
    try:
        if out_file is not None:
            eval_table.write_json(out_file, data)
        if markdown_file is not None:
            text = eval_table.markdown(s.name, rule, results[0].items, results, s.labels)
            write_text_atomically(markdown_file, text)
    except OSError as exc:
        fail(f"cannot write {exc.filename}: {exc.strerror}")
    if as_json:
        print_json(data)
        return
    out.print(
        eval_table.rich_table(
            f"Evaluation on {s.name} ({results[0].items} items with a final label, rule {rule})",
            results,
            s.labels,
        )
    )
    if not confusion:
        return
    for r in results:
        columns = list(next(iter(r.confusion.values()), {}).keys())
        out.print(
            table(
                f"Confusion matrix of {r.labeler} (rows: final label, columns: predicted)",
                ("final", *columns),
                [(t, *(r.confusion[t][p] for p in columns)) for t in r.confusion],
            )
        )
