"""``curator models``: the trained labelers in the store, which version of each family is
*current* (the one ``FAMILY@current`` names), promoting a version, and the promotion history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from curator.cli_context import annotator_or_login, open_db
from curator.commands.options import AnnotatorOption, DbOption, JsonOption
from curator.console import out
from curator.models_report import (
    combiner_rows,
    label_shares,
    model_report,
    skipped_text,
)
from curator.presentation.cli_output import EXIT_USAGE, fail, number, print_json, table, warn
from curator.presentation.model_scores import below_the_rules_lines, scores_table
from curator.presentation.text import one_line
from curator.training import perf_f1, train_total
from engines.labelers.registry import (
    TRAINED_FAMILIES,
    LabelerError,
    model_missing,
    resolve_model,
)
from store import Store
from store.models import (
    ModelRow,
    Promotion,
    current_model,
    list_models,
    promote_model,
    promotions,
)

app = typer.Typer(
    help="Trained labelers: list the versions, show one (threshold, calibration), promote one"
    " to current, show who promoted what.",
    no_args_is_help=True,
)


def _family(value: str | None) -> str | None:
    if value is not None and value not in TRAINED_FAMILIES:
        raise typer.BadParameter(f"{value!r} is not a family; use {', '.join(TRAINED_FAMILIES)}")
    return value


FamilyOption = Annotated[
    str | None,
    typer.Option(
        "--family", callback=_family, help=f"Only this family: {', '.join(TRAINED_FAMILIES)}."
    ),
]


def _when(stamp: str) -> str:
    """``2026-11-23T17:38:06.123456+00:00`` -> ``2026-11-23 17:38`` (UTC)."""
    return stamp[:16].replace("T", " ")


def _short_base(base: str) -> str:
    """``packaged MiniLM`` for the default encoder, a local base by its folder name
    (``tfidf`` stays as it is)."""
    from engines.labelers.student.infer import default_base

    if base == default_base():
        return "packaged MiniLM"
    return Path(base).name if "/" in base or "\\" in base else base


def _set_of(metrics: dict[str, Any], part: str) -> str | None:
    scores = metrics.get(part)
    return scores.get("set") if isinstance(scores, dict) else None


def _current_names(store: Store, rows: list[ModelRow]) -> set[str]:
    found = (current_model(store, family) for family in sorted({r.family for r in rows}))
    return {row.name for row in found if row is not None}


@app.command("list")
def list_command(
    family: FamilyOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Every registered model, oldest first: base, training size, dev and eval F1(perf);
    * marks each family's current version (what FAMILY@current names)."""
    with open_db(db, create=False) as store:
        rows = list_models(store, family)
        current = _current_names(store, rows)
    data = [
        {
            "name": r.name,
            "family": r.family,
            "version": r.version,
            "current": r.name in current,
            "base": r.base,
            "created_at": r.created_at,
            "train_total": train_total(r),
            "dev_set": _set_of(r.metrics, "dev"),
            "dev_f1": perf_f1(r.metrics.get("dev")),
            "eval_set": _set_of(r.metrics, "eval"),
            "eval_f1": perf_f1(r.metrics.get("eval")),
            "path": r.path,
            "missing": model_missing(r),
        }
        for r in rows
    ]
    if as_json:
        print_json(data)
        return
    if not data:
        which = f"no {family} models" if family else "no models"
        out.print(f"{which} yet: train one with `curator train`")
        return
    for d in data:
        if d["missing"]:
            warn(_missing_text(d["name"], d["path"]))
    out.print(
        table(
            "Models",
            ("", "model", "base", "created (UTC)", "trained on", "dev F1(perf)", "eval F1(perf)"),
            [
                (
                    "*" if d["current"] else "",
                    d["name"],
                    _short_base(d["base"]),
                    _when(d["created_at"]),
                    "-" if d["train_total"] is None else d["train_total"],
                    number(d["dev_f1"]),
                    number(d["eval_f1"]),
                )
                for d in data
            ],
        )
    )
    if current:
        out.print("* current: the version FAMILY@current names")
    else:
        out.print("no version is current yet: `curator models promote FAMILY@N`")


def _missing_text(name: str, path: str | None) -> str:
    return (
        f"{name}: its directory {path!r} is missing: it cannot predict, be promoted or be"
        " warm-started from (its stored predictions still score)"
    )


def _resolve(store: Store, name: str, current: bool = False, files: bool = True) -> ModelRow:
    """``family@N`` or ``family@latest`` (and ``family@current`` when ``current``) to its
    registered model, or exit with one line (also when ``files`` and its directory is
    gone)."""
    family, sep, version = name.rpartition("@")
    named = version in ("latest", "current") if current else version == "latest"
    if not sep or not family or not (named or version.isdecimal()):
        also = ", FAMILY@latest or FAMILY@current" if current else " or FAMILY@latest"
        fail(f"{name!r}: give FAMILY@N{also}, e.g. student@3", EXIT_USAGE)
    try:
        return resolve_model(store, name, files)
    except LabelerError as exc:
        fail(str(exc))  # resolve_model names the registered versions


@app.command("promote")
def promote_command(
    name: Annotated[
        str, typer.Argument(help="The version to make current: FAMILY@N or FAMILY@latest.")
    ],
    by: AnnotatorOption = None,
    note: Annotated[
        str | None, typer.Option("--note", help="Why, e.g. 'best dev F1 so far'.")
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Make a version its family's current one: FAMILY@current then names it."""
    who = annotator_or_login(by)
    with open_db(db, create=False) as store:
        row = _resolve(store, name)
        try:
            done = promote_model(
                store, row.name, who, note.strip() if note and note.strip() else None
            )
        except KeyError:
            fail(f"no model {row.name!r} is registered")
    _print_promoted(row, done, as_json)


def _print_promoted(row: ModelRow, done: Promotion | None, as_json: bool) -> None:
    if as_json:
        recorded = _history([done])[0] if done else None
        print_json(
            {
                "model": row.name,
                "family": row.family,
                "promoted": done is not None,
                **(recorded or {}),
            }
        )
        return
    if done is None:
        out.print(Text(f"{row.name} is already the current {row.family}; nothing recorded"))
        return
    was = f"was {done.replaced}" if done.replaced else f"the first {row.family} promoted"
    out.print(Text(f"{row.name} is now the current {row.family} ({was})"))


def _history(rows: list[Promotion]) -> list[dict[str, Any]]:
    return [
        {
            "family": p.family,
            "model": p.model,
            "previous": p.replaced,
            "promoted_by": p.promoted_by,
            "note": p.note,
            "promoted_at": p.promoted_at,
        }
        for p in rows
    ]


@app.command("history")
def history_command(
    family: FamilyOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Every promotion, oldest first: when, which version replaced which, by whom, why."""
    with open_db(db, create=False) as store:
        data = _history(promotions(store, family))
    if as_json:
        print_json(data)
        return
    if not data:
        out.print("no promotions yet: `curator models promote FAMILY@N`")
        return
    out.print(
        table(
            "Promotions",
            ("promoted (UTC)", "model", "replaced", "by", "note"),
            [
                (
                    _when(d["promoted_at"]),
                    d["model"],
                    d["previous"] or "-",
                    d["promoted_by"],
                    one_line(d["note"] or "", 80),
                )
                for d in data
            ],
        )
    )


@app.command("show")
def show_command(
    name: Annotated[
        str, typer.Argument(help="FAMILY@N, FAMILY@latest or FAMILY@current, e.g. student@2.")
    ],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """One model: base, training data, the input it learned from, its decision threshold
    and how it was chosen, dev/eval scores, calibration error (ECE) and reliability."""
    with open_db(db, create=False) as store:
        row = _resolve(store, name, current=True, files=False)  # what the store recorded
        data = model_report(row, row.name in _current_names(store, [row]))
    data["missing"] = model_missing(row)
    if as_json:
        print_json(data)
        return
    if data["missing"]:
        warn(_missing_text(row.name, row.path))
    mark = " (current)" if data["current"] else ""
    out.print(Text(f"{data['name']}{mark}: {_short_base(data['base'])}, {data['path']}"))
    if data["ensemble"] is not None:
        _show_ensemble(data)
        return
    out.print(Text(f"created {_when(data['created_at'])} UTC; {_sources(data)}"))
    out.print(Text(f"input: {data['input_text']}"))
    out.print(Text(f"rule floor: {data['rule_floor_text']}"))
    if data["prior_text"]:
        out.print(Text(f"started from: {data['prior_text']}"))
    learned = (data["counts"] or {}).get("prior_learned")
    if learned:
        out.print(Text(skipped_text(learned)))
    out.print(Text(_decision_line(data)))
    for key in ("diff_decision_text", "diff_reader_text"):
        if data.get(key):
            out.print(Text(data[key]))
    if data["scores"]:
        out.print(_scores_table(data))
        for line in below_the_rules_lines(data["scores"]):
            out.print(line)
    decision = data["decision"]
    if decision and decision.get("reliability"):
        out.print(_reliability_table(decision))


def _show_ensemble(data: dict[str, Any]) -> None:
    """An ensemble: its members, the combiner chosen, its threshold, the candidates it
    was chosen from and its scores."""
    ens = data["ensemble"]
    if ens["error"]:
        warn(f"{ens['error']}: members and combiner as the store recorded them")
    members = ", ".join(m["name"] for m in ens["members"]) or "not recorded"
    dev = data["sources"]["dev"]
    if ens["dev_items"] is not None:
        folds = f"{ens['folds']}-fold CV" if ens["folds"] else "CV"
        fitted = f"combiner chosen by {folds} on {dev} ({ens['dev_items']} items)"
    elif ens["unlabeled_items"] is not None:
        fitted = f"label model fitted on {ens['unlabeled_items']} unlabeled commits (no labels)"
    else:
        fitted = "how the combiner was chosen is not recorded"
    out.print(Text(f"created {_when(data['created_at'])} UTC; members: {members}; {fitted}"))
    out.print(Text(f"input: {data['input_text']}"))
    how = ens["combiner_text"] or f"{ens['chosen'] or 'not recorded'}"
    cut = "not recorded" if ens["threshold"] is None else f"{ens['threshold']:.4g}"
    out.print(Text(f"decision: perf iff P(perf) > {cut}; combiner: {how}"))
    rows = combiner_rows(ens["cv_f1"], ens["chosen"])
    if rows:
        shown = [(name, number(f1), mark) for name, f1, mark in rows]
        out.print(
            table(
                f"combiner candidates (cross-validated F1(perf) on {dev})",
                ("candidate", "CV F1(perf)", ""),
                shown,
            )
        )
    if data["scores"]:
        out.print(_scores_table(data))


def _sources(data: dict[str, Any]) -> str:
    src = data["sources"]
    parts = []
    if src["teacher"]:
        parts.append(f"teacher {src['teacher']} (tau {src['tau']:g})")
    if src["votes"]:
        parts.append(f"votes of {', '.join(src['votes'])}")
    counts = data["counts"] if isinstance(data["counts"], dict) else {}
    if data["train_total"] is None:  # registered by hand, or by a version that kept none
        return f"trained on {' and '.join(parts) or 'what was not recorded'}"
    shares = label_shares(counts.get("train"))
    trained = f"trained on {data['train_total']:,} examples" + (f" ({shares})" if shares else "")
    held = counts.get("held_out")
    if isinstance(held, dict):
        fraction = held.get("fraction")
        share = f"{fraction:.0%} " if isinstance(fraction, int | float) else ""
        shares = label_shares(held)
        trained += f", {share}held out" + (f" ({shares})" if shares else "")
    return f"{trained} from {' and '.join(parts) or 'nothing recorded'}"


def _decision_line(data: dict[str, Any]) -> str:
    decision = data["decision"]
    if not decision:
        return "decision: perf iff P(perf) >= 0.5 (trained before thresholds were chosen)"
    # None: kept from elsewhere or the default, so no objective was aimed at here
    met = ", objective not reached" if decision.get("objective_met") is False else ""
    if decision.get("near_tie"):
        met += f", F1 within {decision['near_tie']:g} of the best counted as tied"
    line = (
        f"decision: perf iff P(perf) >= {decision['threshold']:.4g}"
        f" (objective {decision['objective']}{met}, chosen on {decision['chosen_on']})\n"
        f"there, {decision['n']} items: P(perf) {number(decision.get('precision'))}"
        f" R(perf) {number(decision.get('recall'))} F1(perf) {number(decision.get('f1'))},"
        f" ECE {number(decision.get('ece'))}"
    )
    floor = decision.get("floor")
    if isinstance(floor, dict):
        line += (
            f"\nof them, the rule floor decided {floor['n']} (P(perf) 1.0; observed perf"
            f" rate {number(floor.get('observed'))}); the model's own P(perf) on the other"
            f" {floor['model_n']}: ECE {number(floor.get('model_ece'))}"
        )
    return line


def _scores_table(data: dict[str, Any]) -> Any:
    return scores_table(f"{data['name']} scores (at its threshold)", data["scores"])


def _reliability_table(decision: dict[str, Any]) -> Any:
    return table(
        f"Reliability on {decision['chosen_on']} (ECE {number(decision.get('ece'))})",
        ("P(perf) bin", "items", "mean P(perf)", "observed perf rate"),
        [
            (
                f"{r['low']:.1f}-{r['high']:.1f}",
                r["n"],
                number(r["mean_p"]),
                number(r["observed"]),
            )
            for r in decision["reliability"]
        ],
    )
